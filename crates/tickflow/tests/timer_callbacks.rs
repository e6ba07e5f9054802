//! Timer closures of every size are called with what they captured and dropped exactly once,
//! however their timer ends: fired, cleared, cleared by itself, finished after `times(n)`,
//! replaced, dropped with the manager, or after a panic. Small closures are stored inside the
//! timer's entry and larger ones in a box (`timer/callback.rs`), so both kinds are covered; CI
//! also runs this file under valgrind.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tickflow::prelude::*;
use tickflow::timer::{TimerCallback, TimerInfo};

/// Counts its drops.
struct Token(Arc<AtomicUsize>);

impl Drop for Token {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

fn drops(c: &Arc<AtomicUsize>) -> usize {
    c.load(Ordering::SeqCst)
}

fn frame() -> Span {
    Span::frames(1, 60)
}

#[test]
fn closures_of_every_size_see_their_captures() {
    let mut t = TimerManager::<Vec<u64>>::new();
    let id = 7u32; // 4 bytes: inline
    let arc = Arc::new(11u64); // 8 bytes: inline
    let pair = (13u64, 17u64); // 16 bytes: boxed
    let text = String::from("nineteen"); // 24 bytes: boxed
    let wide = 23u128; // alignment 16: boxed
    t.after(secs(0.01)).call(|log, _| log.push(1));
    t.after(secs(0.02))
        .call(move |log, _| log.push(u64::from(id)));
    t.after(secs(0.03)).call(move |log, _| log.push(*arc));
    t.after(secs(0.04))
        .call(move |log, _| log.push(pair.0 + pair.1));
    t.after(secs(0.05))
        .call(move |log, _| log.push(text.len() as u64));
    t.after(secs(0.06))
        .call(move |log, _| log.push(wide as u64));
    let mut log = vec![];
    for _ in 0..10 {
        t.tick(frame(), &mut log);
    }
    assert_eq!(log, vec![1, 7, 11, 30, 8, 23]);
    assert!(t.is_empty());
}

#[test]
fn each_closure_is_dropped_once_however_its_timer_ends() {
    let c = counter();
    let mut t = TimerManager::<u64>::new();
    let small = |c: &Arc<AtomicUsize>| Token(c.clone());
    let big = |c: &Arc<AtomicUsize>| (Token(c.clone()), [0u64; 3]);

    // fired one-shots
    let (a, b) = (small(&c), big(&c));
    t.after(secs(0.01)).call(move |n, _| {
        let _ = &a;
        *n += 1;
    });
    t.after(secs(0.01)).call(move |n, _| {
        let _ = &b; // the whole tuple, not only the field read below
        *n += 1 + b.1[0];
    });
    // cleared
    let (a, b) = (small(&c), big(&c));
    let ha = t.every(secs(1.0)).call(move |_, _| {
        let _ = &a;
    });
    let hb = t.every(secs(1.0)).call(move |_, _| {
        let _ = &b;
    });
    // finished after times(2)
    let (a, b) = (small(&c), big(&c));
    t.every(secs(0.01)).times(2).call(move |n, _| {
        let _ = &a;
        *n += 1;
    });
    t.every(secs(0.01)).times(2).call(move |n, _| {
        let _ = &b;
        *n += 1;
    });
    // clears itself from its callback
    let (a, b) = (small(&c), big(&c));
    t.every(secs(0.01)).call(move |_, cx| {
        let _ = &a;
        cx.clear_self();
    });
    t.every(secs(0.01)).call(move |_, cx| {
        let _ = &b;
        cx.clear_self();
    });
    // replaced
    let (a, b) = (small(&c), big(&c));
    let mut slot = TimerHandle::default();
    t.every(secs(1.0)).replace(&mut slot).call(move |_, _| {
        let _ = &a;
    });
    t.every(secs(1.0)).replace(&mut slot).call(move |_, _| {
        let _ = &b;
    });
    t.every(secs(1.0)).replace(&mut slot).call(|_, _| {});

    assert_eq!(drops(&c), 2, "the two replaced closures");
    assert!(t.clear(ha) && t.clear(hb));
    assert_eq!(drops(&c), 4);
    let mut n = 0;
    for _ in 0..5 {
        t.tick(frame(), &mut n);
    }
    assert_eq!(n, 2 + 4);
    assert_eq!(
        drops(&c),
        10,
        "and the fired, finished and self-cleared ones"
    );

    // kept until the manager goes
    let (a, b) = (small(&c), big(&c));
    t.every(secs(1.0)).call(move |_, _| {
        let _ = &a;
    });
    t.every(secs(1.0)).call(move |_, _| {
        let _ = &b;
    });
    drop(t);
    assert_eq!(drops(&c), 12);
}

#[test]
fn a_panicking_closure_is_kept_and_dropped_once() {
    let c = counter();
    let mut t = TimerManager::<u64>::new();
    let tok = Token(c.clone());
    let h = t.every(secs(0.01)).call(move |n, _| {
        let _ = &tok;
        *n += 1;
        if *n == 1 {
            panic!("first call");
        }
    });
    let mut n = 0;
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| t.tick(frame(), &mut n)));
    assert!(r.is_err());
    assert_eq!(
        drops(&c),
        0,
        "a looping timer keeps its closure after a panic"
    );
    t.tick(frame(), &mut n);
    assert!(n > 1, "called again after the panic");
    assert!(t.clear(h));
    assert_eq!(drops(&c), 1);
}

#[test]
fn restored_boxed_callbacks_are_called_and_dropped() {
    let c = counter();
    let mut t = TimerManager::<u64>::new();
    t.every(secs(0.01)).name("tick").call(|n, _| *n += 1);
    let snap = t.snapshot();
    let c2 = c.clone();
    let mut r = TimerManager::<u64>::restore(
        &snap,
        &mut tickflow::snapshot::Registry::new().other_timers(move |info: &TimerInfo| {
            assert_eq!(info.name.as_deref(), Some("tick"));
            let tok = Token(c2.clone());
            Some(Box::new(move |n: &mut u64, _: &mut TimerCx<'_, u64>| {
                let _ = &tok;
                *n += 10
            }) as TimerCallback<u64>)
        }),
    )
    .expect("restores");
    let mut n = 0;
    r.tick(frame(), &mut n);
    assert_eq!(n, 10);
    drop(r);
    assert_eq!(drops(&c), 1);
}
