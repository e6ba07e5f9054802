//! [`LatentCx`]: the context of a latent completion.

use crate::cx::Cx;

/// The second argument of a latent completion: as every [`Cx`], the frame's clocks, the
/// timers and the scheduler's commands.
///
/// ```
/// use tickflow::prelude::*;
///
/// let mut sched = Scheduler::<Vec<u64>>::new();
/// sched.latent().delay(OwnerId::new(1), 0, secs(0.2), |seen, cx| {
///     seen.push(cx.clocks().frame());
///     cx.timers().after(secs(0.1)).call(|seen, cx| seen.push(cx.clocks().frame()));
/// });
/// let mut seen = vec![];
/// for _ in 0..4 {
///     sched.tick(secs(0.1), &mut seen);
/// }
/// assert_eq!(seen, [2, 3]);
/// ```
pub type LatentCx<'a, C> = Cx<'a, C, LatentCall>;

/// What a [`LatentCx`] knows of its call: nothing beyond what every [`Cx`] has.
#[derive(Clone, Debug, Default)]
pub struct LatentCall;
