//! One set of powers: every kind of callback (timer, tick function, parallel tick function
//! through its deferred changes, tickable, latent completion, task) reads the clocks and, directly
//! or through the `Commands` kept in the game context, sets, clears and pauses timers, starts
//! latent actions, spawns tasks, adds and removes tick functions and tickables, and removes an
//! owner. Each kind does all of it once; the test checks that every effect happened.

use std::collections::{BTreeMap, BTreeSet};

use tickflow::prelude::*;

struct Game {
    cmds: Commands<Game>,
    log: BTreeSet<String>,
    /// Handles of the tickables the callbacks added, so that each can remove itself.
    tickables: BTreeMap<&'static str, TickableHandle>,
}

/// How a callback reaches the timer manager: directly (its context has it), or queued through
/// the game's `Commands`.
enum Timers<'a> {
    Direct(&'a mut tickflow::Timers<Game>),
    Queued,
}

/// Runs a timer operation either way.
fn with_timers(
    t: &mut Timers<'_>,
    cmds: &Commands<Game>,
    op: impl FnOnce(&mut tickflow::Timers<Game>) + Send + 'static,
) {
    match t {
        Timers::Direct(tm) => op(tm),
        Timers::Queued => cmds.timers(op),
    }
}

/// A tickable that logs once and removes itself.
struct Once(&'static str);
impl Tickable<Game> for Once {
    fn tick(&mut self, _: Span, g: &mut Game) {
        g.log.insert(format!("{}: tickable ran", self.0));
        let me = g
            .tickables
            .remove(self.0)
            .expect("added with its handle noted");
        assert!(g.cmds.remove_tickable(me));
    }
}

/// Everything, done by callback `who` with the clocks it saw and its way to the timers.
fn reach_everything(who: &'static str, clocks: Clocks, mut timers: Timers<'_>, g: &mut Game) {
    assert!(
        clocks.frame() > 0 && clocks.delta(Domain::Real) > Span::ZERO,
        "{who}"
    );
    assert!(clocks.now(Domain::Game) >= Time::ZERO + clocks.delta(Domain::Game));
    g.log
        .insert(format!("{who}: clocks at frame {}", clocks.frame()));
    let cmds = g.cmds.clone();
    // A number of its own for each kind of callback.
    let id = who.bytes().fold(0u64, |h, b| h * 31 + u64::from(b));
    let victim = OwnerId::new(id);
    with_timers(&mut timers, &cmds, move |t| {
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
            .owner(victim)
            .call(move |g: &mut Game, _| {
                g.log.insert(format!("{who}: removed owner's timer fired"));
            });
    });
    cmds.remove_owner(victim);
    cmds.delay(OwnerId::new(7), id, secs(0.1), move |g: &mut Game| {
        g.log.insert(format!("{who}: latent done"));
    });
    cmds.spawn(None, move |cx| async move {
        cx.next_frame().await;
        cx.with(|g: &mut Game| g.log.insert(format!("{who}: task ran")));
    });
    cmds.add_tick(TickSettings::named(who), move |g: &mut Game, cx| {
        g.log.insert(format!("{who}: tick ran"));
        let me = cx.handle();
        assert!(cx.remove_tick(me));
    });
    let h = cmds.add_tickable(Once(who));
    g.tickables.insert(who, h);
}

struct Doer;
impl Tickable<Game> for Doer {
    fn tick(&mut self, _: Span, g: &mut Game) {
        if g.cmds.clocks().frame() == 2 {
            let clocks = g.cmds.clocks();
            reach_everything("tickable", clocks, Timers::Queued, g);
        }
    }
}

#[test]
fn every_kind_of_callback_reaches_every_service() {
    let mut sched = Scheduler::<Game>::new();
    let mut game = Game {
        cmds: sched.commands(),
        log: BTreeSet::new(),
        tickables: BTreeMap::new(),
    };
    sched.timers().after(secs(0.1)).call(|g: &mut Game, cx| {
        let clocks = cx.clocks();
        reach_everything("timer", clocks, Timers::Direct(cx.timers()), g);
    });
    sched
        .ticks()
        .add(TickSettings::named("doer"), |g: &mut Game, cx| {
            if cx.frame() == 1 {
                let clocks = *cx.clocks();
                reach_everything("tick", clocks, Timers::Direct(cx.timers()), g);
            }
        });
    sched
        .ticks()
        .add_parallel(TickSettings::named("par"), (), |_, _: &Game, out| {
            if out.frame() == 1 {
                out.later(|g: &mut Game, cx| {
                    let clocks = *cx.clocks();
                    reach_everything("parallel", clocks, Timers::Direct(cx.timers()), g);
                });
            }
        });
    sched.tickables().add(Doer);
    sched
        .latent()
        .delay(OwnerId::new(9), 0, secs(0.1), |g: &mut Game| {
            let clocks = g.cmds.clocks();
            reach_everything("latent", clocks, Timers::Queued, g);
        });
    sched.tasks().spawn(None, |cx| async move {
        let clocks = cx.clocks();
        cx.with(|g: &mut Game| reach_everything("task", clocks, Timers::Queued, g));
        // A task reaches the timer manager directly too.
        cx.timers(|t| {
            t.after(secs(0.1)).call(|g: &mut Game, _| {
                g.log.insert("task: direct timer fired".into());
            })
        });
    });
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
    assert!(game.log.contains("task: direct timer fired"));
    // What was added once and removed itself is gone again.
    assert_eq!(sched.ticks().len(), 2, "doer and par");
    assert_eq!(sched.tickables().len(), 1, "Doer");
}

/// A `Commands` of a scheduler that a restore replaced (and that was dropped) used to queue
/// into nothing: `add_tick` returned a handle and the function never ran. It says so now.
#[test]
fn commands_of_a_dropped_scheduler_fail_loudly() {
    use tickflow::snapshot::Registry;

    let old = Scheduler::<u32>::new();
    let cmds = old.commands();
    assert!(cmds.is_connected());
    let (restored, _) = Scheduler::<u32>::restore(&old.snapshot(), &mut Registry::new()).unwrap();
    drop(old);
    assert!(!cmds.is_connected());
    let err = std::panic::catch_unwind(|| {
        cmds.add_tick(TickSettings::default(), |n: &mut u32, _| *n += 1);
    })
    .unwrap_err();
    let msg = (err.downcast_ref::<&str>().copied())
        .or(err.downcast_ref::<String>().map(String::as_str))
        .unwrap();
    assert!(
        msg.contains("was dropped") && msg.contains("after_restore"),
        "{msg}"
    );
    // The restored scheduler's own commands work.
    assert!(restored.commands().is_connected());
}
