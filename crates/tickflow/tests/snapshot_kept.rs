//! What a scheduler snapshot keeps that is easy to forget: a tickable's owner, and latent
//! actions that were removed and wait for their abort hook. Each test names the mutation it
//! guards against.

use tickflow::latent::{LatentAction, LatentResponse, SavedAction};
use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::{Tickable, TickableCx};

type Log = Vec<String>;
const ACTOR: OwnerId = OwnerId::new(7);

struct Badge;
impl Tickable<Log> for Badge {
    fn tick(&mut self, log: &mut Log, _cx: &mut TickableCx<'_, Log>) {
        log.push("badge".into());
    }
    fn name(&self) -> &str {
        "badge"
    }
    fn owner(&self) -> Option<OwnerId> {
        Some(ACTOR)
    }
}

/// A latent action with an abort hook; `saved` says whether it can be saved.
struct Channel {
    saved: bool,
}
impl LatentAction<Log> for Channel {
    fn update(&mut self, _: &mut LatentResponse, _: &mut Log) {}
    fn aborted(&mut self, log: &mut Log) {
        log.push("channel aborted".into());
    }
    fn save(&self) -> Option<SavedAction> {
        self.saved.then(|| SavedAction::Custom {
            kind: "channel".into(),
            data: Vec::new(),
        })
    }
}

/// Rebuilds the badge and channels; a tickable rebuilt with no owner of its own keeps the
/// saved one.
/// The badge tickable, the channel action (saved by kind) and its completions, by name.
fn bind() -> Registry<Log> {
    Registry::new()
        .tickable("badge", |_| Badge)
        .latent(1, |_: &mut Log, _| {})
        .latent(2, |_: &mut Log, _| {})
        .latent_action("channel", |_| {
            Some(Box::new(Channel { saved: true }) as Box<dyn LatentAction<Log>>)
        })
}

/// Mutation: a tickable's owner left out of the snapshot. `remove_owner` after a restore then
/// missed the tickable, and it ticked on for a removed actor.
#[test]
fn a_restored_tickable_keeps_its_owner() {
    let mut sched = Scheduler::<Log>::new();
    sched.tickables().add(Badge);
    let (mut restored, report) = Scheduler::restore(&sched.snapshot(), &mut bind()).unwrap();
    assert!(report.is_complete());
    let mut log = Log::new();
    restored.tick(secs(0.1), &mut log);
    restored.remove_owner(ACTOR);
    restored.tick(secs(0.1), &mut log);
    assert_eq!(log, ["badge"]);
    assert_eq!(restored.tickables().len(), 0);
}

/// Mutation: removed latent actions whose abort hook waits for the next latent stage dropped
/// from the snapshot without being counted. A saveable one runs its hook in the restored
/// world; one that cannot be saved is counted in the report.
#[test]
fn pending_abort_hooks_are_kept_or_counted() {
    let mut sched = Scheduler::<Log>::new();
    sched
        .latent()
        .add(ACTOR, 1, Channel { saved: true }, |_, _| {});
    sched
        .latent()
        .add(ACTOR, 2, Channel { saved: false }, |_, _| {});
    let mut log = Log::new();
    sched.tick(secs(0.1), &mut log);
    sched.remove_owner(ACTOR); // both hooks wait for the next latent stage
    let snap = sched.snapshot();
    assert_eq!(snap.not_saved().dropped_aborts, 1);
    let (mut restored, report) = Scheduler::restore(&snap, &mut bind()).unwrap();
    assert_eq!(report.dropped_aborts, 1);
    assert!(!report.is_complete());
    restored.tick(secs(0.1), &mut log);
    assert_eq!(log, ["channel aborted"]);
}

/// A task spawned between frames after a restore counts its delay from the restored clocks,
/// as it would on the scheduler the snapshot was taken from.
#[test]
fn a_task_spawned_after_a_restore_waits_from_the_restored_time() {
    let mut sched = Scheduler::<Vec<String>>::new();
    let mut log = Vec::new();
    for _ in 0..100 {
        sched.tick(secs(0.1), &mut log); // 10 s
    }
    let (mut restored, _) = Scheduler::restore(&sched.snapshot(), &mut Registry::new()).unwrap();
    for s in [&mut sched, &mut restored] {
        s.tasks().spawn(None, |cx| async move {
            cx.delay(secs(1.0)).await;
            let at = cx.clocks().now(Domain::Game).since_start().as_secs_f64();
            cx.with(|log: &mut Vec<String>| log.push(format!("woke at {at:.1}")));
        });
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..12 {
        sched.tick(secs(0.1), &mut a);
        restored.tick(secs(0.1), &mut b);
    }
    assert_eq!(a, ["woke at 11.0"]);
    assert_eq!(b, a);
}
