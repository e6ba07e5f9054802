//! Random operation sequences on the public API, against its documented rules:
//! - a handle answers `false`/`None` once its item is gone, and so does another scheduler's;
//! - `clear`, `remove_tick`, `remove_tickable` return `true` once;
//! - a prerequisite cycle is refused, and the graph stays usable;
//! - any setting the API accepts leaves a scheduler that runs; one frame is bounded work
//!   whatever the delta (libFuzzer's timeout catches a hang);
//! - a snapshot restores to the same state hash, and both then run the same frames alike
//!   (when the restore report is complete: queued hooks and tasks are closures);
//! - an owner exported and imported into another scheduler arrives whole and comes back.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tickflow::prelude::*;
use tickflow::snapshot::ImportError;
use tickflow::{Deferred, TickableHandle};
use tickflow_fuzz::{populate, timer_cb, Anything, Echo, Game};

#[derive(Arbitrary, Debug)]
enum Op {
    After {
        ms: u16,
        owner: u8,
        name: u8,
    },
    Every {
        ms: u16,
        owner: u8,
        times: Option<u8>,
        catch_up: u8,
    },
    EveryFrames {
        n: u8,
        owner: u8,
    },
    Clear(u8),
    Pause(u8),
    Unpause(u8),
    Restart(u8),
    SetRate(u8, u16),
    FireNow(u8),
    ClearOwner(u8),
    PauseOwner(u8),
    AddTick {
        owner: u8,
        group: u8,
        interval_ms: u8,
        parallel: bool,
    },
    RemoveTick(u8),
    Prereq(u8, u8),
    RemovePrereq(u8, u8),
    Enable(u8, bool),
    Interval(u8, u16),
    AddTickable(u8),
    RemoveTickable(u8),
    Delay {
        owner: u8,
        uuid: u8,
        ms: u16,
    },
    Retrigger {
        owner: u8,
        uuid: u8,
        ms: u16,
    },
    RemoveOwner(u8),
    Populate(u8),
    Tick(u32),
    TickSecs(u16),
    /// Pause, and whether a pause stops the frame clock.
    Paused(bool, bool),
    Dilation(u8),
    MaxDelta(u16),
    Budget(Option<u8>),
    Foreign(u8),
    SnapshotRestore,
    MoveAway(u8),
    MoveBack(u8),
}

fn owner(k: u8) -> OwnerId {
    OwnerId::new(u64::from(k % 8) + 1)
}

fn pick<T: Copy>(list: &[T], k: u8) -> Option<T> {
    (!list.is_empty()).then(|| list[k as usize % list.len()])
}

struct World {
    s: Scheduler<Game>,
    g: Game,
    /// Another scheduler: a peer shard, and the source of foreign handles.
    other: Scheduler<Game>,
    timers: Vec<TimerHandle>,
    ticks: Vec<TickHandle>,
    tickables: Vec<TickableHandle>,
    foreign: (TimerHandle, TickHandle, TickableHandle),
}

impl World {
    fn new() -> World {
        let mut other = Scheduler::new();
        let t = other.timers().after(secs(1.0)).call(|_, _| {});
        let k = other.ticks().add(TickSettings::named("peer"), |_, _| {});
        let b = other.tickables().add(Echo::new("peer", None));
        World {
            s: Scheduler::new(),
            g: Game::default(),
            other,
            timers: Vec::new(),
            ticks: Vec::new(),
            tickables: Vec::new(),
            foreign: (t, k, b),
        }
    }

