//! Seeded random streams: every component that draws (a port's discipline, a flow's
//! source, a web table's arrivals, a loop's shaper queue) has a stream of its own, seeded
//! from the scenario's seed, the component's kind and its index. One change then does not
//! reshuffle every other draw, and the same seed gives the same run.
//!
//! The kinds are part of what makes results reproducible: renumbering one changes every
//! run's numbers.

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

/// The kinds of component with a stream of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub enum Stream {
    /// A port's discipline (index: the port; `u64::MAX`: the stream FIFO ports share).
    Port = 1,
    /// A flow's source (gaps, ON/OFF periods, RLM joins, TUF's first tag counter).
    Flow = 2,
    /// A `[[flow]]` table of web transfers: their start gaps and sizes.
    WebTable = 3,
    /// An overlay loop's shaper queue.
    Loop = 4,
    /// The phase of a TCP sender's ns-2 timer clock (a draw, not a stream).
    TimerPhase = 5,
}

/// SplitMix64 finalizer over (seed, kind, index): independent seeds per component.
pub fn stream_seed(seed: u64, kind: Stream, index: u64) -> u64 {
    let kind = kind as u64;
    let mut z =
        seed ^ kind.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The random stream of component `index` of `kind`.
pub fn stream(seed: u64, kind: Stream, index: u64) -> Pcg64Mcg {
    Pcg64Mcg::seed_from_u64(stream_seed(seed, kind, index))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seeds of a few streams, computed by hand from SplitMix64's finalizer: a change
    /// here would change every run's numbers.
    #[test]
    fn stream_seeds_are_stable() {
        let mix = |mut z: u64| {
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        assert_eq!(
            stream_seed(7, Stream::Flow, 3),
            mix(7
                ^ 2u64.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ 3u64.wrapping_mul(0xBF58_476D_1CE4_E5B9))
        );
        assert_ne!(
            stream_seed(1, Stream::Port, 0),
            stream_seed(1, Stream::Flow, 0)
        );
    }
}
