//! Latent actions: [`LatentActions`] (Unreal's `FLatentActionManager`, keyed by `(owner,
//! uuid)`) in `engine/`, with its handles, snapshots and moves beside it; the context its
//! completions see ([`LatentCx`]); and [`LatentActionManager`], which runs it on its own.
//! This file only names them.

mod cx;
mod engine;
mod manager;

pub use cx::{LatentCall, LatentCx};
pub use engine::handle::LatentHandle;
pub(crate) use engine::moved::MovedLatent;
pub(crate) use engine::save::LatentSnapshot;
pub use engine::{Completion, LatentActions, LatentInfo};
pub use manager::LatentActionManager;
