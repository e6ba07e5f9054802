//! B1, delays in a Bevy app: `commands.tickflow()` (tickflow-bevy) against Bevy's own
//! `commands.delayed()` (bevy_time 0.20), in headless apps that differ only in that.
//!
//! - **Frame**: the time of one `app.update()` with N delays pending (due in ~1000 s, so none
//!   fires), less the same update of an app with no delays (the schedules themselves): what
//!   the pending delays cost every frame. Bevy's `check_delayed_command_queues` visits every
//!   pending queue each frame; tickflow's timers wait in a wheel that a frame does not scan.
//! - **Schedule**: the time to set N delays from one system until they are stored (Bevy:
//!   its queues spawned as entities; tickflow: the timer entities spawned and the timers in
//!   the scheduler, `tickflow_bevy::flush`), per delay. *Cold*: in a new app (its tables
//!   grow as the entities arrive, which favours Bevy's one batch spawn); *warm*: in an app
//!   that already scheduled and cancelled N delays, as a running game does.
//!
//! Each figure is the median of several rounds; rounds alternate between the two apps, and each
//! round of each app runs in a process of its own (this program started again with
//! `TICKFLOW_B1_ROUND` set): in one process, an app's tables were allocated where the app
//! before it had freed its own, and Bevy's figure moved by a quarter between builds of the
//! same code.

use std::time::{Duration, Instant};

use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_ecs::system::RunSystemOnce;
use bevy_time::{DelayedCommandQueue, DelayedCommandsExt, TimePlugin, TimeUpdateStrategy};
use tickflow::Span;
use tickflow_bevy::{TickflowCommandsExt, TickflowPlugin, TickflowTimer};

use crate::Options;

/// One fixed step per update, at tickflow-bevy's default rate (Bevy's).
const STEP: Duration = Duration::from_micros(15_625);

#[derive(Component)]
struct Marker;

#[derive(Copy, Clone, PartialEq)]
enum Kind {
    Empty,
    Bevy,
    Tickflow,
}

fn app(kind: Kind) -> App {
    let mut app = App::new();
    app.add_plugins(TimePlugin)
        .insert_resource(TimeUpdateStrategy::ManualDuration(STEP));
    if kind == Kind::Tickflow {
        app.add_plugins(TickflowPlugin::fixed(64));
    }
    app.update();
    app
}

/// Sets `n` delays due in about 1000 s; returns how long until they were stored.
fn schedule(app: &mut App, kind: Kind, n: usize) -> Duration {
    let t = Instant::now();
    match kind {
        Kind::Empty => {}
        Kind::Bevy => {
            app.world_mut()
                .run_system_once(move |mut commands: Commands| {
                    let mut delayed = commands.delayed();
                    for i in 0..n {
                        // Distinct delays: one pending queue each, as separate calls make.
                        let d = Duration::from_secs(1000) + Duration::from_micros(i as u64);
                        delayed.duration(d).spawn(Marker);
                    }
                })
                .unwrap();
        }
        Kind::Tickflow => {
            app.world_mut()
                .run_system_once(move |mut commands: Commands| {
                    for i in 0..n {
                        let d =
                            Span::from(Duration::from_secs(1000) + Duration::from_micros(i as u64));
                        commands.tickflow().after(d).call(|world| {
                            world.spawn(Marker);
                        });
                    }
                })
                .unwrap();
            tickflow_bevy::flush(app.world_mut());
        }
    }
    t.elapsed()
}

/// Cancels every pending delay (despawns the entities that hold them) and runs an update.
fn cancel_all(app: &mut App, kind: Kind) {
    let world = app.world_mut();
    let pending: Vec<Entity> = match kind {
        Kind::Empty => Vec::new(),
        Kind::Bevy => world
            .query_filtered::<Entity, With<DelayedCommandQueue>>()
            .iter(world)
            .collect(),
        Kind::Tickflow => world
            .query_filtered::<Entity, With<TickflowTimer>>()
            .iter(world)
            .collect(),
    };
    for e in pending {
        world.despawn(e);
    }
    app.update();
}

