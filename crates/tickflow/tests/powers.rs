//! One context for every callback: each kind (timer, tick function, parallel tick function
//! through its deferred changes, tickable, latent completion, task) reaches the same three
//! services by the same names — `cx.clocks()`, `cx.timers()` and `cx.commands()` — and through
//! them sets, clears and pauses timers, starts latent actions, spawns tasks, adds and removes
//! tick functions and tickables, and removes an owner. Nothing is kept in the game context.
//! Each kind does all of it once; the test checks that every effect happened.

use std::collections::{BTreeMap, BTreeSet};

use tickflow::prelude::*;
use tickflow::{Tickable, TickableCx, TickableHandle, Timers};

#[derive(Default)]
struct Game {
    log: BTreeSet<String>,
    /// Handles of the tickables the callbacks added, so that each can remove itself.
    tickables: BTreeMap<&'static str, TickableHandle>,
}

/// A number of its own for each kind of callback.
fn id_of(who: &str) -> u64 {
    who.bytes().fold(0u64, |h, b| h * 31 + u64::from(b))
}

/// A tickable that logs once and removes itself.
struct Once(&'static str);
impl Tickable<Game> for Once {
    fn tick(&mut self, g: &mut Game, cx: &mut TickableCx<'_, Game>) {
        g.log.insert(format!("{}: tickable ran", self.0));
        let me = g
            .tickables
            .remove(self.0)
            .expect("added with its handle noted");
        assert!(cx.commands().tickables().remove(me));
    }
}

/// What callback `who` does with the timers: one fires, one is cleared, one paused, one
/// belongs to an owner that `use_commands` removes.
fn use_timers(who: &'static str, t: &mut Timers<Game>) {
    t.after(secs(0.1)).call(move |g: &mut Game, _| {
        g.log.insert(format!("{who}: timer fired"));
    });
    let cleared = t.after(secs(0.1)).call(move |g: &mut Game, _| {
        g.log.insert(format!("{who}: cleared timer fired"));
    });
    assert!(t.clear(cleared));
    let paused = t.after(secs(0.1)).call(move |g: &mut Game, _| {
        g.log.insert(format!("{who}: paused timer fired"));
    });
    assert!(t.pause(paused));
    t.after(secs(0.1))
        .owner(OwnerId::new(id_of(who)))
        .call(move |g: &mut Game, _| {
            g.log.insert(format!("{who}: removed owner's timer fired"));
        });
}

/// What callback `who` does with the clocks it saw and the commands.
fn use_commands(who: &'static str, clocks: Clocks, cmds: &Commands<Game>, g: &mut Game) {
    assert!(cmds.is_connected(), "{who}");
    assert!(
        clocks.frame() > 0 && clocks.delta(Domain::Real) > Span::ZERO,
        "{who}"
    );
    assert!(clocks.now(Domain::Game) >= Time::ZERO + clocks.delta(Domain::Game));
    g.log
        .insert(format!("{who}: clocks at frame {}", clocks.frame()));
    let id = id_of(who);
    cmds.remove_owner(OwnerId::new(id));
    cmds.latent()
        .delay(OwnerId::new(7), id, secs(0.1), move |g: &mut Game, _| {
            g.log.insert(format!("{who}: latent done"));
        });
    cmds.tasks().spawn(None, move |cx| async move {
        cx.next_frame().await;
        cx.with(|g: &mut Game| g.log.insert(format!("{who}: task ran")));
    });
    cmds.ticks()
        .add(TickSettings::named(who), move |g: &mut Game, cx| {
            g.log.insert(format!("{who}: tick ran"));
            let me = cx.handle();
            assert!(cx.commands().ticks().remove(me));
        });
    let h = cmds.tickables().add(Once(who));
    g.tickables.insert(who, h);
}

struct Doer;
impl Tickable<Game> for Doer {
    fn tick(&mut self, g: &mut Game, cx: &mut TickableCx<'_, Game>) {
        if cx.clocks().frame() == 2 {
            use_timers("tickable", cx.timers());
            use_commands("tickable", cx.clocks(), cx.commands(), g);
        }
    }
}

#[test]
fn every_kind_of_callback_reaches_every_service_through_its_context() {
    let mut sched = Scheduler::<Game>::new();
    sched.timers().after(secs(0.1)).call(|g: &mut Game, cx| {
        use_timers("timer", cx.timers());
        use_commands("timer", cx.clocks(), cx.commands(), g);
    });
    sched
        .ticks()
        .add(TickSettings::named("doer"), |g: &mut Game, cx| {
            if cx.clocks().frame() == 1 {
                use_timers("tick", cx.timers());
                use_commands("tick", cx.clocks(), cx.commands(), g);
            }
        });
    sched
        .ticks()
        .add_parallel(TickSettings::named("par"), (), |_, _: &Game, out| {
            if out.clocks().frame() == 1 {
                out.later(|g: &mut Game, cx| {
                    use_timers("parallel", cx.timers());
                    use_commands("parallel", cx.clocks(), cx.commands(), g);
                });
            }
        });
    sched.tickables().add(Doer);
    sched
        .latent()
        .delay(OwnerId::new(9), 0, secs(0.1), |g: &mut Game, cx| {
            use_timers("latent", cx.timers());
            use_commands("latent", cx.clocks(), cx.commands(), g);
        });
    sched.tasks().spawn(None, |cx| async move {
        let (clocks, cmds) = (cx.clocks(), cx.commands());
        cx.timers(|t| use_timers("task", t));
        cx.with(|g: &mut Game| use_commands("task", clocks, &cmds, g));
    });
    let mut game = Game::default();
    for _ in 0..8 {
        sched.tick(secs(0.1), &mut game);
    }
    let kinds = ["timer", "tick", "parallel", "tickable", "latent", "task"];
    for who in kinds {
        for what in [
            "clocks at frame",
            "timer fired",
            "latent done",
            "task ran",
            "tick ran",
            "tickable ran",
        ] {
            let hit = game
                .log
                .iter()
                .any(|l| l.starts_with(&format!("{who}: {what}")));
            assert!(hit, "{who}: {what} missing from {:#?}", game.log);
        }
        for never in [
            "cleared timer fired",
            "paused timer fired",
            "removed owner's timer fired",
        ] {
            assert!(
                !game.log.contains(&format!("{who}: {never}")),
                "{who}: {never}"
            );
        }
    }
    // What was added once and removed itself is gone again.
    assert_eq!(sched.ticks().len(), 2, "doer and par");
    assert_eq!(sched.tickables().len(), 1, "Doer");
}

/// Commands that reach no scheduler (a dropped one, or a standalone manager's) do nothing,
/// as a send on a closed channel: no panic, handles that name nothing, tasks cancelled.
#[test]
fn commands_without_a_scheduler_do_nothing() {
    use tickflow::snapshot::Registry;

    let old = Scheduler::<u32>::new();
    let cmds = old.commands();
    assert!(cmds.is_connected());
    let (mut restored, _) =
        Scheduler::<u32>::restore(&old.snapshot(), &mut Registry::new()).unwrap();
    drop(old);
    assert!(!cmds.is_connected());
    let h = cmds
        .ticks()
        .add(TickSettings::default(), |n: &mut u32, _| *n += 1);
    assert!(!restored.ticks().contains(h) && !cmds.ticks().remove(h));
    let task = cmds.tasks().spawn(None, |_| async {});
    assert!(task.is_cancelled());
    cmds.timers(|t| {
        t.after(secs(0.1)).call(|n: &mut u32, _| *n += 100);
    });
    let mut n = 0;
    restored.tick(secs(0.1), &mut n);
    assert_eq!(n, 0);
    assert!(restored.commands().is_connected());

    // A standalone timer manager has no scheduler: its callbacks' commands are not connected.
    let mut timers = TimerManager::<Vec<bool>>::new();
    timers.after(secs(0.1)).call(|seen, cx| {
        seen.push(cx.commands().is_connected());
        cx.commands()
            .ticks()
            .add(TickSettings::default(), |_, _| {});
    });
    let mut seen = vec![];
    timers.tick(secs(0.1), &mut seen);
    assert_eq!(seen, [false]);
}

/// A restored scheduler hands its callbacks its own commands (not the dropped original's).
#[test]
fn a_restored_scheduler_hands_its_callbacks_its_own_commands() {
    use tickflow::snapshot::Registry;

    fn spawner(n: &mut u32, cx: &mut TickCx<'_, u32>) {
        *n += 1;
        if cx.clocks().frame() == 2 {
            // Added in PrePhysics, it runs later in this frame.
            cx.commands()
                .ticks()
                .add(TickSettings::named("child"), |n: &mut u32, _| *n += 100);
        }
    }
    let mut sched = Scheduler::<u32>::new();
    sched.ticks().add(TickSettings::named("spawner"), spawner);
    let mut n = 0;
    sched.tick(secs(0.1), &mut n);
    let mut registry = Registry::new().tick("spawner", spawner);
    let (mut restored, _) = Scheduler::restore(&sched.snapshot(), &mut registry).unwrap();
    drop(sched);
    restored.tick(secs(0.1), &mut n);
    assert_eq!((n, restored.ticks().len()), (102, 2));
}
