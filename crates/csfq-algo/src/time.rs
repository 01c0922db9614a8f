//! Simulated and wall time in integer nanoseconds.
//!
//! One newtype for instants and spans alike: a 1500-byte packet lasts 120 ns at
//! 100 Gb/s, so microseconds are too coarse, and `u64` nanoseconds cover 584 years.

use core::ops::{Add, AddAssign, Sub};

/// A time (or a span of time) in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(pub u64);

impl Nanos {
    /// Time zero.
    pub const ZERO: Nanos = Nanos(0);
    /// The largest representable time.
    pub const MAX: Nanos = Nanos(u64::MAX);

    /// From whole milliseconds.
    pub const fn from_millis(ms: u64) -> Self {
        Nanos(ms * 1_000_000)
    }

    /// From whole microseconds.
    pub const fn from_micros(us: u64) -> Self {
        Nanos(us * 1_000)
    }

    /// From seconds, rounded to the nearest nanosecond; negative and NaN give zero.
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_nan() || s <= 0.0 {
            Nanos(0)
        } else {
            Nanos((s * 1e9).round() as u64)
        }
    }

    /// As seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }

    /// The time `bytes` take to serialize at `rate_bps` bits per second, rounded up.
    pub fn transmission(bytes: u32, rate_bps: f64) -> Self {
        Nanos((bytes as f64 * 8e9 / rate_bps).ceil() as u64)
    }

    /// `self - earlier`, or zero if `earlier` is later.
    pub fn saturating_sub(self, earlier: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(earlier.0))
    }
}

impl Add for Nanos {
    type Output = Nanos;
    fn add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0 + rhs.0)
    }
}

impl AddAssign for Nanos {
    fn add_assign(&mut self, rhs: Nanos) {
        self.0 += rhs.0;
    }
}

impl Sub for Nanos {
    type Output = Nanos;
    fn sub(self, rhs: Nanos) -> Nanos {
        Nanos(self.0 - rhs.0)
    }
}

impl core::fmt::Display for Nanos {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:.6} s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmission_time_of_1000_bytes_at_10mbps_is_800us() {
        assert_eq!(Nanos::transmission(1000, 10e6), Nanos::from_micros(800));
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(Nanos::from_secs_f64(1.5), Nanos(1_500_000_000));
        assert_eq!(Nanos::from_secs_f64(-1.0), Nanos::ZERO);
        assert!((Nanos(2_500_000).as_secs_f64() - 0.0025).abs() < 1e-15);
    }
}
