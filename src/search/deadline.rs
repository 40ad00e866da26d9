//! The time limit a search checks itself (see [`super::run`]): a search never waits, so a
//! limit cannot be put on it from outside without moving it off the request workers (which
//! cost 28% of the throughput). Instead it looks at its [`Deadline`] as it goes, once every
//! [`CHECK_EVERY`] candidates and before each costly step.

use std::time::Instant;

/// The search ran past its [`Deadline`] and was given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the search ran past its deadline")]
pub struct TimedOut;

/// Candidates looked at between two readings of the clock: a reading costs about 25 ns and
/// a candidate about 20, so the check costs well under 1% and a search overruns its
/// deadline by a few tens of microseconds at most.
pub(crate) const CHECK_EVERY: u32 = 1024;

/// The moment by which a search must be done, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Deadline(Option<Instant>);

impl Deadline {
    /// No limit.
    pub const NONE: Deadline = Deadline(None);

    /// Done by `at`.
    pub fn at(at: Instant) -> Deadline {
        Deadline(Some(at))
    }

    /// Err once the deadline has passed.
    pub fn check(&self) -> Result<(), TimedOut> {
        match self.0 {
            Some(at) if Instant::now() >= at => Err(TimedOut),
            _ => Ok(()),
        }
    }

    /// A counter that reads the clock once every [`CHECK_EVERY`] ticks (the first included).
    pub(super) fn ticker(self) -> Ticker {
        Ticker { deadline: self, ticks: 0 }
    }
}

/// See [`Deadline::ticker`].
pub(super) struct Ticker {
    deadline: Deadline,
    ticks: u32,
}

impl Ticker {
    #[inline]
    pub(super) fn tick(&mut self) -> Result<(), TimedOut> {
        let due = self.ticks.is_multiple_of(CHECK_EVERY);
        self.ticks = self.ticks.wrapping_add(1);
        if due { self.deadline.check() } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_is_read_on_the_first_tick_then_once_every_check_every() {
        let mut none = Deadline::NONE.ticker();
        assert!((0..3 * CHECK_EVERY).all(|_| none.tick().is_ok()));

        let mut passed = Deadline::at(Instant::now()).ticker();
        assert_eq!(passed.tick(), Err(TimedOut), "the first tick reads the clock");
        assert!((1..CHECK_EVERY).all(|_| passed.tick().is_ok()), "the next ones do not");
        assert_eq!(passed.tick(), Err(TimedOut));

        let far = Deadline::at(Instant::now() + std::time::Duration::from_secs(3600));
        let mut ticker = far.ticker();
        assert!((0..3 * CHECK_EVERY).all(|_| ticker.tick().is_ok()));
        assert_eq!(far.check(), Ok(()));
    }
}
