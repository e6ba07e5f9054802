//! A game server on tokio's multi-threaded runtime: one task per room, each room a
//! `Scheduler` ticked by a 30 Hz interval. Schedulers are `Send`, so each room's task may run
//! on any worker thread, and move between them at every await.
//!
//! ```sh
//! cargo run -p tickflow --example tokio_rooms
//! ```
//!
//! Each room runs two seconds of game: players regenerate on looping timers, a tick function
//! moves them, a latent delay opens the gates, and an async task counts the match down. The
//! rooms report what happened when they close.

use std::time::Duration;

use tickflow::prelude::*;

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
    sched.add_tick(TickSettings::named("movement"), |room: &mut Room, cx| {
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
        .delay(OwnerId::new(999), 0, secs(1.0), |room: &mut Room| {
            room.gates_open = true;
            room.log.push("gates open".into());
        });
    sched.spawn(None, |cx| async move {
        for left in (1..=3).rev() {
            cx.with(|room: &mut Room| room.log.push(format!("{left}...")));
            cx.delay(secs(0.5)).await;
        }
        let frame = cx.frame();
        cx.with(|room: &mut Room| room.log.push(format!("go at frame {frame}")));
    });
    (sched, room)
}

/// One room's task: tick its scheduler at 30 Hz for `seconds` of game time.
async fn run_room(id: u32, seconds: u32) -> Room {
    let (mut sched, mut room) = open_room(id, 4 + id);
    let frame = Span::frames(1, HZ);
    let mut interval = tokio::time::interval(Duration::from(frame));
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    for _ in 0..seconds * HZ {
        interval.tick().await;
        // A fixed step: the game advances by exactly one frame per tick, whatever the
        // wake-up latency of this worker thread.
        sched.tick(frame, &mut room);
    }
    room
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let rooms: Vec<_> = (1..=4).map(|id| tokio::spawn(run_room(id, 2))).collect();
    for room in rooms {
        let room = room.await.expect("the room's task ended normally");
        let hp: Vec<u32> = room.players.iter().map(|p| p.hp).collect();
        println!(
            "room {}: {} players, hp {:?}, moved {} px, gates open: {}, log {:?}",
            room.id,
            room.players.len(),
            hp,
            room.players[0].x,
            room.gates_open,
            room.log
        );
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
