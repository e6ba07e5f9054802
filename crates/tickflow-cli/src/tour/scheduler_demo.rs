//! The demo's scheduler section: tick functions across groups with a prerequisite, an
//! interval function, a parallel function, a tickable and a timer, in one frame pipeline.

use tickflow::prelude::*;
use tickflow::{Tickable, TickableCx};

/// The world of the section: a log of the frame and a few numbers the functions change.
#[derive(Default)]
struct World {
    log: Vec<String>,
    position: f64,
    velocity: f64,
    score: u32,
}

impl World {
    fn note(&mut self, frame: u64, what: String) {
        if frame == 1 {
            self.log.push(what);
        }
    }
}

struct ScoreTicker;

impl Tickable<World> for ScoreTicker {
    fn tick(&mut self, w: &mut World, _cx: &mut TickableCx<'_, World>) {
        w.score += 1;
        w.log.push("  tickable  scoreboard".into());
    }
    fn name(&self) -> &str {
        "scoreboard"
    }
}

/// Runs 30 frames at 60 Hz and prints the first frame's order, `explain_order()` and a summary.
pub(crate) fn run() {
    let mut sched = Scheduler::<World>::new();
    let physics = sched.ticks().add(
        TickSettings::named("physics").in_group(TickGroup::DuringPhysics),
        |w, cx| {
            w.position += w.velocity * cx.dt().as_secs_f64();
            let text = format!("  {:?}  physics: integrate", cx.group());
            w.note(cx.clocks().frame(), text);
        },
    );
    let camera = sched.ticks().add(TickSettings::named("camera"), |w, cx| {
        let text = format!(
            "  {:?}  camera: follow (demoted behind physics)",
            cx.group()
        );
        w.note(cx.clocks().frame(), text);
    });
    sched
        .ticks()
        .add_prerequisite(camera, physics)
        .expect("no cycle here");
    sched.ticks().add(
        TickSettings {
            interval: secs(0.2),
            ..TickSettings::named("ai.think")
        },
        |w, cx| {
            w.velocity = if w.velocity > 0.0 { -1.0 } else { 1.0 };
            let text = format!("  {:?}  ai.think: every 0.2 s", cx.group());
            w.note(cx.clocks().frame(), text);
        },
    );
    sched.ticks().add_parallel(
        TickSettings::named("pathfind").in_group(TickGroup::PrePhysics),
        0u64,
        |searches: &mut u64, w: &World, out| {
            *searches += 1;
            if out.clocks().frame() == 1 {
                let text = format!(
                    "  {:?}  pathfind: parallel, reads {:.1}",
                    out.group(),
                    w.position
                );
                out.run(move |w: &mut World| w.log.push(text));
            }
        },
    );
    sched.ticks().add(
        TickSettings::named("hud").in_group(TickGroup::PostUpdateWork),
        |w, cx| {
            let text = format!("  {:?}  hud: draw", cx.group());
            w.note(cx.clocks().frame(), text);
        },
    );
    sched.tickables().add(ScoreTicker);
    sched
        .timers()
        .every(Span::frames(1, 60))
        .name("autosave check")
        .call(|w: &mut World, cx| {
            if cx.call_index() == 0 {
                w.log.push("  timers      autosave check".into());
            }
        });

    println!("\nScheduler: one frame, in order");
    let mut world = World::default();
    let mut totals = (0, 0, 0);
    for frame in 1..=30 {
        let report = sched.tick(Span::frames(1, 60), &mut world);
        totals.0 += report.ticks_run;
        totals.1 += report.timers_fired;
        totals.2 += report.tickables_ticked;
        if frame == 1 {
            for line in &world.log {
                println!("{line}");
            }
            println!("\nexplain_order():\n{}", sched.explain_order());
        }
    }
    println!(
        "30 frames: {} tick functions, {} timer calls, {} tickable ticks; position {:.3}, score {}",
        totals.0, totals.1, totals.2, world.position, world.score
    );
}
