//! The plugin's tests in a real headless `App`, one module per file, in one test binary (each
//! binary links Bevy's crates again, which costs more than its tests take to run). Run one
//! file's tests by its module name: `cargo test -p tickflow-bevy --test plugin store::`.

mod app;

mod controls;
mod frames;
mod owners;
mod restore;
mod store;
mod targets;
