//! A plain game loop on the fixed-step driver: the loop renders frames of whatever length
//! the machine gives it (here 5–30 ms, as a busy renderer would), and the simulation advances
//! in fixed 60 Hz steps of exactly 1/60 s, with the interpolation factor for drawing between
//! the last two states.
//!
//! ```sh
//! cargo run -p tickflow --example game_loop
//! ```
//!
//! Prints what fires during two seconds of wall-clock time, and checks at the end that the
//! game clock is exactly the number of steps run times one step.

use std::time::{Duration, Instant};

use tickflow::driver::FixedStep;
use tickflow::prelude::*;

/// The game: a ball that moves at a constant speed, and what happened.
#[derive(Default)]
struct Game {
    /// Position now and one step ago, in pixels (for interpolation).
    x: f64,
    prev_x: f64,
    log: Vec<String>,
}

const HZ: u32 = 60;
const SPEED: f64 = 120.0; // pixels per second

fn main() {
    let mut sched = Scheduler::<Game>::new();
    sched
        .ticks()
        .add(TickSettings::named("physics"), |game: &mut Game, cx| {
            game.prev_x = game.x;
            game.x += SPEED * cx.dt().as_secs_f64();
        });
    sched.timers().every(secs(0.5)).call(|game: &mut Game, cx| {
        let line = format!(
            "{:>5.2} s game time: spawn wave {} (ball at {:.0} px)",
            cx.scheduled().as_secs_f64(),
            cx.call_index() + 1,
            game.x
        );
        game.log.push(line);
    });

    let mut game = Game::default();
    let mut fixed = FixedStep::new(HZ);
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let start = Instant::now();
    let mut last = start;
    let (mut frames, mut steps) = (0u64, 0u64);
    while start.elapsed() < Duration::from_secs(2) {
        // The frame's real duration, however long rendering took.
        let now = Instant::now();
        let (due, _) = fixed.run(now - last, &mut sched, &mut game);
        last = now;
        steps += u64::from(due.steps);
        frames += 1;
        for line in game.log.drain(..) {
            println!("{line}");
        }
        // "Render": draw the ball between its last two states, then take 5-30 ms.
        let drawn = game.prev_x + (game.x - game.prev_x) * due.alpha;
        if frames % 40 == 0 {
            println!(
                "        frame {frames}: {} step(s), alpha {:.2}, ball drawn at {drawn:.1} px",
                due.steps, due.alpha
            );
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        std::thread::sleep(Duration::from_millis(5 + rng % 26));
    }

    let game_time = sched.clocks().now(Domain::Game).since_start();
    println!(
        "{frames} rendered frames, {steps} steps in {:.3} s of wall time: game time {:.4} s, exactly {steps} x 1/{HZ} s",
        start.elapsed().as_secs_f64(),
        game_time.as_secs_f64()
    );
    assert_eq!(game_time, Span::frames(steps, HZ), "exact: no drift");
    assert_eq!(sched.clocks().frame(), steps);
    assert!((game.x - SPEED * game_time.as_secs_f64()).abs() < 1e-6);
}
