//! The world of the owner-move tests: two owners with every kind of item, callbacks that log
//! what they were called with, and a resolver that binds them again by name.
// Each test crate that includes this module uses a different part of it.
#![allow(dead_code)]

pub use tickflow::latent::{LatentInfo, RetriggerableDelay};
pub use tickflow::prelude::*;
use tickflow::snapshot::{BindLatent, BindTickables, BindTicks, BindTimers};
pub use tickflow::snapshot::{HandleMap, ImportError, OwnerSnapshot, Resolver, RestoreError};
pub use tickflow::tick::{TickBody, TickInfo};
pub use tickflow::tickable::TickableInfo;
pub use tickflow::timer::{CancelHook, TimerCallback, TimerInfo};
use tickflow::{Tickable, TickableCx};

pub const ORC: OwnerId = OwnerId::new(3);
pub const ELF: OwnerId = OwnerId::new(4);

/// The context: the frame being run (set by the loop) and what was called, one line each,
/// starting with the owner's number.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Game {
    pub frame: u64,
    pub log: Vec<String>,
}

impl Game {
    /// The lines of one owner, in order.
    pub fn of(&self, owner: OwnerId) -> Vec<String> {
        let prefix = format!("{} ", owner.get());
        (self.log.iter())
            .filter(|l| l.starts_with(&prefix))
            .cloned()
            .collect()
    }
}

/// Asserts that two logs are equal, showing the first difference and what led to it.
#[track_caller]
pub fn same(a: &[String], b: &[String], what: &str) {
    let at = (0..a.len().max(b.len())).find(|&k| a.get(k) != b.get(k));
    if let Some(k) = at {
        let from = k.saturating_sub(3);
        panic!(
            "{what}: logs differ at line {k}\n  left:  {:?}\n  right: {:?}",
            &a[from..(k + 2).min(a.len())],
            &b[from..(k + 2).min(b.len())]
        );
    }
}

/// A timer callback named `name` of `owner`: logs the frame, the scheduled time and the
/// call index.
pub fn timer_cb(owner: OwnerId, name: &str) -> TimerCallback<Game> {
    let name = format!("{} {name}", owner.get());
    Box::new(move |g: &mut Game, cx: &mut TimerCx<Game>| {
        let (at, k) = (cx.scheduled().flicks(), cx.call_index());
        g.log.push(format!("{name} f{} at {at} #{k}", g.frame));
    })
}

