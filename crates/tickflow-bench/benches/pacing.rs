//! `cargo bench -p tickflow-bench --bench pacing` (add `-- quick` for a short run): the cargo front end
//! of [`tickflow_bench::pacing`], which `tickflow bench` runs too. The workload, peers and
//! targets are described there and in BENCHMARKS.md.

#[global_allocator]
static ALLOC: tickflow_bench::alloc::Counting = tickflow_bench::alloc::Counting;

fn main() {
    tickflow_bench::pacing::run(&tickflow_bench::Options::from_args());
}
