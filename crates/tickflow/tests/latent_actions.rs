//! Latent actions through the scheduler: the Delay family, ordering, owners, clocks.

use tickflow::latent::{Delay, LatentAction, LatentResponse};
use tickflow::prelude::*;

struct Game {
    log: Vec<String>,
    frame: u64,
    flag: bool,
}

const O: OwnerId = OwnerId::new(1);

/// A scheduler whose first tick function records the frame number in `Game::frame`.
fn world() -> (Scheduler<Game>, Game) {
    let mut sched = Scheduler::new();
    let s = TickSettings {
        tick_when_paused: true,
        ..TickSettings::named("frame")
    };
    sched
        .ticks()
        .add(s, |g: &mut Game, cx| g.frame = cx.clocks().frame());
    let game = Game {
        log: Vec::new(),
        frame: 0,
        flag: false,
    };
    (sched, game)
}

fn done(what: &'static str) -> impl FnMut(&mut Game, &mut LatentCx<'_, Game>) {
    move |g: &mut Game, _: &mut LatentCx<'_, Game>| g.log.push(format!("{what} @{}", g.frame))
}

fn run(sched: &mut Scheduler<Game>, game: &mut Game, frames: usize, dt: f64) {
    for _ in 0..frames {
        sched.tick(secs(dt), game);
    }
}

#[test]
fn delay_is_inclusive_and_reentry_is_ignored() {
    let (mut sched, mut game) = world();
    assert!(sched.latent().delay(O, 1, secs(0.3), done("a")));
    run(&mut sched, &mut game, 1, 0.1);
    assert!(
        !sched.latent().delay(O, 1, secs(0.1), done("never")),
        "calling again while it counts down is ignored"
    );
    assert_eq!(sched.latent().count_for_owner(O), 1);
    run(&mut sched, &mut game, 5, 0.1);
    assert_eq!(game.log, ["a @3"]);
    assert_eq!(sched.latent().count_for_owner(O), 0);
    assert!(sched.latent().is_empty());
}

#[test]
fn retriggerable_delay_restarts_with_the_new_duration() {
    for (again, expect) in [(0.5, "r @11"), (2.0, "r @26")] {
        let (mut sched, mut game) = world();
        assert!(sched
            .latent()
            .retriggerable_delay(O, 1, secs(1.0), done("r")));
        run(&mut sched, &mut game, 6, 0.1); // t = 0.6
        assert!(sched
            .latent()
            .retriggerable_delay(O, 1, secs(again), done("second")));
        run(&mut sched, &mut game, 30, 0.1);
        assert_eq!(game.log, [expect], "retriggered with {again}");
    }
}

/// Retriggered from a tick function, the delay counts like a new one: not that frame's delta.
#[test]
fn retriggering_mid_frame_does_not_count_that_frame() {
    let (mut sched, mut game) = world();
    sched
        .latent()
        .retriggerable_delay(O, 1, secs(1.0), done("r"));
    sched
        .ticks()
        .add(TickSettings::named("again"), |_: &mut Game, cx| {
            if cx.clocks().frame() == 6 {
                cx.commands()
                    .latent()
                    .retriggerable_delay(O, 1, secs(0.3), done("second"));
            }
        });
    run(&mut sched, &mut game, 12, 0.1);
    // Retriggered in frame 6 (t = 0.6): due at 0.9, frame 9, like a timer set there.
    assert_eq!(game.log, ["r @9"]);
}

#[test]
fn retriggering_a_plain_delay_is_refused() {
    let (mut sched, mut game) = world();
    sched.latent().delay(O, 1, secs(0.2), done("d"));
    assert!(!sched
        .latent()
        .retriggerable_delay(O, 1, secs(5.0), done("x")));
    run(&mut sched, &mut game, 3, 0.1);
    assert_eq!(game.log, ["d @2"]);
}

