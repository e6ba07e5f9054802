//! Bevy's clocks read as tickflow spans, exactly.

use std::time::Duration;

use tickflow::Span;

/// Turns a Bevy clock's running total (`Time::elapsed`, whole nanoseconds) into tickflow frame
/// deltas. Each delta is the difference of the totals converted once, so the sub-flick part
/// of every nanosecond is carried to the next frame and nothing drifts: after any frames, the
/// deltas add up to the total, floored to the flick (1 ns = 441/625 flicks).
#[derive(Clone, Debug, Default)]
pub(crate) struct HostClock {
    /// Flicks handed out so far.
    flicks: u128,
}

impl HostClock {
    /// The delta since the last call, for a clock whose total is now `elapsed` (a total that
    /// went back gives zero and is not counted twice).
    pub(crate) fn advance(&mut self, elapsed: Duration) -> Span {
        let total = elapsed.as_nanos() * 441 / 625;
        let delta = total.saturating_sub(self.flicks);
        self.flicks = self.flicks.max(total);
        Span::from_flicks(u64::try_from(delta).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanosecond_totals_carry_their_remainder() {
        let mut c = HostClock::default();
        let mut sum = 0;
        for ns in 1..=1_000_000u64 {
            sum += c.advance(Duration::from_nanos(ns)).flicks();
            if ns == 1_234 {
                assert_eq!(sum, 870, "1,234 ns are 870.7 flicks");
            }
        }
        assert_eq!(sum, 705_600, "1 ms is exactly 705,600 flicks");
        assert_eq!(c.advance(Duration::ZERO), Span::ZERO);
        assert_eq!(c.advance(Duration::from_millis(2)), Span::from_millis(1));
    }
}
