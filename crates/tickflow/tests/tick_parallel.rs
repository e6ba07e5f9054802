//! Parallel tick functions give the same results as running them one by one.

use tickflow::prelude::*;

#[derive(Clone, Debug, PartialEq)]
struct World {
    positions: Vec<i64>,
    total: i64,
    log: Vec<String>,
}

/// A world where 64 parallel movers read the world and write back through `Deferred`, between
/// serial functions, with prerequisites between some parallel functions.
fn build(parallel: bool) -> (Scheduler<World>, World) {
    let mut sched = Scheduler::new();
    sched.ticks().set_parallel(parallel);
    let mut movers = Vec::new();
    for id in 0..64usize {
        let group = if id % 3 == 0 {
            TickGroup::PrePhysics
        } else {
            TickGroup::DuringPhysics
        };
        let h = sched.ticks().add_parallel(
            TickSettings::named(format!("mover{id}")).in_group(group),
            (id as i64 + 1, 0u64),
            move |(speed, calls): &mut (i64, u64), world: &World, out| {
                *calls += 1;
                // Some arithmetic so batches overlap on the pool.
                let mut x = world.total.wrapping_add(*speed);
                for k in 0..2_000 {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(k);
                }
                let step = *speed + (x & 7) + world.positions[id] / 100;
                let calls = *calls;
                out.run(move |w: &mut World| {
                    w.positions[id] += step;
                    w.log.push(format!("{id}:{calls}"));
                });
                if calls == 3 && id == 5 {
                    out.later(|w: &mut World, cx| {
                        w.log.push(format!("later in {:?}", cx.group()));
                        cx.timers()
                            .after(secs(0.1))
                            .call(|w: &mut World, _| w.total += 1_000);
                    });
                }
            },
        );
        movers.push(h);
    }
    // mover1 waits for mover4 (same group): they must not share a batch.
    sched
        .ticks()
        .add_prerequisite(movers[1], movers[4])
        .unwrap();
    sched
        .ticks()
        .add(TickSettings::named("sum"), |w: &mut World, _| {
            w.total = w.positions.iter().sum();
        });
    sched.ticks().add(
        TickSettings::named("sum2").in_group(TickGroup::DuringPhysics),
        |w: &mut World, _| w.total = w.total.wrapping_mul(3) % 1_000_003,
    );
    let world = World {
        positions: vec![0; 64],
        total: 0,
        log: Vec::new(),
    };
    (sched, world)
}

#[test]
fn parallel_and_serial_give_identical_state() {
    let (mut par, mut a) = build(true);
    let (mut ser, mut b) = build(false);
    for _ in 0..30 {
        let ra = par.tick(secs(0.05), &mut a);
        let rb = ser.tick(secs(0.05), &mut b);
        assert_eq!(ra.ticks_run, rb.ticks_run);
        assert_eq!(a, b);
    }
    assert!(a.log.iter().any(|l| l == "later in DuringPhysics"));
    assert!(a.total != 0);
    assert_eq!(a.log.iter().filter(|l| l.starts_with("5:")).count(), 30);
}

#[test]
fn deferred_changes_apply_in_registration_order() {
    let mut sched = Scheduler::<Vec<usize>>::new();
    for id in 0..16usize {
        sched.ticks().add_parallel(
            TickSettings::default(),
            id,
            |id: &mut usize, _: &Vec<usize>, out| {
                let id = *id;
                // Later functions finish first.
                std::thread::sleep(std::time::Duration::from_micros((16 - id as u64) * 50));
                out.run(move |v: &mut Vec<usize>| v.push(id));
            },
        );
    }
    let mut v = Vec::new();
    sched.tick(secs(0.1), &mut v);
    assert_eq!(v, (0..16).collect::<Vec<_>>());
}

#[test]
fn deferred_reports_the_tick_info() {
    let mut sched = Scheduler::<Vec<(u64, TickGroup, Span)>>::new();
    sched.ticks().add_parallel(
        TickSettings::named("p").in_group(TickGroup::PostPhysics),
        (),
        |_, _, out| {
            let info = (out.clocks().frame(), out.group(), out.dt());
            assert!(!out.handle().is_none());
            out.run(move |v: &mut Vec<_>| v.push(info));
        },
    );
    let mut v = Vec::new();
    sched.tick(secs(0.1), &mut v);
    assert_eq!(v, [(1, TickGroup::PostPhysics, secs(0.1))]);
    assert!(sched.explain_order().contains("[parallel]"));
}