/// Where an action is added decides when it starts counting, exactly as for a timer set at
/// the same moment.
#[test]
fn the_creation_frame_delta_never_counts() {
    let (mut sched, mut game) = world();
    // Between frames.
    sched.latent().delay(O, 1, secs(0.3), done("between"));
    sched
        .timers()
        .after(secs(0.3))
        .call(|g, _| g.log.push(format!("timer between @{}", g.frame)));
    // From a PrePhysics tick in frame 2 and a PostUpdateWork tick in frame 2.
    let cmds = sched.commands();
    sched
        .ticks()
        .add(TickSettings::named("early"), move |_: &mut Game, cx| {
            if cx.clocks().frame() == 2 {
                cmds.latent().delay(O, 2, secs(0.3), done("early"));
                cmds.latent().delay(O, 3, Span::ZERO, done("early zero"));
                cx.timers()
                    .after(secs(0.3))
                    .call(|g, _| g.log.push(format!("timer early @{}", g.frame)));
            }
        });
    let cmds = sched.commands();
    sched.ticks().add(
        TickSettings::named("late").in_group(TickGroup::PostUpdateWork),
        move |_: &mut Game, cx| {
            if cx.clocks().frame() == 2 {
                cmds.latent().delay(O, 4, secs(0.3), done("late"));
                cmds.latent().delay(O, 5, Span::ZERO, done("late zero"));
                cx.timers()
                    .after(secs(0.3))
                    .call(|g, _| g.log.push(format!("timer late @{}", g.frame)));
            }
        },
    );
    run(&mut sched, &mut game, 8, 0.1);
    assert_eq!(
        game.log,
        [
            "early zero @2",
            "timer between @3",
            "between @3",
            "late zero @3",
            "timer early @5",
            "timer late @5",
            "early @5",
            "late @5",
        ]
    );
}

