//! Pacing partial reversal ([`RaisePause`]): where no token can be reached, partial reversal
//! never ends (the part has no sink, so each raise leaves a neighbour without a way down, which
//! raises in turn), and without pacing the nodes of such a part exchange heights as fast as
//! the network carries them, for as long as the part has no token: a lost token's silence
//! until it is regenerated, or for ever in a partition that holds none. `docs/ALGORITHMS.md`,
//! R15.

use crate::node::Outbox;
use crate::{Action, TimerId};

/// How a token node paces its height raises (partial reversals): the first raise is made at
/// once; a raise needed within `min` time units of it waits until `min` has passed, the next
/// within `2·min` of that until then, doubling up to `max`; a pause that ends with no raise
/// waiting starts over from `min`. In [the embedder's time unit](crate#timers).
///
/// What it buys: a node makes at most one raise per pause, and while a raise is waiting at
/// each pause's end (a part without a token, where a neighbour's raise leaves it without a way
/// down again) its pauses grow to `max`, so such a part no longer exchanges heights as fast as
/// the network carries them (measured in `docs/ALGORITHMS.md`, R15: 13–14× fewer). What it
/// costs: the `i`-th raise of a run of raises waits at most `min·2^(i-1)` (capped at `max`),
/// which delays a request's new route after a link failure by at most that much per raise;
/// safety does not depend on it (tokens and fences never wait on a raise).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct RaisePause {
    /// The first pause (`≥ 1`).
    pub min: u64,
    /// The longest pause (`≥ min`).
    pub max: u64,
}

impl RaisePause {
    /// Pauses from `min` doubling up to `max`.
    pub const fn new(min: u64, max: u64) -> Self {
        RaisePause { min, max }
    }

    /// Whether the settings are usable; the problem otherwise.
    pub(crate) fn validate(&self) -> Result<(), &'static str> {
        if self.min == 0 {
            return Err("a raise pause must be at least 1");
        }
        if self.max < self.min {
            return Err("a raise pause's max must be at least its min");
        }
        Ok(())
    }
}

/// `MIN-MAX` (whole numbers, `1 ≤ MIN ≤ MAX`), as command lines and configuration files
/// write a pause.
impl core::str::FromStr for RaisePause {
    type Err = &'static str;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const FORM: &str = "a raise pause is MIN-MAX, whole numbers with 1 <= MIN <= MAX";
        let (min, max) = s.split_once('-').ok_or(FORM)?;
        let min = min.trim().parse().map_err(|_| FORM)?;
        let max = max.trim().parse().map_err(|_| FORM)?;
        let pause = RaisePause::new(min, max);
        pause.validate().map_err(|_| FORM)?;
        Ok(pause)
    }
}

/// The timer ids of the pause: this bit and the arming number, so that only the expiry of the
/// current arming counts (a stale or duplicated timeout is a no-op). Apart from the idle pause
/// (0) and recovery's ids (bit 63).
const PAUSE_BIT: u64 = 1 << 62;

/// A node's pause state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pacer {
    settings: RaisePause,
    /// The pause the next arming runs for.
    current: u64,
    /// The running pause's arming number, if one runs.
    running: Option<u32>,
    /// Armings so far (the next one's number).
    armed: u32,
    /// A raise was needed while the pause ran.
    waiting: bool,
}

impl Pacer {
    /// Pacing by `settings` (valid).
    pub(crate) fn new(settings: RaisePause) -> Self {
        Pacer {
            settings,
            current: settings.min,
            running: None,
            armed: 0,
            waiting: false,
        }
    }

    /// A raise is due: `true` if it may be made now (a pause then starts), `false` if it must
    /// wait for the running pause to end.
    pub(crate) fn may_raise<M>(&mut self, out: &mut Outbox<M>) -> bool {
        if self.running.is_some() {
            self.waiting = true;
            return false;
        }
        let arming = self.armed;
        self.armed = self.armed.wrapping_add(1);
        self.running = Some(arming);
        out.push(Action::SetTimer {
            timer: TimerId(PAUSE_BIT | u64::from(arming)),
            after: self.current,
        });
        true
    }

    /// Whether `timer` is this pacer's (current or stale).
    pub(crate) fn owns(timer: TimerId) -> bool {
        timer.0 >> 32 == PAUSE_BIT >> 32
    }

    /// `timer`, one of [`Pacer::owns`]'s, expired: `true` if a raise waited for it (the node
    /// must look again whether it still needs one, and make it through [`Pacer::may_raise`]).
    pub(crate) fn expired(&mut self, timer: TimerId) -> bool {
        if self.running.map(|a| PAUSE_BIT | u64::from(a)) != Some(timer.0) {
            return false;
        }
        self.running = None;
        if core::mem::take(&mut self.waiting) {
            self.current = self.current.saturating_mul(2).min(self.settings.max);
            true
        } else {
            self.current = self.settings.min;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timer_set(out: &mut Outbox<()>) -> Option<(TimerId, u64)> {
        out.drain().find_map(|a| match a {
            Action::SetTimer { timer, after } => Some((timer, after)),
            _ => None,
        })
    }

    #[test]
    fn pauses_double_up_to_max_while_raises_wait_and_start_over_when_none_does() {
        let mut p = Pacer::new(RaisePause::new(10, 35));
        let mut out = Outbox::default();
        let mut afters = Vec::new();
        for _ in 0..5 {
            assert!(p.may_raise(&mut out));
            let (timer, after) = timer_set(&mut out).expect("a pause starts");
            afters.push(after);
            assert!(!p.may_raise(&mut out), "a raise inside the pause waits");
            assert!(timer_set(&mut out).is_none());
            assert!(p.expired(timer), "the waiting raise is due");
        }
        assert_eq!(afters, [10, 20, 35, 35, 35]);
        assert!(p.may_raise(&mut out));
        let (timer, after) = timer_set(&mut out).unwrap();
        assert_eq!(after, 35);
        assert!(!p.expired(timer), "nothing waited");
        assert!(p.may_raise(&mut out), "no pause runs");
        assert_eq!(timer_set(&mut out).unwrap().1, 10, "started over");
    }

    #[test]
    fn a_stale_or_duplicated_timeout_is_a_no_op() {
        let mut p = Pacer::new(RaisePause::new(5, 40));
        let mut out = Outbox::default();
        assert!(p.may_raise(&mut out));
        let (first, _) = timer_set(&mut out).unwrap();
        assert!(!p.may_raise(&mut out));
        assert!(p.expired(first));
        assert!(!p.expired(first), "a duplicate of the first timeout");
        assert!(p.may_raise(&mut out));
        let (second, after) = timer_set(&mut out).unwrap();
        assert_ne!(first, second);
        assert_eq!(after, 10);
        assert!(!p.may_raise(&mut out));
        assert!(!p.expired(first), "stale: the second pause still runs");
        assert!(!p.may_raise(&mut out), "still inside the second pause");
        assert!(Pacer::owns(second) && !Pacer::owns(TimerId(0)) && !Pacer::owns(TimerId(1 << 63)));
        assert!(p.expired(second));
    }

    #[test]
    fn settings_are_checked() {
        assert!(RaisePause::new(0, 5).validate().is_err());
        assert!(RaisePause::new(6, 5).validate().is_err());
        assert!(RaisePause::new(5, 5).validate().is_ok());
        assert_eq!("10-200".parse(), Ok(RaisePause::new(10, 200)));
        for bad in ["0-5", "6-5", "5", "a-b", "-5", "5-", ""] {
            assert!(bad.parse::<RaisePause>().is_err(), "{bad}");
        }
    }
}