    fn apply(&mut self, op: Op) {
        let s = &mut self.s;
        match op {
            Op::After { ms, owner: o, name } => {
                let name = ["count", "chain", "stop"][name as usize % 3];
                let h = (s
                    .timers()
                    .after(millis(ms.into()))
                    .owner(owner(o))
                    .name(name))
                .call(timer_cb(Some(name)));
                self.timers.push(h);
            }
            Op::Every {
                ms,
                owner: o,
                times,
                catch_up,
            } => {
                let policy = [CatchUp::Burst, CatchUp::Once, CatchUp::Delay][catch_up as usize % 3];
                let mut b = s
                    .timers()
                    .every(millis(ms.into()))
                    .owner(owner(o))
                    .catch_up(policy);
                if let Some(n) = times {
                    b = b.times(n.into());
                }
                self.timers.push(b.call(timer_cb(None)));
            }
            Op::EveryFrames { n, owner: o } => {
                let h = s
                    .timers()
                    .every(Frames(n.into()))
                    .owner(owner(o))
                    .call(timer_cb(None));
                self.timers.push(h);
            }
            Op::Clear(k) => {
                if let Some(h) = pick(&self.timers, k) {
                    if s.timers().clear(h) {
                        assert!(!s.timers().exists(h), "a cleared timer exists");
                        assert!(!s.timers().clear(h), "a timer was cleared twice");
                        assert_eq!(s.timers().remaining(h), None);
                    }
                }
            }
            Op::Pause(k) => {
                if let Some(h) = pick(&self.timers, k) {
                    if s.timers().pause(h) {
                        assert!(s.timers().is_paused(h));
                    }
                }
            }
            Op::Unpause(k) => {
                if let Some(h) = pick(&self.timers, k) {
                    s.timers().unpause(h);
                }
            }
            Op::Restart(k) => {
                if let Some(h) = pick(&self.timers, k) {
                    s.timers().restart(h);
                }
            }
            Op::SetRate(k, ms) => {
                if let Some(h) = pick(&self.timers, k) {
                    s.timers().set_rate(h, millis(ms.into()));
                }
            }
            Op::FireNow(k) => {
                if let Some(h) = pick(&self.timers, k) {
                    let made = s.timers().calls_made(h);
                    if s.timers().fire_now(h, &mut self.g) {
                        let after = s.timers().calls_made(h);
                        assert!(after.is_none() || after > made, "fire_now made no call");
                    }
                }
            }
            Op::ClearOwner(o) => {
                s.timers().clear_owner(owner(o));
            }
            Op::PauseOwner(o) => {
                s.timers().pause_owner(owner(o));
            }
            Op::AddTick {
                owner: o,
                group,
                interval_ms,
                parallel,
            } => {
                let settings = TickSettings::named(format!("t{}", self.ticks.len() % 5))
                    .owned_by(owner(o))
                    .in_group(TickGroup::ALL[group as usize % TickGroup::ALL.len()])
                    .every(millis(interval_ms.into()));
                let h = if parallel {
                    s.ticks().add_parallel(
                        settings,
                        (),
                        |_: &mut (), _: &Game, _: &mut Deferred<Game>| {},
                    )
                } else {
                    s.ticks()
                        .add(settings, |g: &mut Game, _: &mut TickCx<Game>| g.calls += 1)
                };
                self.ticks.push(h);
            }
            Op::RemoveTick(k) => {
                if let Some(h) = pick(&self.ticks, k) {
                    if s.ticks().remove(h) {
                        assert!(!s.ticks().contains(h) && !s.ticks().remove(h));
                    }
                }
            }
            Op::Prereq(a, b) => {
                if let (Some(a), Some(b)) = (pick(&self.ticks, a), pick(&self.ticks, b)) {
                    let live = s.ticks().contains(a) && s.ticks().contains(b);
                    let r = s.ticks().add_prerequisite(a, b);
                    assert!(live || r.is_err(), "a prerequisite on a removed function");
                    if a == b {
                        assert!(r.is_err(), "a function waits for itself");
                    }
                    if r.is_ok() && a != b {
                        assert!(
                            s.ticks().add_prerequisite(b, a).is_err(),
                            "a two-function cycle"
                        );
                    }
                }
            }
            Op::RemovePrereq(a, b) => {
                if let (Some(a), Some(b)) = (pick(&self.ticks, a), pick(&self.ticks, b)) {
                    s.ticks().remove_prerequisite(a, b);
                }
            }
            Op::Enable(k, on) => {
                if let Some(h) = pick(&self.ticks, k) {
                    if s.ticks().set_enabled(h, on) {
                        assert_eq!(s.ticks().is_enabled(h), on);
                    }
                }
            }
            Op::Interval(k, ms) => {
                if let Some(h) = pick(&self.ticks, k) {
                    s.ticks().set_interval(h, millis(ms.into()));
                }
            }
            Op::AddTickable(o) => {
                let h = s.tickables().add(Echo::new("echo", Some(owner(o))));
                self.tickables.push(h);
            }
            Op::RemoveTickable(k) => {
                if let Some(h) = pick(&self.tickables, k) {
                    if s.tickables().remove(h) {
                        assert!(!s.tickables().contains(h) && !s.tickables().remove(h));
                    }
                }
            }
            Op::Delay { owner: o, uuid, ms } => {
                s.latent().delay(
                    owner(o),
                    uuid.into(),
                    millis(ms.into()),
                    |g: &mut Game, _| g.calls += 1,
                );
            }
            Op::Retrigger { owner: o, uuid, ms } => {
                s.latent()
                    .retriggerable_delay(owner(o), uuid.into(), millis(ms.into()), |g, _| {
                        g.calls += 1
                    });
            }
            Op::RemoveOwner(o) => {
                s.remove_owner(owner(o));
                assert_eq!(s.latent().count_for_owner(owner(o)), 0);
            }
            Op::Populate(o) => populate(s, owner(o), owner(o.wrapping_add(1))),
            Op::Tick(flicks) => {
                s.tick(Span::from_flicks(flicks.into()), &mut self.g);
            }
            Op::TickSecs(n) => {
                // Long frames: max_delta and the catch-up cap bound the work.
                s.tick(Span::from_secs(n.into()), &mut self.g);
            }
            Op::Paused(on, frames_stop) => {
                s.set_paused(on);
                s.set_frame_clock_pauses(frames_stop);
            }
            Op::Dilation(k) => s.set_time_dilation(f64::from(k) / 16.0),
            Op::MaxDelta(ms) => s.set_max_delta(millis(u64::from(ms).max(1))),
            Op::Budget(b) => s.timers().set_fire_budget(b.map(usize::from)),
            Op::Foreign(k) => {
                let (t, tick, b) = self.foreign;
                assert!(!s.timers().exists(t) && !s.timers().clear(t));
                assert_eq!(s.timers().remaining(t), None);
                assert!(!s.ticks().contains(tick) && !s.ticks().remove(tick));
                assert!(!s.ticks().set_enabled(tick, k % 2 == 0));
                assert!(!s.tickables().contains(b) && !s.tickables().remove(b));
                if let Some(h) = pick(&self.timers, k) {
                    assert!(
                        !self.other.timers().exists(h),
                        "a handle reached another scheduler"
                    );
                }
            }
            Op::SnapshotRestore => {
                let saved = s.snapshot();
                let (mut back, report) =
                    Scheduler::restore(&saved, &mut Anything).expect("a snapshot restores");
                if !report.is_complete() {
                    // Queued on_cancel hooks and tasks are closures: the report says what did
                    // not come back, and the states differ by exactly that.
                    return;
                }
                assert_eq!(back.state_hash(), s.state_hash());
                let mut g = Game {
                    calls: self.g.calls,
                };
                let dt = Span::frames(1, 60);
                s.tick(dt, &mut self.g);
                back.tick(dt, &mut g);
                assert_eq!(
                    back.state_hash(),
                    s.state_hash(),
                    "a restore ran differently"
                );
            }
            Op::MoveAway(o) => {
                let o = owner(o);
                if s.is_frozen(o) {
                    return;
                }
                let moved = s.export_owner(o);
                match self.other.import_owner(&moved, &mut Anything) {
                    Err(ImportError::LatentKeyInUse { .. }) => {}
                    other => drop(other.expect("an exported owner imports")),
                }
            }
            Op::MoveBack(o) => {
                let o = owner(o);
                if self.other.is_frozen(o) {
                    return;
                }
                let moved = self.other.export_owner(o);
                let before = s.state_hash();
                match s.import_owner(&moved, &mut Anything) {
                    // Latent actions the owner started here meanwhile keep their keys.
                    Err(ImportError::LatentKeyInUse { .. }) => {
                        assert_eq!(s.state_hash(), before, "a refused import changed nothing");
                    }
                    other => drop(other.expect("an exported owner imports")),
                }
            }
        }
    }
}

fuzz_target!(|ops: Vec<Op>| {
    let mut w = World::new();
    for op in ops.into_iter().take(256) {
        w.apply(op);
    }
});
