//! [`BindTicks`]: how tick functions get their bodies back after a restore or an import.

use crate::format::RestoreError;
use crate::tick::graph::save::{TickBody, TickInfo};

/// Binds tick functions' bodies again: the tick part of a scheduler's
/// [`Resolver`](crate::snapshot::Resolver). A [`Registry`](crate::snapshot::Registry) of
/// bodies by name is one.
pub trait BindTicks<C> {
    /// A tick function's body, by its settings (usually the name). It must be parallel
    /// exactly when [`TickInfo::parallel`] says so.
    fn tick(&mut self, info: &TickInfo) -> Option<TickBody<C>> {
        let _ = info;
        None
    }
}

/// A tick function's body, parallel exactly when the saved function was.
pub(crate) fn bind_tick<C: 'static, R: BindTicks<C> + ?Sized>(
    r: &mut R,
    info: &TickInfo,
) -> Result<TickBody<C>, RestoreError> {
    let unbound = |detail: &str| RestoreError::Unbound {
        kind: "tick function",
        name: info.settings.name.clone(),
        detail: format!("{:?}{detail}", info.handle),
    };
    match r.tick(info) {
        Some(b) if b.is_parallel() == info.parallel => Ok(b),
        Some(_) if info.parallel => Err(unbound(", saved parallel, bound serial")),
        Some(_) => Err(unbound(", saved serial, bound parallel")),
        None => Err(unbound("")),
    }
}
