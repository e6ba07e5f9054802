//! A new timer's settings as the builder gathers them ([`Spec`]) and the offline policy of a
//! durable one ([`Offline`]): plain data, read by the manager when it stores the timer.

use crate::owner::OwnerId;

use crate::time::CatchUp;
use crate::time::Domain;
use crate::timer::callback::CancelHook;

/// A timer's settings before [`call`](super::TimerBuilder::call) stores it.
pub(crate) struct Spec<C> {
    pub(super) domain: Domain,
    /// Time to the first call.
    pub(super) delay: u64,
    pub(super) period: u64,
    pub(super) looping: bool,
    pub(super) catch_up: CatchUp,
    pub(super) times: Option<u64>,
    pub(super) owner: Option<OwnerId>,
    pub(super) name: Option<Box<str>>,
    pub(super) tag: Option<u64>,
    pub(super) on_cancel: Option<CancelHook<C>>,
    /// Where the countdown starts on its clock, when not now (wake timers of task delays
    /// chained from an earlier one's due time, see `manager/wake.rs`).
    pub(super) start: Option<u64>,
    /// `start` is the due time itself ([`Timers::at`](super::Timers::at)): the delay is what
    /// is left of it when the timer is stored (`Timers::insert_absolute`).
    pub(super) absolute: bool,
    pub(super) payload: Option<Box<[u8]>>,
    pub(super) durable: Option<Offline>,
}

impl<C> Spec<C> {
    /// Whether the timer needs nothing beyond its entry and its tag (which has a dense table
    /// of its own): no side-table data, and it starts counting now. Such a spec owns no
    /// memory (`Timers::insert` forgets it instead of dropping it): a new option that does
    /// must be tested here.
    #[inline]
    pub(super) fn is_plain(&self) -> bool {
        self.owner.is_none()
            && self.name.is_none()
            && self.on_cancel.is_none()
            && self.times.is_none()
            && self.start.is_none()
            && self.payload.is_none()
            && self.durable.is_none()
            && self.delay == self.period
    }

    pub(crate) fn one_shot(domain: Domain, delay: u64) -> Self {
        Spec::new(domain, delay, false)
    }

    pub(crate) fn looping(domain: Domain, period: u64) -> Self {
        Spec::new(domain, period, true)
    }

    fn new(domain: Domain, delay: u64, looping: bool) -> Self {
        Spec {
            domain,
            delay,
            period: delay,
            looping,
            catch_up: CatchUp::Burst,
            times: None,
            owner: None,
            name: None,
            tag: None,
            on_cancel: None,
            start: None,
            absolute: false,
            payload: None,
            durable: None,
        }
    }
}

/// What a restart does with the time that passed while no process ran a durable timer.
///
/// Offline time counts only for timers whose policy is not `Freeze`, and never for frame
/// timers (no frames ran). A timer whose countdown ended while offline has *lapsed*; the policy
/// says what the first frame after the reload does with it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(u8)]
pub enum Offline {
    /// The world stood still: the timer keeps the time it had left (the game clock's default:
    /// game time does not pass while the server is down).
    Freeze = 0,
    /// Offline time counts, and the first frame makes the calls it missed, as a late frame
    /// would: capped by the manager's catch-up cap, by the timer's own [`CatchUp`] policy (the
    /// real clock's default: energy regenerates while the player is away).
    CatchUp = 1,
    /// Offline time counts; a lapsed timer makes one call in the first frame, and a looping one
    /// counts its next period from there (a daily reward collected once).
    Once = 2,
    /// Offline time counts; a lapsed one-shot is dropped and a looping timer skips to its
    /// next period on its grid, making no call for the ones missed (an event that only
    /// matters if someone saw it).
    Skip = 3,
}

impl Offline {
    /// The default for a clock: `CatchUp` for [`Domain::Real`], `Freeze` for the others.
    pub const fn default_for(domain: Domain) -> Offline {
        match domain {
            Domain::Real => Offline::CatchUp,
            _ => Offline::Freeze,
        }
    }
}
