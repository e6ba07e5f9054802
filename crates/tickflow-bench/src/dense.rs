//! Snapshot benchmark SN3 (bytes from a peer cannot stall a server): importing an
//! owner whose tick functions are as densely linked as a graph without a cycle can be (each
//! waits for every earlier one, n(n-1)/2 edges, and for one function of another owner by
//! name), into a destination that holds 2,000 functions of other owners; then the first
//! frame after it (which builds the new tick plan), and a snapshot and restore of the
//! destination. Such an owner is what a hostile peer sends to stall a shard: the import was
//! quartic in n (1.1 s at 250 functions).
//!
//! The owner is made as data (a real export, with the edges written into its records through
//! serde), since building it through `add_prerequisite`, whose cycle search is linear in the
//! graph, would itself be quartic.

use std::time::Instant;

use serde_json::Value;
use tickflow::prelude::*;
use tickflow::snapshot::{OwnerSnapshot, Registry};
use tickflow::tick::{TickBody, TickInfo};

use crate::{median, Options};

const OWNER: OwnerId = OwnerId::new(1);

/// Binds every function to a counter.
fn bind() -> Registry<u64> {
    Registry::new().other_ticks(|_: &TickInfo| {
        Some(TickBody::serial(|n: &mut u64, _: &mut TickCx<u64>| *n += 1))
    })
}

/// An owner of `n` functions, each waiting for every earlier one and for "world".
fn dense_owner(n: usize) -> OwnerSnapshot {
    let mut s = Scheduler::<u64>::new();
    let world = s.ticks().add(TickSettings::named("world"), |n, _| *n += 1);
    let first = s
        .ticks()
        .add(TickSettings::named("f0").owned_by(OWNER), |n, _| *n += 1);
    s.ticks().add_prerequisite(first, world).expect("no cycle");
    for k in 1..n {
        s.ticks().add(
            TickSettings::named(format!("f{k}")).owned_by(OWNER),
            |n, _| *n += 1,
        );
    }
    let mut v = serde_json::to_value(s.export_owner(OWNER)).expect("json");
    let external = v["ticks"][0]["external"].clone();
    for (k, t) in (v["ticks"].as_array_mut().expect("ticks"))
        .iter_mut()
        .enumerate()
    {
        t["prereqs"] = Value::Array((0..k as u64).map(Value::from).collect());
        t["external"] = external.clone();
    }
    serde_json::from_value(v).expect("an owner snapshot")
}

/// A destination in mid-game: 2,000 functions of 1,000 other owners, one named "world".
fn destination() -> Scheduler<u64> {
    let mut s = Scheduler::new();
    s.ticks().add(TickSettings::named("world"), |n, _| *n += 1);
    for id in 2..1_002 {
        let owner = OwnerId::new(id);
        let a = s
            .ticks()
            .add(TickSettings::named("move").owned_by(owner), |n, _| *n += 1);
        let b = s
            .ticks()
            .add(TickSettings::named("think").owned_by(owner), |n, _| *n += 1);
        s.ticks().add_prerequisite(b, a).expect("no cycle");
    }
    s.tick(Span::frames(1, 60), &mut 0);
    s
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// Prints the SN3 table.
pub fn run(opts: &Options) {
    let sizes: &[usize] = if opts.quick {
        &[250, 1_000]
    } else {
        &[250, 1_000, 4_000]
    };
    println!(
        "\nSN3 importing a densely linked owner (each function waits for every earlier one), into 2,000 functions; medians of 3"
    );
    println!(
        "{:>9} {:>11} {:>10} {:>10} {:>11} {:>12} {:>13} {:>13}",
        "functions",
        "edges",
        "KB",
        "decode ms",
        "import ms",
        "ns per edge",
        "next frame ms",
        "save+load ms"
    );
    for &n in sizes {
        let snap = dense_owner(n);
        let bytes = postcard::to_stdvec(&snap).expect("postcard");
        let edges = n * (n - 1) / 2 + n;
        let mut times = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
        for _ in 0..3 {
            let mut dest = destination();
            let start = Instant::now();
            let back: OwnerSnapshot = postcard::from_bytes(&bytes).expect("postcard");
            times[0].push(ms(start));
            let start = Instant::now();
            let map = dest.import_owner(&back, &mut bind()).expect("imports");
            times[1].push(ms(start));
            assert!(map.unlinked_prerequisites().is_empty());
            let start = Instant::now();
            dest.tick(Span::frames(1, 60), &mut 0);
            times[2].push(ms(start));
            let start = Instant::now();
            let saved = dest.snapshot();
            let (mut again, _) = Scheduler::restore(&saved, &mut bind()).expect("restores");
            times[3].push(ms(start));
            assert_eq!(again.ticks().len(), dest.ticks().len());
        }
        let [decode, import, frame, save] = times.map(median);
        println!(
            "{n:>9} {edges:>11} {:>10.0} {decode:>10.2} {import:>11.2} {:>12.1} {frame:>13.2} {save:>13.2}",
            bytes.len() as f64 / 1024.0,
            import * 1e6 / edges as f64,
        );
    }
}
