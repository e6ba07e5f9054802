//! [`BindTickables`]: how tickable objects come back after a restore or an import.

use crate::format::RestoreError;
use crate::tickable::engine::save::TickableInfo;
use crate::tickable::object::Tickable;

/// Builds tickable objects again: the tickable part of a scheduler's
/// [`Resolver`](crate::snapshot::Resolver). A [`Registry`](crate::snapshot::Registry) of
/// constructors by name is one.
pub trait BindTickables<C> {
    /// A tickable object, by its [name](Tickable::name).
    fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<C>>> {
        let _ = info;
        None
    }
}

/// A tickable object.
pub(crate) fn bind_tickable<C, R: BindTickables<C> + ?Sized>(
    r: &mut R,
    info: &TickableInfo,
) -> Result<Box<dyn Tickable<C>>, RestoreError> {
    r.tickable(info).ok_or_else(|| RestoreError::Unbound {
        kind: "tickable",
        name: info.name.clone(),
        detail: format!("{:?}", info.handle),
    })
}
