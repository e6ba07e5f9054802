//! The test world shared by the scheduler snapshot tests: a game context, every tick
//! function, timer callback and latent completion by name, a resolver that binds them, and
//! the world itself with the inputs every run gets.
// Each test crate that includes this module uses a different part of it.
#![allow(dead_code, unused_imports)]

pub use tickflow::latent::{
    Completion, DelayUntilNextTick, LatentAction, LatentInfo, LatentResponse, SavedAction,
};
pub use tickflow::prelude::*;
pub use tickflow::snapshot::{
    sync_test, Registry, Resolver, RestoreError, SchedulerSnapshot, SyncError, FORMAT_VERSION,
};
use tickflow::snapshot::{BindLatent, BindTickables, BindTicks, BindTimers};
pub use tickflow::tick::{TickBody, TickInfo};
pub use tickflow::tickable::TickableInfo;
pub use tickflow::timer::{TimerCallback, TimerInfo};
use tickflow::{Deferred, Tickable, TickableCx};

#[derive(Clone, Debug, Default, PartialEq, Hash)]
pub struct Game {
    pub log: Vec<String>,
    pub hp: i64,
}

pub const POISONED: OwnerId = OwnerId::new(5);
pub const DOOR: OwnerId = OwnerId::new(1);

pub type TickFn = Box<dyn FnMut(&mut Game, &mut TickCx<'_, Game>) + Send>;

/// Every tick function of the test world, by name (used to build it and by the resolver).
pub fn tick_fn(name: &str) -> Option<TickFn> {
    let name = name.to_owned();
    Some(match name.as_str() {
        "spawner" => Box::new(|g: &mut Game, cx: &mut TickCx<Game>| {
            if cx.clocks().frame() % 20 == 0 {
                let s = TickSettings::named("spawned").in_group(TickGroup::PostUpdateWork);
                cx.commands().ticks().add(s, tick_fn("spawned").unwrap());
            }
            g.log.push(format!("spawner {}", cx.clocks().frame()));
        }),
        "input" | "physics" | "ai" | "slow" | "off" | "spawned" | "late" | "x" => {
            Box::new(move |g: &mut Game, cx: &mut TickCx<Game>| {
                g.log.push(format!(
                    "{name} {} {:?} {}",
                    cx.clocks().frame(),
                    cx.group(),
                    cx.dt().flicks()
                ));
            })
        }
        _ => return None,
    })
}

/// The parallel tick function "par": reads the context on a worker, writes through
/// `Deferred` (its state is `()`: state that must survive a rollback lives in the context).
pub fn par(_: &mut (), g: &Game, out: &mut Deferred<Game>) {
    let (frame, seen) = (out.clocks().frame(), g.log.len());
    out.run(move |g| g.log.push(format!("par {frame} {seen}")));
}

pub fn timer_cb(name: &str) -> Option<TimerCallback<Game>> {
    let name = name.to_owned();
    Some(match name.as_str() {
        "wave" => Box::new(|g: &mut Game, cx: &mut TimerCx<Game>| {
            g.log.push(format!("wave {}", cx.call_index()));
            cx.timers()
                .after(millis(70))
                .name("boom")
                .call(timer_cb("boom").unwrap());
        }),
        // A callback with state of its own, which no snapshot holds (a rollback test finds
        // it: the restored one counts from zero again).
        "hidden" => {
            let mut count = 0;
            Box::new(move |g: &mut Game, _: &mut TimerCx<Game>| {
                count += 1;
                g.hp += count;
            })
        }
        "regen" | "poison" | "boom" | "frozen" | "late" => {
            Box::new(move |g: &mut Game, cx: &mut TimerCx<Game>| {
                g.hp += 1;
                g.log.push(format!(
                    "{name} {} {} {}",
                    cx.call_index(),
                    cx.scheduled().flicks(),
                    cx.calls_this_tick()
                ));
            })
        }
        _ => return None,
    })
}

/// The completion of the latent action under `(owner, uuid)`.
pub fn completion(owner: OwnerId, uuid: u64) -> impl FnMut(&mut Game, &mut LatentCx<'_, Game>) {
    move |g: &mut Game, _: &mut LatentCx<'_, Game>| {
        g.log.push(format!("done {} {uuid}", owner.get()))
    }
}

/// A custom latent action that saves itself: completes after `n` more updates.
pub struct Blink(pub u8);

impl LatentAction<Game> for Blink {
    fn update(&mut self, r: &mut LatentResponse, _: &mut Game) {
        self.0 = self.0.saturating_sub(1);
        r.finish_and_trigger_if(self.0 == 0);
    }
    fn describe(&self) -> String {
        format!("Blink {}", self.0)
    }
    fn save(&self) -> Option<SavedAction> {
        Some(SavedAction::Custom {
            kind: "blink".into(),
            data: vec![self.0],
        })
    }
}

pub struct Score;
impl Tickable<Game> for Score {
    fn tick(&mut self, g: &mut Game, cx: &mut TickableCx<'_, Game>) {
        let dt = cx.dt();
        g.log.push(format!("score {}", dt.flicks()));
    }
    fn name(&self) -> &str {
        "score"
    }
}

