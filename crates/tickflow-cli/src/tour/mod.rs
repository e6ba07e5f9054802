//! `tickflow tour`: one short, printed scene per part of the library (timers, tick functions,
//! latent actions and a task, save and load, the real-time service), each line with its frame and time.

mod latent_demo;
mod realtime_demo;
mod scheduler_demo;
mod snapshot_demo;

use tickflow::prelude::*;

/// The demo's game state: a log of what fired, and a few counters the timers change.
#[derive(Default)]
struct Game {
    events: Vec<String>,
    hp: i32,
    cooldown_ready: bool,
}

impl Game {
    fn say(&mut self, now: Time, what: impl Into<String>) {
        self.events
            .push(format!("{:>7.3}s  {}", now.as_secs_f64(), what.into()));
    }
}

/// Runs every scene and prints it.
pub(crate) fn run() {
    let hz = 60;
    let frame = Span::frames(1, hz);
    let mut timers = TimerManager::<Game>::new();
    let mut game = Game {
        hp: 100,
        ..Game::default()
    };

    timers
        .after(secs(0.5))
        .name("intro")
        .call(|g, cx| g.say(cx.now(), "one-shot: intro text"));
    timers
        .every(secs(0.25))
        .times(4)
        .name("poison")
        .call(|g, cx| {
            g.hp -= 5;
            let (i, hp) = (cx.call_index() + 1, g.hp);
            g.say(cx.scheduled(), format!("poison tick {i}/4, hp {hp}"));
        });
    let ability = timers
        .every(secs(0.4))
        .catch_up(CatchUp::Once)
        .name("ability cooldown")
        .call(|g, cx| {
            g.cooldown_ready = true;
            g.say(cx.scheduled(), "looping (Once): ability ready");
        });
    timers.after(Frames(30)).call(|g, cx| {
        let (frame, game_time) = (cx.now().flicks(), cx.timers().clocks().now(Domain::Game));
        g.say(
            game_time,
            format!("frame timer: 30 frames later (frame {frame})"),
        );
    });
    timers
        .after(secs(1.0))
        .real()
        .call(|g, cx| g.say(cx.now(), "real-time timer: 1 s of wall time"));
    timers.after(secs(0.3)).call(|g, cx| {
        g.say(cx.now(), "chain link 1 (sets link 2 for +0.3 s)");
        cx.timers()
            .after(secs(0.3))
            .call(|g, cx| g.say(cx.scheduled(), "chain link 2, exactly on time"));
    });
    let doomed = timers
        .after(secs(5.0))
        .on_cancel(|g| {
            g.events
                .push("            on_cancel: the doomed timer was cleared".into())
        })
        .call(|g, cx| g.say(cx.now(), "never printed"));

    let mut fired = 0;
    let frames = hz as usize * 3 / 2; // 1.5 s of frames
    for n in 0..frames {
        timers.begin_frame();
        if n == 45 {
            timers.clear(doomed);
            timers.pause(ability);
            game.say(
                timers.clocks().now(Domain::Game),
                "paused the ability cooldown",
            );
        }
        if n == 70 {
            timers.unpause(ability);
            game.say(
                timers.clocks().now(Domain::Game),
                "unpaused the ability cooldown",
            );
        }
        fired += timers.tick(frame, &mut game);
    }

    println!("tickflow timer demo: {frames} frames at {hz} Hz\n");
    for line in &game.events {
        println!("{line}");
    }
    println!(
        "\nsummary: {} calls in {} frames, game time {}, {} timers still live, hp {}, ability {}",
        fired,
        timers.clocks().frame(),
        timers.clocks().now(Domain::Game),
        timers.len(),
        game.hp,
        if game.cooldown_ready {
            "ready"
        } else {
            "cooling down"
        },
    );

    scheduler_demo::run();
    latent_demo::run();
    snapshot_demo::run();
    realtime_demo::run();
}
