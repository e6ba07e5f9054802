//! `cargo bench -p tickflow-bench --bench bevy_delays` (add `-- quick` for a short run): the cargo
//! front end of [`tickflow_bench::bevy_delays`], which `tickflow bench` runs too. The
//! workload, peer and targets are described there and in BENCHMARKS.md.

#[global_allocator]
static ALLOC: tickflow_bench::alloc::Counting = tickflow_bench::alloc::Counting;

fn main() {
    tickflow_bench::bevy_delays::run(&tickflow_bench::Options::from_args());
}