/// Binds everything of the test world by name; `missing` names one thing it refuses.
#[derive(Default)]
pub struct World {
    pub missing: &'static str,
    pub asked: Vec<String>,
}

impl BindTimers<Game> for World {
    fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<Game>> {
        let name = info.name.as_deref()?;
        self.asked.push(format!("timer {name}"));
        (name != self.missing).then(|| timer_cb(name)).flatten()
    }
}

impl BindTicks<Game> for World {
    fn tick(&mut self, info: &TickInfo) -> Option<TickBody<Game>> {
        self.asked.push(format!("tick {}", info.settings.name));
        if info.settings.name == "par" {
            return Some(TickBody::parallel((), par));
        }
        let f = (info.settings.name != self.missing).then(|| tick_fn(&info.settings.name))??;
        Some(TickBody::serial(f))
    }
}

impl BindTickables<Game> for World {
    fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<Game>>> {
        self.asked.push(format!("tickable {}", info.name));
        (info.name == "score").then(|| Box::new(Score) as Box<dyn Tickable<Game>>)
    }
}

impl BindLatent<Game> for World {
    fn latent(&mut self, info: &LatentInfo) -> Option<Completion<Game>> {
        self.asked.push(format!("latent {}", info.uuid));
        Some(Box::new(completion(info.owner, info.uuid)))
    }

    fn latent_action(&mut self, kind: &str, data: &[u8]) -> Option<Box<dyn LatentAction<Game>>> {
        (kind == "blink").then(|| Box::new(Blink(data[0])) as Box<dyn LatentAction<Game>>)
    }
}

impl Resolver<Game> for World {}

pub fn build() -> (Scheduler<Game>, Game) {
    let mut s = Scheduler::<Game>::new();
    let add = |s: &mut Scheduler<Game>, settings: TickSettings| {
        let f = tick_fn(&settings.name).unwrap();
        s.ticks().add(settings, f)
    };
    add(&mut s, TickSettings::named("input"));
    let physics = add(
        &mut s,
        TickSettings::named("physics").in_group(TickGroup::DuringPhysics),
    );
    let ai = add(
        &mut s,
        TickSettings {
            interval: secs(0.2),
            ..TickSettings::named("ai")
        },
    );
    s.ticks().add_prerequisite(ai, physics).unwrap();
    add(
        &mut s,
        TickSettings {
            time_dilation: 0.5,
            tick_when_paused: true,
            ..TickSettings::named("slow")
        },
    );
    add(
        &mut s,
        TickSettings {
            enabled: false,
            ..TickSettings::named("off")
        },
    );
    add(
        &mut s,
        TickSettings::named("spawner").in_group(TickGroup::PostPhysics),
    );
    s.tickables().add(Score);
    let t = s.timers();
    t.every(millis(100))
        .name("regen")
        .call(timer_cb("regen").unwrap());
    t.every(millis(250))
        .name("poison")
        .times(6)
        .owner(POISONED)
        .call(timer_cb("poison").unwrap());
    t.every(Frames(30))
        .name("wave")
        .call(timer_cb("wave").unwrap());
    let frozen = t
        .after(millis(300))
        .name("frozen")
        .catch_up(CatchUp::Once)
        .call(timer_cb("frozen").unwrap());
    t.pause(frozen);
    s.latent().delay(DOOR, 1, secs(1.0), completion(DOOR, 1));
    s.latent()
        .retriggerable_delay(DOOR, 2, secs(0.5), completion(DOOR, 2));
    s.latent()
        .add(POISONED, 3, Blink(70), completion(POISONED, 3));
    s.latent()
        .add(DOOR, 4, DelayUntilNextTick, completion(DOOR, 4));
    (
        s,
        Game {
            hp: 100,
            ..Game::default()
        },
    )
}

pub fn dt(frame: u64) -> Span {
    Span::frames(1, 60) + millis(frame % 3)
}

/// The same inputs for every run: what the player does before frame `frame`.
pub fn input(s: &mut Scheduler<Game>, frame: u64) {
    match frame {
        55 => s.set_paused(true),
        60 => s.set_paused(false),
        65 => s.set_time_dilation(0.5),
        70 => {
            s.timers()
                .after(millis(90))
                .name("late")
                .call(timer_cb("late").unwrap());
        }
        75 => {
            s.latent()
                .retriggerable_delay(DOOR, 2, secs(0.3), completion(DOOR, 2));
            let late = TickSettings::named("late").in_group(TickGroup::EndPhysics);
            s.ticks().add(late, tick_fn("late").unwrap());
        }
        80 => s.remove_owner(POISONED),
        _ => {}
    }
}

/// Runs frames `from..=to`; returns the log of those frames and the hash after each.
pub fn run(s: &mut Scheduler<Game>, g: &mut Game, from: u64, to: u64) -> (Vec<String>, Vec<u64>) {
    let start = g.log.len();
    let mut hashes = Vec::new();
    for frame in from..=to {
        input(s, frame);
        s.tick(dt(frame), g);
        hashes.push(s.state_hash());
    }
    (g.log[start..].to_vec(), hashes)
}

pub fn restore(snap: &SchedulerSnapshot) -> Scheduler<Game> {
    let (s, report) = Scheduler::restore(snap, &mut World::default()).unwrap();
    assert!(report.is_complete(), "{report}");
    s
}
