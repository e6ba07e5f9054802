//! The tour's save-game scene: a snapshot taken between frames, restored twice. The first
//! restore replays the same second of game time call for call; the second keeps a handle
//! from before the save and uses it to play a different future (rollback's "what if").

use tickflow::prelude::*;
use tickflow::snapshot::{Registry, SchedulerSnapshot};
use tickflow::timer::TimerHandle;

const DOOR: OwnerId = OwnerId::new(1);
const HZ: u32 = 60;

/// The game: everything the callbacks change. Yours to copy when you save.
#[derive(Clone, Default)]
struct SaveGame {
    hp: i32,
    steps: u64,
    door_open: bool,
    log: Vec<String>,
}

impl SaveGame {
    fn say(&mut self, when: Time, what: String) {
        self.log
            .push(format!("{:6.3} s  {what}", when.as_secs_f64()));
    }
}

fn walk(g: &mut SaveGame, _: &mut TickCx<SaveGame>) {
    g.steps += 1;
}

fn regen(g: &mut SaveGame, cx: &mut TimerCx<SaveGame>) {
    g.hp += 3;
    let hp = g.hp;
    g.say(cx.scheduled(), format!("regen +3, hp {hp}"));
}

fn poison(g: &mut SaveGame, cx: &mut TimerCx<SaveGame>) {
    g.hp -= 5;
    let (hp, n) = (g.hp, cx.call_index() + 1);
    g.say(cx.scheduled(), format!("poison -5 ({n}/6), hp {hp}"));
}

fn door(g: &mut SaveGame, _: &mut LatentCx<'_, SaveGame>) {
    g.door_open = true;
    // `walk` runs before the latent stage: it has counted this frame.
    g.say(
        Time::ZERO + Span::frames(g.steps, HZ),
        "the door opens (a latent Delay)".into(),
    );
}

/// Binds the callbacks of a restored scheduler again, by name and by latent key: callbacks
/// are code, and a snapshot is data.
fn bind() -> Registry<SaveGame> {
    Registry::new()
        .timer("regen", regen)
        .timer("poison", poison)
        .tick("walk", walk)
        .latent(7, door)
}

/// Runs `frames` frames and returns the log lines they added.
fn play(sched: &mut Scheduler<SaveGame>, game: &mut SaveGame, frames: u64) -> Vec<String> {
    let from = game.log.len();
    for _ in 0..frames {
        sched.tick(Span::frames(1, HZ), game);
    }
    game.log[from..].to_vec()
}

/// Prints the scene.
pub(crate) fn run() {
    let mut sched = Scheduler::<SaveGame>::new();
    sched.ticks().add(TickSettings::named("walk"), walk);
    sched.timers().every(secs(0.5)).name("regen").call(regen);
    let poisoned: TimerHandle = sched
        .timers()
        .every(secs(0.25))
        .times(6)
        .name("poison")
        .call(poison);
    sched.latent().delay(DOOR, 7, secs(1.2), door);
    let mut game = SaveGame {
        hp: 100,
        ..SaveGame::default()
    };
    play(&mut sched, &mut game, 36);

    // Save between frames: the scheduler as data, and a copy of the game.
    let snap: SchedulerSnapshot = sched.snapshot();
    let saved = game.clone();
    println!(
        "\nSave games and rollback: a snapshot at frame {} (0.6 s)",
        sched.clocks().frame()
    );
    println!(
        "  saved {} timers, {} tick function, {} latent action; state hash {:016x} (plain data: with the `serde` feature, any serde format)",
        sched.timers().len(),
        sched.ticks().len(),
        sched.latent().len(),
        sched.state_hash()
    );

    let first = play(&mut sched, &mut game, 60);
    println!("  played on to 1.6 s:");
    for line in &first {
        println!("    {line}");
    }

    // Load: the same data and the same code make the same second, call for call.
    let (mut again, report) = Scheduler::restore(&snap, &mut bind()).expect("every callback binds");
    let mut replay = saved.clone();
    let second = play(&mut again, &mut replay, 60);
    println!(
        "  loaded it and played the same second again: {} of {} lines equal, hp {} and {}, state hash {}, nothing lost: {}",
        first.iter().zip(&second).filter(|(a, b)| a == b).count(),
        first.len(),
        game.hp,
        replay.hp,
        if sched.state_hash() == again.state_hash() { "equal" } else { "DIFFERENT" },
        report.is_complete()
    );

    // What if the player drank the antidote at 0.6 s? The handle from before the save names
    // the same timer in the restored scheduler.
    let (mut what_if, _) = Scheduler::restore(&snap, &mut bind()).expect("every callback binds");
    let mut branch = saved;
    let cured = what_if.timers().clear(poisoned);
    let lines = play(&mut what_if, &mut branch, 60);
    println!(
        "  loaded it again and cleared the poison with the handle kept from before the save ({}):",
        if cured { "found" } else { "NOT FOUND" }
    );
    for line in &lines {
        println!("    {line}");
    }
    println!(
        "  at 1.6 s: hp {} with the poison, {} without; the door {} in both",
        game.hp,
        branch.hp,
        if game.door_open && branch.door_open {
            "open"
        } else {
            "NOT open"
        }
    );
}
