//! `cargo bench -p tickflow-bench --bench snapshot` (add `-- quick` for 1e5 timers only): the cargo
//! front end of [`tickflow_bench::snapshot`], which `tickflow bench` runs too.

#[global_allocator]
static ALLOC: tickflow_bench::alloc::Counting = tickflow_bench::alloc::Counting;

fn main() {
    tickflow_bench::snapshot::run(&tickflow_bench::Options::from_args());
}