/// A tick function of `owner` named `name`: logs the frame, group and delta.
pub fn tick_cb(
    owner: OwnerId,
    name: &str,
) -> impl FnMut(&mut Game, &mut TickCx<'_, Game>) + Send + 'static {
    let name = format!("{} {name}", owner.get());
    move |g: &mut Game, cx: &mut TickCx<Game>| {
        let line = format!(
            "{name} f{} {:?} dt {}",
            cx.clocks().frame(),
            cx.group(),
            cx.dt().flicks()
        );
        g.log.push(line);
    }
}

/// A latent completion: logs the frame.
pub fn done_cb(owner: OwnerId, uuid: u64) -> tickflow::latent::Completion<Game> {
    Box::new(move |g: &mut Game, _| {
        g.log
            .push(format!("{} latent {uuid} f{}", owner.get(), g.frame))
    })
}

/// A tickable of an owner: logs its delta, and how often it ticked (its own state).
pub struct Hud {
    pub owner: OwnerId,
    pub ticks: u64,
}

impl Tickable<Game> for Hud {
    fn tick(&mut self, g: &mut Game, cx: &mut TickableCx<'_, Game>) {
        let dt = cx.dt();
        self.ticks += 1;
        let line = format!(
            "{} hud f{} dt {} n{}",
            self.owner.get(),
            g.frame,
            dt.flicks(),
            self.ticks
        );
        g.log.push(line);
    }
    fn name(&self) -> &str {
        "hud"
    }
    fn owner(&self) -> Option<OwnerId> {
        Some(self.owner)
    }
}

/// Binds every callback of the world by name and owner; counts what it was asked.
#[derive(Default)]
pub struct Bind {
    pub asked: usize,
    /// Leaves timers with this name unbound (to make an import fail).
    pub refuse: Option<&'static str>,
    /// Builds every tickable for this owner instead of its own (to make an import fail).
    pub hud_for: Option<OwnerId>,
}

impl BindTimers<Game> for Bind {
    fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<Game>> {
        self.asked += 1;
        let name = info.name.as_deref()?;
        if self.refuse == Some(name) {
            return None;
        }
        Some(timer_cb(info.owner?, name))
    }

    fn timer_on_cancel(&mut self, info: &TimerInfo) -> Option<CancelHook<Game>> {
        let line = format!("{} cancelled {}", info.owner?.get(), info.name.as_deref()?);
        Some(Box::new(move |g: &mut Game| g.log.push(line)))
    }
}

impl BindTicks<Game> for Bind {
    fn tick(&mut self, info: &TickInfo) -> Option<TickBody<Game>> {
        self.asked += 1;
        let name = info.settings.name.split_once(' ').map_or("", |(_, n)| n);
        let owner = info.settings.owner?;
        Some(TickBody::serial(tick_cb(owner, name)))
    }
}

impl BindTickables<Game> for Bind {
    fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<Game>>> {
        self.asked += 1;
        let owner = self.hud_for.or(info.owner)?;
        Some(Box::new(Hud { owner, ticks: 0 }))
    }
}

impl BindLatent<Game> for Bind {
    fn latent(&mut self, info: &LatentInfo) -> Option<tickflow::latent::Completion<Game>> {
        self.asked += 1;
        Some(done_cb(info.owner, info.uuid))
    }
}

impl Resolver<Game> for Bind {}

/// Registers a tick function of `owner` named "{owner} {name}".
pub fn add_tick(
    s: &mut Scheduler<Game>,
    owner: OwnerId,
    name: &str,
    settings: TickSettings,
) -> TickHandle {
    let settings = TickSettings {
        owner: Some(owner),
        name: format!("{} {name}", owner.get()),
        ..settings
    };
    s.ticks().add(settings, tick_cb(owner, name))
}

/// Gives `owner` one of every kind of item; its "aim" waits for `physics` (another
/// owner's function) when given.
pub fn populate(s: &mut Scheduler<Game>, owner: OwnerId, physics: Option<TickHandle>) {
    let t = s.timers();
    t.every(millis(300))
        .owner(owner)
        .name("regen")
        .call(timer_cb(owner, "regen"));
    t.after(secs(1.0))
        .owner(owner)
        .name("explode")
        .on_cancel(move |g: &mut Game| g.log.push(format!("{} cancelled explode", owner.get())))
        .call(timer_cb(owner, "explode"));
    let frozen = t
        .after(millis(500))
        .owner(owner)
        .name("frozen")
        .call(timer_cb(owner, "frozen"));
    t.pause(frozen);
    t.every(Frames(3))
        .owner(owner)
        .name("blink")
        .call(timer_cb(owner, "blink"));
    t.every(millis(200))
        .times(3)
        .tag(77)
        .owner(owner)
        .name("poison")
        .call(timer_cb(owner, "poison"));
    t.every(millis(200))
        .first_delay(millis(50))
        .owner(owner)
        .name("burst")
        .call(timer_cb(owner, "burst"));
    t.every(secs(0.25))
        .real()
        .catch_up(CatchUp::Once)
        .owner(owner)
        .name("real")
        .call(timer_cb(owner, "real"));
    let mv = add_tick(s, owner, "move", TickSettings::default());
    let think = add_tick(
        s,
        owner,
        "think",
        TickSettings::default().every(millis(250)),
    );
    s.ticks().add_prerequisite(think, mv).unwrap();
    let aim = add_tick(
        s,
        owner,
        "aim",
        TickSettings::default().every(millis(100)).dilated(2.0),
    );
    if let Some(physics) = physics {
        s.ticks().add_prerequisite(aim, physics).unwrap();
    }
    add_tick(
        s,
        owner,
        "late",
        TickSettings::default().in_group(TickGroup::PostPhysics),
    );
    s.tickables().add(Hud { owner, ticks: 0 });
    let l = s.latent();
    l.delay(owner, 1, millis(700), done_cb(owner, 1));
    l.add(
        owner,
        2,
        RetriggerableDelay::new(millis(400)),
        done_cb(owner, 2),
    );
}

/// A world with a shared system function and both owners.
pub fn world() -> Scheduler<Game> {
    let mut s = Scheduler::new();
    let physics = TickSettings::named("world physics").in_group(TickGroup::DuringPhysics);
    let physics = s.ticks().add(physics, |g: &mut Game, cx| {
        g.log.push(format!("world f{}", cx.clocks().frame()))
    });
    populate(&mut s, ORC, Some(physics));
    populate(&mut s, ELF, Some(physics));
    s
}

/// Runs `frames` frames of 1/60 s (the real clock runs 1.5× as fast, to tell the clocks apart).
pub fn run(s: &mut Scheduler<Game>, g: &mut Game, frames: u64) {
    for _ in 0..frames {
        g.frame = s.clocks().frame() + 1;
        s.tick_split(Span::frames(1, 60), Span::frames(1, 40), g);
    }
}
