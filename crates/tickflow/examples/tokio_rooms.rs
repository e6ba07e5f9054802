//! A game server on tokio's multi-threaded runtime: one task per room, each room a
//! `Scheduler` stepped at 30 Hz on a [`Pacer`]'s absolute deadlines, awaited with
//! `pacer.tick().await` as tokio's `interval` is (no drift, unlike `interval` with `Skip`, and
//! with tickflow's catch-up policy after a stall; the adapter is [`PacerTick`]), and the
//! server's heartbeats on the wall-clock [`RealtimeTimers`] service (each room holds a
//! [`RealtimeRemote`], a `Send + Sync` handle to it). Schedulers are `Send`,
//! so each room's task may run on any worker thread, and move between them at every await.
//!
//! ```sh
//! cargo run -p tickflow --example tokio_rooms
//! ```
//!
//! Each room runs two seconds of game: players regenerate on looping timers, a tick function
//! moves them, a latent delay opens the gates, and an async task counts the match down. Every
//! 250 ms of wall time the real-time service's thread sends each open room a heartbeat. The
//! rooms report what happened when they close.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use tickflow::driver::Pacer;
use tickflow::prelude::*;
use tickflow::realtime::{RealtimeRemote, RealtimeTimers};

/// `pacer.tick().await`, as with `tokio::time::interval`: an adapter of a few lines, so that
/// tickflow needs no async runtime of its own. Copy it into a tokio program.
trait PacerTick {
    /// Waits until the next step is due and returns how many are due then: 1, or after a
    /// stall the missed steps as the pacer's catch-up policy says. The deadlines are absolute
    /// (step `n` at start + n × period), so the ticks do not drift as `interval`'s `Skip`
    /// does.
    async fn tick(&mut self) -> u64;
}

impl PacerTick for Pacer {
    async fn tick(&mut self) -> u64 {
        loop {
            tokio::time::sleep_until(self.next_deadline().into()).await;
            // Woken a hair early (the timer's granularity), none may be due yet: wait again.
            match self.due(std::time::Instant::now()) {
                0 => continue,
                n => return n,
            }
        }
    }
}

/// The game state of one room.
struct Room {
    id: u32,
    players: Vec<Player>,
    gates_open: bool,
    log: Vec<String>,
}

struct Player {
    hp: u32,
    x: i64,
}

const HZ: u32 = 30;

/// Sets up a room: everything it does lives in its scheduler.
fn open_room(id: u32, players: u32) -> (Scheduler<Room>, Room) {
    let mut sched = Scheduler::<Room>::new();
    let room = Room {
        id,
        players: (0..players).map(|_| Player { hp: 50, x: 0 }).collect(),
        gates_open: false,
        log: Vec::new(),
    };
    sched
        .ticks()
        .add(TickSettings::named("movement"), |room: &mut Room, cx| {
            let step = i64::try_from(cx.dt().flicks() / 1_000_000).unwrap_or(0);
            for p in &mut room.players {
                p.x += step;
            }
        });
    for p in 0..players as usize {
        sched
            .timers()
            .every(secs(0.5))
            .owner(OwnerId::new(p as u64))
            .call(move |room: &mut Room, _| room.players[p].hp += 1);
    }
    sched
        .latent()
        .delay(OwnerId::new(999), 0, secs(1.0), |room: &mut Room, _| {
            room.gates_open = true;
            room.log.push("gates open".into());
        });
    sched.tasks().spawn(None, |cx| async move {
        for left in (1..=3).rev() {
            cx.with(|room: &mut Room| room.log.push(format!("{left}...")));
            cx.delay(secs(0.5)).await;
        }
        let frame = cx.clocks().frame();
        cx.with(|room: &mut Room| room.log.push(format!("go at frame {frame}")));
    });
    (sched, room)
}

/// One room's task: step its scheduler at 30 Hz for `seconds` of game time, with a
/// heartbeat from the real-time service while it is open.
async fn run_room(id: u32, seconds: u32, heartbeats: RealtimeRemote) -> (Room, u32) {
    let (mut sched, mut room) = open_room(id, 4 + id);
    let beats = Arc::new(AtomicU32::new(0));
    let counter = beats.clone();
    // Runs on the service's thread, whatever the room's task is doing.
    let heartbeat = heartbeats
        .every(std::time::Duration::from_millis(250))
        .call(move || {
            counter.fetch_add(1, Ordering::Relaxed);
        });
    let step = Span::frames(1, HZ);
    let mut pacer = Pacer::new(HZ); // step n due at start + n/30 s, exactly
    let mut steps = 0;
    while steps < seconds * HZ {
        // Usually one step; after a stall (a busy worker), the missed ones, capped.
        for _ in 0..pacer.tick().await {
            sched.tick(step, &mut room);
            steps += 1;
        }
    }
    heartbeat.cancel();
    (room, beats.load(Ordering::Relaxed))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let heartbeats = RealtimeTimers::start();
    let rooms: Vec<_> = (1..=4)
        .map(|id| tokio::spawn(run_room(id, 2, heartbeats.remote())))
        .collect();
    for room in rooms {
        let (room, beats) = room.await.expect("the room's task ended normally");
        let hp: Vec<u32> = room.players.iter().map(|p| p.hp).collect();
        println!(
            "room {}: {} players, hp {:?}, moved {} px, gates open: {}, {beats} heartbeats, log {:?}",
            room.id,
            room.players.len(),
            hp,
            room.players[0].x,
            room.gates_open,
            room.log
        );
        // About 8 in two seconds; generous, as the machine may be busy.
        assert!(beats >= 2, "the heartbeats ran on their own thread");
        // Four regen calls per player in two seconds (at 0.5, 1.0, 1.5 and 2.0 s).
        assert!(room.players.iter().all(|p| p.hp == 54));
        assert!(room.gates_open);
        assert_eq!(room.log.last().map(String::as_str), Some("go at frame 45"));
    }
}

#[cfg(test)]
mod tests {
    /// The example runs in `cargo test`, so it cannot rot.
    #[test]
    fn runs() {
        super::main();
    }
}
