//! [`BindLatent`]: how latent actions get their completions and custom actions back after a
//! restore or an import.

use super::action::{LatentAction, SavedAction};
use super::actions::{Completion, LatentInfo};

/// Binds latent actions again: the latent part of a scheduler's
/// [`Resolver`](crate::snapshot::Resolver). A [`Registry`](crate::snapshot::Registry) is one.
pub trait BindLatent<C> {
    /// The completion of a latent action, by its `(owner, uuid)` key.
    fn latent(&mut self, info: &LatentInfo) -> Option<Completion<C>> {
        let _ = info;
        None
    }

    /// A custom latent action from the data its [`save`](LatentAction::save) returned as
    /// [`SavedAction::Custom`].
    fn latent_action(&mut self, kind: &str, data: &[u8]) -> Option<Box<dyn LatentAction<C>>> {
        let _ = (kind, data);
        None
    }
}

/// A saved latent action again: the built-in kinds by themselves, custom ones by the
/// resolver.
pub(crate) fn bind_action<C: 'static, R: BindLatent<C> + ?Sized>(
    r: &mut R,
    saved: &SavedAction,
) -> Option<Box<dyn LatentAction<C>>> {
    match saved {
        SavedAction::Custom { kind, data } => r.latent_action(kind, data),
        builtin => builtin.builtin(),
    }
}
