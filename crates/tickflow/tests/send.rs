//! `Send`: a scheduler with every kind of work in it plays some frames, moves to another
//! thread, and plays on there; it makes the same calls, in the same order, and ends in the same
//! state as one that stayed on its first thread. (The compile-time checks that the containers
//! are `Send`, and `Commands` and the task handles `Send + Sync`, are in `lib.rs`; the
//! `compile_fail` examples on `TimerBuilder::call`, `Tasks::spawn` and `Tickable` show
//! what is refused.)

use std::thread;

use tickflow::prelude::*;
use tickflow::{Tickable, TickableCx};

#[derive(Default)]
struct Game {
    log: Vec<String>,
    cmds: Option<Commands<Game>>,
}

impl Game {
    fn note(&mut self, what: impl Into<String>) {
        self.log.push(what.into());
    }
}

struct Score(u32);
impl Tickable<Game> for Score {
    fn tick(&mut self, game: &mut Game, _cx: &mut TickableCx<'_, Game>) {
        self.0 += 1;
        if self.0 % 7 == 0 {
            game.note(format!("score {}", self.0));
        }
    }
}

/// A scheduler with timers, tick functions (an interval, a prerequisite, a parallel one), a
/// tickable, latent delays and tasks.
fn world() -> (Scheduler<Game>, Game) {
    let mut sched = Scheduler::<Game>::new();
    let game = Game {
        cmds: Some(sched.commands()),
        ..Game::default()
    };
    let physics = sched.ticks().add(
        TickSettings::named("physics").in_group(TickGroup::DuringPhysics),
        |g, cx| {
            if cx.clocks().frame() % 10 == 0 {
                g.note(format!("physics {}", cx.clocks().frame()));
            }
        },
    );
    let camera = sched.ticks().add(
        TickSettings {
            interval: secs(0.25),
            ..TickSettings::named("camera")
        },
        |g, cx| {
            g.note(format!(
                "camera {} in {:?}",
                cx.clocks().frame(),
                cx.group()
            ))
        },
    );
    sched.ticks().add_prerequisite(camera, physics).unwrap();
    sched
        .ticks()
        .add_parallel(TickSettings::named("ai"), 0u64, |n, _: &Game, out| {
            *n += 1;
            if *n % 15 == 0 {
                let n = *n;
                out.run(move |g: &mut Game| g.note(format!("ai {n}")));
            }
        });
    sched.tickables().add(Score(0));
    sched
        .timers()
        .every(secs(0.3))
        .owner(OwnerId::new(1))
        .call(|g, cx| g.note(format!("regen {}", cx.call_index())));
    sched.timers().after(secs(1.5)).call(|g, _| {
        g.note("bomb");
        // Structural changes from a timer callback, through the context's Commands.
        let cmds = g.cmds.clone().unwrap();
        cmds.remove_owner(OwnerId::new(1));
        cmds.latent()
            .delay(OwnerId::new(2), 0, secs(0.4), |g: &mut Game, _| {
                g.note("after bomb")
            });
    });
    sched
        .latent()
        .delay(OwnerId::new(2), 1, secs(0.7), |g, _| g.note("latent"));
    sched.tasks().spawn(None, |cx| async move {
        for lap in 0..6 {
            cx.delay(secs(0.35)).await;
            cx.with(|g: &mut Game| g.note(format!("task lap {lap}")));
        }
    });
    (sched, game)
}

fn play(sched: &mut Scheduler<Game>, game: &mut Game, frames: u32) {
    for _ in 0..frames {
        sched.tick(Span::frames(1, 30), game);
    }
}

#[test]
fn a_scheduler_moved_to_another_thread_plays_on_the_same() {
    let (mut stay, mut stay_game) = world();
    play(&mut stay, &mut stay_game, 40);
    play(&mut stay, &mut stay_game, 40);

    let (mut mover, mut mover_game) = world();
    play(&mut mover, &mut mover_game, 40);
    let (mover, mover_game) = thread::spawn(move || {
        play(&mut mover, &mut mover_game, 40);
        (mover, mover_game)
    })
    .join()
    .unwrap();

    assert!(stay_game.log.len() > 40, "{:?}", stay_game.log);
    for needle in [
        "bomb",
        "after bomb",
        "latent",
        "task lap 5",
        "ai 60",
        "score 77",
    ] {
        assert!(stay_game.log.iter().any(|l| l == needle), "{needle}");
    }
    assert_eq!(mover_game.log, stay_game.log);
    assert_eq!(mover.state_hash(), stay.state_hash());
    assert_eq!(mover.clocks().frame(), 80);
}
