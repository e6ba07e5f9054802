//! The real-time service's tests (real threads against the wall clock), one module per file,
//! in a binary of their own: beside the property tests of `core.rs` they would share the
//! two cores with them.

mod proptest_settings;
use proptest_settings::cases;

mod realtime_manual;
mod realtime_model;
mod realtime_rules;
mod realtime_thread;
