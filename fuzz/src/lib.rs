//! What the fuzz targets share: a game context, a resolver that binds anything a snapshot
//! can name (as a server that knows every callback of its game would), and a busy world to
//! import into, with functions whose names moved prerequisites can be re-linked to.
//!
//! The rules the targets hold are the documented ones for untrusted bytes: `import_owner`
//! and `restore` never panic, never hang, allocate in proportion to their input, and change
//! nothing when they refuse; what they accept behaves like any other scheduler (it runs, it
//! snapshots, the snapshot restores to the same state).

use tickflow::latent::{LatentAction, LatentInfo, LatentResponse, SavedAction};
use tickflow::prelude::*;
use tickflow::snapshot::{BindLatent, BindTickables, BindTicks, BindTimers, Resolver};
use tickflow::tick::{TickBody, TickInfo};
use tickflow::tickable::{TickableInfo, TickableMode};
use tickflow::timer::{TimerCallback, TimerInfo};
use tickflow::{Deferred, Tickable, TickableCx};

/// The game state every callback sees. `Sync`, so parallel tick functions can be bound.
#[derive(Debug, Default)]
pub struct Game {
    /// Calls made, of every kind.
    pub calls: u64,
}

/// A frame of the fuzz worlds: 1/60 s.
pub fn frame() -> Span {
    Span::frames(1, 60)
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

/// A tickable that takes whatever name, owner and mode it is restored with.
pub struct Echo {
    name: String,
    owner: Option<OwnerId>,
    mode: TickableMode,
}

impl Echo {
    /// A tickable with this name and owner, ticked every frame.
    pub fn new(name: &str, owner: Option<OwnerId>) -> Echo {
        Echo {
            name: name.into(),
            owner,
            mode: TickableMode::Always,
        }
    }
}

impl Tickable<Game> for Echo {
    fn tick(&mut self, g: &mut Game, _cx: &mut TickableCx<'_, Game>) {
        g.calls += 1;
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn owner(&self) -> Option<OwnerId> {
        self.owner
    }
    fn mode(&self) -> TickableMode {
        self.mode
    }
}

/// A timer callback by name: "chain" sets another timer, "stop" clears itself, anything
/// else counts.
pub fn timer_cb(name: Option<&str>) -> TimerCallback<Game> {
    match name {
        Some("chain") => Box::new(|g: &mut Game, cx: &mut TimerCx<Game>| {
            g.calls += 1;
            if cx.call_index() < 3 {
                cx.timers().after(millis(20)).name("count").call(count);
            }
        }),
        Some("stop") => Box::new(|g: &mut Game, cx: &mut TimerCx<Game>| {
            g.calls += 1;
            cx.clear_self();
        }),
        _ => Box::new(count),
    }
}

fn count(g: &mut Game, _: &mut TimerCx<Game>) {
    g.calls += 1;
}

/// Binds every callback a snapshot can name.
pub struct Anything;

impl BindTimers<Game> for Anything {
    fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<Game>> {
        Some(timer_cb(info.name.as_deref()))
    }

    fn timer_on_cancel(&mut self, _: &TimerInfo) -> Option<tickflow::timer::CancelHook<Game>> {
        Some(Box::new(|g: &mut Game| g.calls += 1))
    }
}

impl BindTicks<Game> for Anything {
    fn tick(&mut self, info: &TickInfo) -> Option<TickBody<Game>> {
        Some(if info.parallel {
            TickBody::parallel((), |_: &mut (), _: &Game, _: &mut Deferred<Game>| {})
        } else {
            TickBody::serial(|g: &mut Game, _: &mut TickCx<Game>| g.calls += 1)
        })
    }
}

impl BindTickables<Game> for Anything {
    fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<Game>>> {
        Some(Box::new(Echo {
            name: info.name.clone(),
            owner: info.owner,
            mode: info.mode,
        }))
    }
}

impl BindLatent<Game> for Anything {
    fn latent(&mut self, _: &LatentInfo) -> Option<tickflow::latent::Completion<Game>> {
        Some(Box::new(|g: &mut Game, _| g.calls += 1))
    }

    fn latent_action(&mut self, kind: &str, data: &[u8]) -> Option<Box<dyn LatentAction<Game>>> {
        match (kind, data) {
            ("blink", &[n]) => Some(Box::new(Blink(n))),
            _ => None,
        }
    }
}

impl Resolver<Game> for Anything {}

/// The owner the seeds move.
pub const MOVER: OwnerId = OwnerId::new(7);

/// Gives `owner` one of everything that can move: named timers (one-shot, looping, limited,
/// paused, frame-counted, with a hook, durable with a payload), tick functions with prerequisites among themselves
/// and on `other`'s functions, an interval function, a tickable and latent actions.
pub fn populate(s: &mut Scheduler<Game>, owner: OwnerId, other: OwnerId) {
    s.timers()
        .every(millis(250))
        .owner(owner)
        .name("regen")
        .tag(3)
        .payload([1, 2, 3])
        .durable(tickflow::timer::Offline::CatchUp)
        .call(count);
    s.timers()
        .after(millis(700))
        .owner(owner)
        .name("chain")
        .on_cancel(|g: &mut Game| g.calls += 1)
        .call(timer_cb(Some("chain")));
    s.timers()
        .every(millis(100))
        .times(4)
        .owner(owner)
        .name("stop")
        .call(timer_cb(Some("stop")));
    let paused = s.timers().every(secs(1.0)).owner(owner).call(count);
    s.timers().pause(paused);
    s.timers()
        .every(Frames(3))
        .owner(owner)
        .catch_up(CatchUp::Once)
        .call(count);
    let body = |g: &mut Game, _: &mut TickCx<Game>| g.calls += 1;
    let outside = s
        .ticks()
        .add(TickSettings::named("world").owned_by(other), body);
    let a = s
        .ticks()
        .add(TickSettings::named("move").owned_by(owner), body);
    let b = s.ticks().add(
        TickSettings::named("think")
            .owned_by(owner)
            .every(millis(150))
            .in_group(TickGroup::PostPhysics),
        body,
    );
    s.ticks().add_prerequisite(b, a).expect("no cycle");
    s.ticks().add_prerequisite(a, outside).expect("no cycle");
    s.tickables().add(Echo::new("aura", Some(owner)));
    s.latent()
        .delay(owner, 1, millis(300), |g: &mut Game, _| g.calls += 1);
    s.latent()
        .retriggerable_delay(owner, 2, millis(500), |g: &mut Game, _| g.calls += 1);
    s.latent()
        .add(owner, 3, Blink(9), |g: &mut Game, _| g.calls += 1);
}

/// A scheduler in mid-game: other owners' timers, functions (one named "world", which moved
/// functions wait for), a tickable and latent actions, a few frames in.
pub fn busy_world() -> (Scheduler<Game>, Game) {
    let mut s = Scheduler::new();
    let mut g = Game::default();
    for k in 100..104 {
        populate(&mut s, OwnerId::new(k), OwnerId::new(k + 50));
    }
    s.tickables().add(Echo::new("hud", None));
    for _ in 0..5 {
        s.tick(frame(), &mut g);
    }
    (s, g)
}