/// Records its updates in the log; completes after `n` of them.
struct Counted(&'static str, u32);
impl LatentAction<Game> for Counted {
    fn update(&mut self, r: &mut LatentResponse, g: &mut Game) {
        g.log.push(format!("update {}", self.0));
        self.1 -= 1;
        r.finish_and_trigger_if(self.1 == 0);
    }
    fn aborted(&mut self, g: &mut Game) {
        g.log.push(format!("aborted {}", self.0));
    }
    fn describe(&self) -> String {
        format!("{} with {} updates left", self.0, self.1)
    }
}

#[test]
fn completions_run_after_every_update_in_order_added() {
    let (mut sched, mut game) = world();
    let l = sched.latent();
    l.add(O, 1, Counted("a", 1), done("a"));
    l.add(OwnerId::from(2), 1, Counted("b", 1), done("b"));
    l.add(O, 2, Counted("c", 2), done("c"));
    run(&mut sched, &mut game, 2, 0.1);
    assert_eq!(
        game.log,
        ["update a", "update b", "update c", "a @1", "b @1", "update c", "c @2"]
    );
}

#[test]
fn each_action_is_updated_once_per_frame_and_new_ones_wait_for_the_next() {
    let (mut sched, mut game) = world();
    // A completion that adds an action: it is not updated in the frame it was added in.
    sched
        .latent()
        .add(O, 1, Counted("a", 1), |g: &mut Game, cx| {
            g.log.push("a done".into());
            cx.commands().latent().add(O, 2, Counted("b", 2), done("b"));
        });
    run(&mut sched, &mut game, 4, 0.1);
    assert_eq!(
        game.log,
        ["update a", "a done", "update b", "update b", "b @3"]
    );
}

#[test]
fn removing_an_owner_aborts_its_actions() {
    let (mut sched, mut game) = world();
    sched.latent().add(O, 1, Counted("a", 3), done("a"));
    sched
        .latent()
        .add(OwnerId::from(2), 1, Counted("other", 2), done("other"));
    sched.latent().delay(O, 2, secs(0.1), done("delay"));
    run(&mut sched, &mut game, 1, 0.1);
    assert_eq!(game.log, ["update a", "update other", "delay @1"]);
    game.log.clear();
    assert_eq!(sched.latent().count_for_owner(O), 1);
    sched.remove_owner(O);
    assert_eq!(sched.latent().count_for_owner(O), 0);
    assert!(sched.latent().find(O, 1).is_none());
    run(&mut sched, &mut game, 3, 0.1);
    // The abort hook runs at the start of the next latent stage; the completion never.
    assert_eq!(game.log, ["aborted a", "update other", "other @2"]);
}

#[test]
fn an_owner_removed_by_a_completion_loses_its_later_completions() {
    let (mut sched, mut game) = world();
    sched
        .latent()
        .delay(OwnerId::from(9), 1, secs(0.1), |g: &mut Game, cx| {
            g.log.push("killer".into());
            cx.commands().remove_owner(O);
        });
    sched
        .latent()
        .add(O, 1, Counted("victim", 1), done("victim"));
    run(&mut sched, &mut game, 2, 0.1);
    assert_eq!(game.log, ["update victim", "killer", "aborted victim"]);
}

#[test]
fn paused_freezes_game_delays_but_not_real_ones() {
    let (mut sched, mut game) = world();
    sched.latent().delay(O, 1, secs(0.3), done("game"));
    sched
        .latent()
        .add(O, 2, Delay::real(secs(0.3)), done("real"));
    sched
        .latent()
        .add(O, 3, Delay::new(Frames(2)), done("frames"));
    sched.set_paused(true);
    run(&mut sched, &mut game, 5, 0.1);
    assert_eq!(game.log, ["frames @2", "real @3"]);
    assert_eq!(sched.latent().count_for_owner(O), 1);
    sched.set_paused(false);
    run(&mut sched, &mut game, 3, 0.1);
    assert_eq!(game.log.last().unwrap(), "game @8");
}

#[test]
fn time_dilation_applies() {
    let (mut sched, mut game) = world();
    sched.set_time_dilation(0.5);
    sched.latent().delay(O, 1, secs(1.0), done("slow"));
    run(&mut sched, &mut game, 25, 0.1);
    assert_eq!(game.log, ["slow @20"]);
}

#[test]
fn delay_until_next_tick_and_wait_until() {
    let (mut sched, mut game) = world();
    let cmds = sched.commands();
    sched
        .ticks()
        .add(TickSettings::named("adder"), move |g: &mut Game, cx| {
            if cx.clocks().frame() == 2 {
                cmds.latent().add(
                    O,
                    1,
                    tickflow::latent::DelayUntilNextTick,
                    done("next tick"),
                );
            }
            if cx.clocks().frame() == 4 {
                g.flag = true;
            }
        });
    sched.latent().delay_until_next_tick(O, 2, done("first"));
    sched
        .latent()
        .wait_until(O, 3, |g: &Game| g.flag, done("flag"));
    run(&mut sched, &mut game, 6, 0.1);
    assert_eq!(game.log, ["first @1", "next tick @3", "flag @4"]);
}

#[test]
fn find_list_and_describe() {
    let (mut sched, mut game) = world();
    sched.latent().delay(O, 7, secs(1.0), done("d"));
    sched.latent().add(O, 8, Counted("c", 5), done("c"));
    run(&mut sched, &mut game, 3, 0.1);
    let l = sched.latent();
    assert_eq!(
        l.find(O, 7).unwrap().describe(),
        "Delay: 0.700 s left (Game clock)"
    );
    let list = l.list();
    assert_eq!(list.len(), 2);
    assert_eq!((list[1].owner, list[1].uuid), (O, 8));
    assert_eq!(list[1].description, "c with 2 updates left");
    assert!(l.remove(O, 7));
    assert!(!l.remove(O, 7), "already removed");
    assert!(l.find(O, 7).is_none());
    assert_eq!(l.len(), 1);
}

/// A delay re-armed by its own completion (through `Commands`) counts from the due time of the
/// one that ended: 1,000 laps of 0.1 s at 0.03 s frames end exactly at 100 s.
#[test]
fn a_delay_loop_does_not_drift() {
    fn lap(g: &mut Game, cx: &mut LatentCx<'_, Game>) {
        g.log.push(g.frame.to_string());
        cx.commands().latent().delay(O, 1, secs(0.1), lap);
    }
    let (mut sched, mut game) = world();
    sched.latent().delay(O, 1, secs(0.1), lap);
    run(&mut sched, &mut game, 3334, 0.03);
    assert_eq!(game.log.len(), 1000);
    for (k, frame) in game.log.iter().enumerate() {
        // Lap k + 1 ends in the first frame whose time reaches (k + 1) × 0.1 s.
        let expect = ((k as u64 + 1) * 10).div_ceil(3);
        assert_eq!(frame, &expect.to_string(), "lap {}", k + 1);
    }
}
