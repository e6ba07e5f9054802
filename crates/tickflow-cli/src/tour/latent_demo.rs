//! The demo's latent section: a Delay (re-entry ignored), a RetriggerableDelay retriggered,
//! and an async boss script (`delay`, `until`, `frames`), each step printed with its frame
//! and game time.

use tickflow::prelude::*;

const DOOR: OwnerId = OwnerId::new(1);
const ALARM: OwnerId = OwnerId::new(2);
const BOSS: OwnerId = OwnerId::new(3);

/// The world of the section.
struct Duel {
    frame: u64,
    now: Time,
    boss_hp: u32,
    adds: u32,
    log: Vec<String>,
}

impl Duel {
    fn say(&mut self, what: impl AsRef<str>) {
        let line = format!(
            "  frame {:3}  {:6.3} s  {}",
            self.frame,
            self.now.as_secs_f64(),
            what.as_ref()
        );
        self.log.push(line);
    }
}

/// Runs 4 s at 60 Hz and prints what happened.
pub(crate) fn run() {
    let mut sched = Scheduler::<Duel>::new();
    let mut arena = Duel {
        frame: 0,
        now: Time::ZERO,
        boss_hp: 120,
        adds: 0,
        log: Vec::new(),
    };

    // The frame and time the latent completions print, and the fight: the players deal one
    // point of damage per frame; a player "presses the door button" twice and the alarm
    // sensor is tripped again at 0.6 s.
    sched
        .ticks()
        .add(TickSettings::named("clock"), |a: &mut Duel, cx| {
            a.frame = cx.clocks().frame();
            a.now = Time::ZERO + Span::frames(cx.clocks().frame(), 60);
            a.boss_hp = a.boss_hp.saturating_sub(1);
            if cx.clocks().frame() == 10 {
                a.say("door button pressed again: Delay re-entry is ignored");
                cx.commands()
                    .latent()
                    .delay(DOOR, 1, secs(0.1), |a: &mut Duel, _| a.say("never printed"));
            }
            if cx.clocks().frame() == 36 {
                a.say("alarm tripped again: RetriggerableDelay restarts (1 s from now)");
                cx.commands().latent().retriggerable_delay(
                    ALARM,
                    1,
                    secs(1.0),
                    |a: &mut Duel, _| a.say("never printed either: the first completion is kept"),
                );
            }
        });

    sched.latent().delay(DOOR, 1, secs(0.5), |a: &mut Duel, _| {
        a.say("Delay(0.5 s): the door opens")
    });
    sched
        .latent()
        .retriggerable_delay(ALARM, 1, secs(1.0), |a: &mut Duel, _| {
            a.say("RetriggerableDelay(1 s): the alarm goes quiet")
        });

    sched.tasks().spawn(Some(BOSS), |cx| async move {
        let say = |what: String| {
            let (f, t) = (cx.clocks().frame(), cx.clocks().now(Domain::Game));
            cx.with(|a| {
                a.log.push(format!(
                    "  frame {f:3}  {:6.3} s  boss script: {what}",
                    t.as_secs_f64()
                ))
            });
        };
        say("wakes up".into());
        cx.delay(secs(1.0)).await;
        say("roars (delay 1 s)".into());
        cx.until(|a: &Duel| a.boss_hp <= 50).await;
        let hp = cx.with(|a| a.boss_hp);
        say(format!("enraged at hp {hp} (until hp <= 50)"));
        cx.delay(Frames(30)).await;
        say("summons adds (30 frames later)".into());
        for wave in 1..=3 {
            cx.delay(secs(0.25)).await;
            let adds = cx.with(|a| {
                a.adds += 2;
                a.adds
            });
            say(format!("wave {wave}: {adds} adds (every 0.25 s)"));
        }
    });

    let mut completions = 0;
    for _ in 0..240 {
        let report = sched.tick(Span::frames(1, 60), &mut arena);
        completions += report.latent_completed;
    }
    println!("\nLatent actions and an async task: 4 s at 60 Hz");
    for line in &arena.log {
        println!("{line}");
    }
    println!(
        "{completions} latent completions; {} tasks and {} latent actions left",
        sched.tasks().len(),
        sched.latent().len()
    );
}