/// The median time of one update, over `updates`.
fn frame(app: &mut App, updates: usize) -> Duration {
    let mut times: Vec<Duration> = (0..updates)
        .map(|_| {
            let t = Instant::now();
            app.update();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

const ROUND: &str = "TICKFLOW_B1_ROUND";

/// One round of one app: the cold and warm schedule (ns per delay) and the frame (µs).
fn round(kind: Kind, n: usize, updates: usize) -> (f64, f64, f64) {
    let per = |d: Duration| d.as_secs_f64() * 1e9 / n as f64;
    let mut a = app(kind);
    let cold = per(schedule(&mut a, kind, n));
    cancel_all(&mut a, kind);
    let warm = per(schedule(&mut a, kind, n));
    let f = frame(&mut a, updates).as_secs_f64() * 1e6;
    (cold, warm, f)
}

/// [`round`] in a new process.
fn round_apart(kind: Kind, n: usize, updates: usize) -> (f64, f64, f64) {
    let k = match kind {
        Kind::Empty => 0,
        Kind::Bevy => 1,
        Kind::Tickflow => 2,
    };
    let out = std::process::Command::new(std::env::current_exe().expect("this program"))
        .args(std::env::args().skip(1))
        .env(ROUND, format!("{k} {n} {updates}"))
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("a round's process");
    assert!(out.status.success(), "a B1 round's process failed");
    // The last line: a host program (`tickflow bench`) may print its headings first.
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or_default();
    let v: Vec<f64> = (last.split_whitespace())
        .map(|x| x.parse().expect("a figure"))
        .collect();
    (v[0], v[1], v[2])
}

/// Serves one round when started as a round's process: `true` if it was one.
fn serve_round() -> bool {
    let Ok(spec) = std::env::var(ROUND) else {
        return false;
    };
    let v: Vec<usize> = (spec.split_whitespace())
        .map(|x| x.parse().expect("a round spec"))
        .collect();
    let kind = [Kind::Empty, Kind::Bevy, Kind::Tickflow][v[0]];
    let (cold, warm, f) = round(kind, v[1], v[2]);
    println!("{cold} {warm} {f}");
    true
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs B1 and prints its table.
pub fn run(opts: &Options) {
    if serve_round() {
        std::process::exit(0);
    }
    let (rounds, updates) = if opts.quick { (3, 30) } else { (5, 100) };
    println!(
        "B1 delays in a headless Bevy app: tickflow-bevy `commands.tickflow()` vs Bevy `commands.delayed()`\n\
         per frame: update time with N pending less an app without delays (us); schedule: ns per delay\n\
         (medians of {rounds} rounds x {updates} updates)"
    );
    for n in [10_000, 100_000] {
        let (mut frame_tf, mut frame_bevy, mut frame_empty) = (vec![], vec![], vec![]);
        let (mut cold_tf, mut cold_bevy, mut warm_tf, mut warm_bevy) =
            (vec![], vec![], vec![], vec![]);
        for _ in 0..rounds {
            for kind in [Kind::Empty, Kind::Bevy, Kind::Tickflow] {
                let (cold, warm, f) = round_apart(kind, n, updates);
                match kind {
                    Kind::Empty => frame_empty.push(f),
                    Kind::Bevy => {
                        frame_bevy.push(f);
                        cold_bevy.push(cold);
                        warm_bevy.push(warm);
                    }
                    Kind::Tickflow => {
                        frame_tf.push(f);
                        cold_tf.push(cold);
                        warm_tf.push(warm);
                    }
                }
            }
        }
        let empty = median(frame_empty);
        let (tf, bevy) = (median(frame_tf) - empty, median(frame_bevy) - empty);
        println!(
            "  N = {n:>7}: per frame tickflow {tf:8.1} us, Bevy {bevy:8.1} us, ratio {:.3}x (empty app {empty:.1} us)",
            tf.max(0.0) / bevy.max(1e-9)
        );
        let (ctf, cbevy, wtf, wbevy) = (
            median(cold_tf),
            median(cold_bevy),
            median(warm_tf),
            median(warm_bevy),
        );
        println!(
            "             schedule warm tickflow {wtf:6.0} ns, Bevy {wbevy:6.0} ns, ratio {:.2}x; cold {ctf:.0} / {cbevy:.0} ns, {:.2}x",
            wtf / wbevy,
            ctf / cbevy
        );
    }
}
