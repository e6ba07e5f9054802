//! Taking one owner's tick functions out with their callbacks, and registering moved ones
//! (see `graph/moved.rs` for the records).

use rustc_hash::{FxHashMap, FxHashSet};

use super::TickFunctions;
use crate::owner::OwnerId;
use crate::tick::body::Body;
use crate::tick::graph::moved::MovedTick;
use crate::tick::graph::save::TickBody;
use crate::tick::handle::TickHandle;

impl<C: 'static> TickFunctions<C> {
    /// Takes every function of `owner` out, in registration order, with its callback.
    /// Between frames.
    pub(crate) fn take_owner(&mut self, owner: OwnerId) -> Vec<(MovedTick, TickBody<C>)> {
        assert!(
            !self.graph.in_frame(),
            "tick functions are moved between frames"
        );
        // Every callback must be at its position before they are taken from there.
        self.take_bodies();
        let list = self.graph.owned(owner);
        let records = self.graph.moved_records(&list, self.frame);
        let mut out = Vec::with_capacity(list.len());
        for (h, m) in list.into_iter().zip(records) {
            let p = (self.graph.pos_of(h)).expect("a live function has a position");
            let body = (self.bodies.take(p)).expect("a live function has its callback");
            let runner = matches!(body, Body::Parallel(_))
                .then_some(self.runner)
                .flatten();
            self.graph.remove(h);
            out.push((m, TickBody::from_parts(body, runner)));
        }
        self.take_bodies();
        out
    }

    /// Registers checked moved functions with their bodies (a parallel one exactly where
    /// the record says so), links their prerequisites and restores their phase. Returns
    /// the new handles in the list's order and the external prerequisites no function of
    /// this scheduler is named after (new handle, name).
    pub(crate) fn put_moved(
        &mut self,
        list: &[MovedTick],
        bodies: Vec<TickBody<C>>,
    ) -> (Vec<TickHandle>, Vec<(TickHandle, String)>) {
        assert!(
            !self.graph.in_frame(),
            "tick functions are moved between frames"
        );
        // Each external name is looked up once, among the functions here before the import
        // (nothing here can wait for a moved function, so no cycle can form).
        let mut named: FxHashMap<&str, Option<TickHandle>> = (list.iter())
            .flat_map(|m| m.external.iter().map(|n| (n.as_str(), None)))
            .collect();
        if !named.is_empty() {
            self.graph.earliest_named(&mut named);
        }
        let mut handles = Vec::with_capacity(list.len());
        for (m, b) in list.iter().zip(bodies) {
            let (body, runner) = b.into_parts();
            if runner.is_some() {
                self.runner = runner;
            }
            let h =
                (self.graph.insert(m.settings.clone(), body)).expect("moved settings were checked");
            self.graph.put_moved_state(h, m, self.frame);
            handles.push(h);
        }
        let mut unlinked = Vec::new();
        let mut linked = FxHashSet::default();
        for (m, &h) in list.iter().zip(&handles) {
            // Checked: inside the list, distinct and acyclic (`MovedTick::check_all`).
            for &p in &m.prereqs {
                self.graph.link(h, handles[p as usize]);
            }
            linked.clear();
            for name in &m.external {
                match named.get(name.as_str()).copied().flatten() {
                    Some(before) if linked.insert(before) => self.graph.link(h, before),
                    Some(_) => {} // two external prerequisites of the same name
                    None => unlinked.push((h, name.clone())),
                }
            }
        }
        self.take_bodies();
        (handles, unlinked)
    }
}
