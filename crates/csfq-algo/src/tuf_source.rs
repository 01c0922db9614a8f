//! TUF's TCP tagger at the source, in integer arithmetic: the model of what the Linux
//! dataplane's source tagger (`crates/csfq-dp/bpf/tuf_source.bpf.c`, on a sending host's
//! egress) computes, operation for operation.
//!
//! The TUF report (Clerget and Dabbous, INRIA RR-3846, Section 3.4.1; `../SPEC.md` §2) tags
//! a TCP packet `T(B(X) / w)` with Padhye et al.'s throughput at loss rate `X`,
//! `B(p) = min(W_max/RTT, 1 / (RTT sqrt(2bp/3) + t0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2)))`
//! packets/s, and `X = I(n)` the bits of the flow's counter reversed (van der Corput, as
//! [`crate::tuf_fixed::tag_for`]). A router cannot know a TCP's round trip; its sender
//! can. Here the inputs are the kernel's own state for the socket (`struct bpf_tcp_sock`):
//!
//! - `RTT`: the smoothed round trip (`srtt_us`, which the kernel keeps times 8); before
//!   the first sample, `t0` (the report's simulator and ours do the same).
//! - `t0`: `RTT + rto_min`. Linux sets its RTO to `srtt + rttvar` with
//!   `rttvar >= rto_min` (`tcp_set_rto`, `tcp_rtt_estimator`), so this is the kernel's RTO
//!   whenever the round trip's variation term is below `rto_min` (200 ms by default, the
//!   RTT's mean deviation under about 50 ms), and a lower bound otherwise: `bpf_tcp_sock`
//!   does not carry `rttvar`.
//! - the packet size: the socket's MSS (`mss_cache`), so `B` in bit/s is
//!   `B(p) 8 mss`.
//! - `b` (segments per ACK) and `W_max` (segments; 0: no cap) are the operator's: a Linux
//!   receiver acknowledges every second full segment (RFC 1122 delayed ACKs: `b = 2`,
//!   Padhye's own choice), and its window is bounded by its buffers, far above any rate
//!   this tagger tags on the paths it runs on.
//!
//! The arithmetic: `X` in Q32 (the reversed counter), `sqrt(X)` in Q24 by an integer square
//! root of `X 2^48`, the constants `sqrt(2b/3)` and `3 sqrt(3b/8)` in Q24, the
//! denominator in microseconds times `2^24`; `B` in bit/s is `8 10^6 2^24 mss` over it,
//! which fits 64 bits for any MSS up to 65 535. Round trips and `t0` are held below
//! `2^27` us (134 s; Linux's RTO stops at 120 s).

use crate::tuf_fixed::tag_of_rate;

/// Round trips and `t0` are held at most this, us (so that the products fit 64 bits).
pub const MAX_TIME_US: u64 = (1 << 27) - 1;

/// `t0` before the first round-trip sample: Linux's initial RTO (`TCP_TIMEOUT_INIT`, 1 s).
pub const INITIAL_RTO_US: u64 = 1_000_000;

/// `B` is held at most this, bit/s, before the weight divides it: above every threshold
/// (tags stop at 2^22 packets/s of 1000 bytes, 3.4e10 bit/s) even divided by the largest
/// weight, 10^6.
pub const MAX_RATE_BPS: u64 = 1 << 56;

/// Sockets the dataplane's tagger keeps (least recently used forgotten first).
pub const SOCKETS: u32 = 65_536;

/// `W_max` is held at most this, segments (so that `W_max` times the MSS in bits, times
/// 10^6, fits 64 bits; 16 million segments is a window of terabytes).
pub const MAX_WINDOW: u32 = 1 << 24;

const ONE_Q24: u64 = 1 << 24;

/// The source tagger's parameters, as the program reads them: `struct
/// csfq_tuf_source_params` (`crates/csfq-dp/bpf/csfq_shared.h`), which the dataplane's
/// configuration holds as it is and its tests check against the compiled object's BTF.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct FixedPadhyeParams {
    /// `sqrt(2b/3)`, Q24.
    pub c1_q24: u64,
    /// `3 sqrt(3b/8)`, Q24.
    pub c2_q24: u64,
    /// `W_max`, segments; 0: no cap (at most [`MAX_WINDOW`]).
    pub max_window: u32,
    /// Linux's minimum RTO, us: `t0 = RTT + rto_min`.
    pub rto_min_us: u32,
    /// The flows' weight `w`, thousandths (at least 1).
    pub weight_milli: u32,
    /// `b`, from which the constants were made (kept for the stats; the tag reads the
    /// constants).
    pub per_ack: u32,
}

impl FixedPadhyeParams {
    /// The parameters for `b = per_ack` segments per ACK (held within 1 to 64),
    /// `W_max = max_window` segments (0: none; held at most [`MAX_WINDOW`]), `rto_min_us`
    /// and weight `weight_milli` (thousandths).
    pub fn new(per_ack: u32, max_window: u32, rto_min_us: u32, weight_milli: u32) -> Self {
        let per_ack = per_ack.clamp(1, 64);
        let b = f64::from(per_ack);
        let q24 = |v: f64| (v * ONE_Q24 as f64).round() as u64;
        FixedPadhyeParams {
            c1_q24: q24((2.0 * b / 3.0).sqrt()),
            c2_q24: q24(3.0 * (3.0 * b / 8.0).sqrt()),
            max_window: max_window.min(MAX_WINDOW),
            rto_min_us,
            weight_milli: weight_milli.max(1),
            per_ack,
        }
    }
}

/// `floor(sqrt(x))` for `x` below 2^62, bit by bit (32 steps, no division: as the
/// program computes it; the program takes the low 62 bits of a larger `x`, as here).
pub fn isqrt(x: u64) -> u64 {
    let (mut rem, mut root) = (x & ((1 << 62) - 1), 0u64);
    let mut bit = 1u64 << 62;
    for _ in 0..32 {
        let trial = root + bit;
        // Without a branch, as the program: `take` is 1 when `rem >= trial`.
        let take = u64::from(rem >= trial);
        rem -= trial * take;
        root = (root >> 1) + bit * take;
        bit >>= 2;
    }
    root
}

/// Padhye's `B(X)`, bit/s, for `X = x / 2^32`, a round trip of `rtt_us`, `t0_us` and
/// segments of `mss` bytes (times held at most [`MAX_TIME_US`], the round trip at least
/// 1 us, the MSS at most 65 535).
pub fn padhye_bps(x: u32, rtt_us: u64, t0_us: u64, mss: u32, p: &FixedPadhyeParams) -> u64 {
    let rtt_us = rtt_us.clamp(1, MAX_TIME_US);
    let t0_us = t0_us.min(MAX_TIME_US);
    let mss = mss.min(65_535);
    let bits_q24 = u64::from(mss) * 8 * 1_000_000 * ONE_Q24;
    let s = isqrt(u64::from(x) << 16); // sqrt(X), Q24
    let x24 = u64::from(x >> 8); // X, Q24
    let a = (p.c1_q24 * s) >> 24; // sqrt(2bX/3)
    let m = ((p.c2_q24 * s) >> 24).min(ONE_Q24); // min(1, 3 sqrt(3bX/8))
    let x3 = (((x24 * x24) >> 24) * x24) >> 24;
    let poly = x24 + 32 * x3; // X (1 + 32 X^2)
    let d = rtt_us * a + t0_us * ((m * poly) >> 24); // us, Q24
    let b = bits_q24.checked_div(d).unwrap_or(u64::MAX);
    let b = if p.max_window != 0 {
        let w = u64::from(p.max_window.min(MAX_WINDOW));
        b.min(w * u64::from(mss) * 8 * 1_000_000 / rtt_us)
    } else {
        b
    };
    b.min(MAX_RATE_BPS)
}

/// The round trip and `t0` the tagger uses, us, from the kernel's `srtt_us` (times 8; 0
/// before the first sample).
pub fn times_us(srtt8_us: u32, p: &FixedPadhyeParams) -> (u64, u64) {
    let srtt = u64::from(srtt8_us >> 3);
    if srtt == 0 {
        let t0 = INITIAL_RTO_US.max(u64::from(p.rto_min_us)).min(MAX_TIME_US);
        (t0, t0)
    } else {
        let rtt = srtt.min(MAX_TIME_US);
        (rtt, (rtt + u64::from(p.rto_min_us)).min(MAX_TIME_US))
    }
}

/// The tag of a TCP packet whose flow's counter is now `n`, its socket's `srtt_us` (times
/// 8) `srtt8_us` and MSS `mss`: `T(B(I(n)) / w)`.
pub fn source_tag(n: u32, srtt8_us: u32, mss: u32, p: &FixedPadhyeParams) -> u16 {
    let (rtt, t0) = times_us(srtt8_us, p);
    let b = padhye_bps(n.reverse_bits(), rtt, t0, mss, p);
    tag_of_rate(weighted(b, p.weight_milli))
}

/// `floor(b 1000 / w_milli)`, saturating: its quotient and remainder apart, so that no
/// product overflows short of the saturation (the program's steps).
pub fn weighted(b: u64, w_milli: u32) -> u64 {
    if w_milli == 1000 {
        return b;
    }
    let w = u64::from(w_milli.max(1));
    (b / w)
        .saturating_mul(1000)
        .saturating_add(b % w * 1000 / w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuf;

    /// The square root is the floor of the float's, at squares, one below them, and
    /// across the range the tagger uses (`X 2^48`, below 2^48).
    #[test]
    fn isqrt_is_the_floor_of_the_root() {
        for r in [
            0u64,
            1,
            2,
            3,
            255,
            256,
            65_535,
            1 << 20,
            (1 << 24) - 1,
            1 << 24,
        ] {
            assert_eq!(isqrt(r * r), r);
            if r > 0 {
                assert_eq!(isqrt(r * r - 1), r - 1);
                assert_eq!(isqrt(r * r + 2 * r), r);
            }
        }
        assert_eq!(isqrt((1 << 62) - 1), (1 << 31) - 1);
        assert_eq!(isqrt(u64::MAX), (1 << 31) - 1); // the low 62 bits, as the program
        let mut z = 1u64;
        for _ in 0..10_000 {
            z = z.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let x = z >> 16;
            let r = isqrt(x);
            assert!(r * r <= x && (r + 1) * (r + 1) > x, "{x}");
        }
    }

    /// By hand: b = 2, X = 1/2, RTT 10 ms, t0 210 ms, 1000-byte segments:
    /// sqrt(2 2 0.5 / 3) = 0.8165, min(1, 3 sqrt(3 2 0.5 / 8)) = 1, 0.5 (1 + 8) = 4.5, so
    /// B = 1 / (0.008165 + 0.945) = 1.0491 packets/s, 8393 bit/s.
    #[test]
    fn padhye_by_hand() {
        let p = FixedPadhyeParams::new(2, 0, 200_000, 1000);
        let b = padhye_bps(1 << 31, 10_000, 210_000, 1000, &p);
        assert!((b as f64 - 8393.0).abs() < 2.0, "{b}");
        // X = 0: only the window caps it; none set, the cap of every rate.
        assert_eq!(padhye_bps(0, 10_000, 210_000, 1000, &p), MAX_RATE_BPS);
        let capped = FixedPadhyeParams::new(2, 64, 200_000, 1000);
        // 64 segments of 8000 bits per 10 ms
        assert_eq!(padhye_bps(0, 10_000, 210_000, 1000, &capped), 51_200_000);
    }

    /// The integer tag is the float formula's ([`tuf::tcp_throughput`], [`tuf::tag_of_rate`])
    /// within one tag (1.1% of rate), over round trips from 20 us to 2 s, MSS from 536 to 9000,
    /// b = 1, 2 and 64, weights from 0.001 to 1e6, the window cap at 64 and at its most and
    /// none, and 4096 counters (X across [0, 1)): a grid, not every input. Rates below 1
    /// kbit/s, weighted or not (a packet every few seconds) are left out: there whole bit/s,
    /// the thresholds' unit, are coarser than a tag.
    #[test]
    fn integer_tags_are_the_float_formulas() {
        let mut worst = 0i32;
        for per_ack in [1u32, 2, 64] {
            for (w_max, weight) in [
                (0u32, 1000u32),
                (64, 1000),
                (MAX_WINDOW, 1000),
                (0, 2500),
                (0, 300),
                (0, 1),
                (0, 1_000_000_000),
            ] {
                let p = FixedPadhyeParams::new(per_ack, w_max, 200_000, weight);
                for srtt_us in [0u32, 20, 150, 1_000, 12_345, 100_000, 2_000_000] {
                    for mss in [536u32, 1448, 9000] {
                        for n in 0..4096u32 {
                            let n = n.wrapping_mul(2_654_435_761);
                            let got = source_tag(n, srtt_us * 8, mss, &p);
                            let (rtt, t0) = times_us(srtt_us * 8, &p);
                            let x = tuf::van_der_corput(n);
                            let cap = if w_max == 0 { 1e30 } else { f64::from(w_max) };
                            let bps = tuf::tcp_throughput(
                                x,
                                rtt as f64 * 1e-6,
                                t0 as f64 * 1e-6,
                                cap,
                                f64::from(per_ack),
                                mss,
                            );
                            let wanted = bps * 1000.0 / f64::from(weight);
                            if bps < 1000.0 || wanted < 1000.0 {
                                continue;
                            }
                            let want = tuf::tag_of_rate(wanted);
                            let d = (i32::from(got) - i32::from(want)).abs();
                            assert!(
                                d <= 1,
                                "n {n} srtt {srtt_us} us mss {mss} b {per_ack} w_max {w_max} \
                                 weight {weight}: {got} vs {want}"
                            );
                            worst = worst.max(d);
                        }
                    }
                }
            }
        }
        assert!(worst <= 1);
    }

    /// The weight by hand, and where `b 1000` alone would overflow: quotient and remainder
    /// give the exact floor, and a product past 2^64 saturates.
    #[test]
    fn weighted_by_hand() {
        assert_eq!(weighted(12_345, 1000), 12_345);
        assert_eq!(weighted(1_000, 3), 333_333);
        assert_eq!(weighted(u64::MAX / 10, 2000), u64::MAX / 10 / 2);
        assert_eq!(weighted(u64::MAX / 10, 1), u64::MAX);
        assert_eq!(weighted(7, 0), 7000); // a weight of 0 counts as a thousandth
    }

    /// The times: before a sample, Linux's initial RTO for both; after, the smoothed round
    /// trip and it plus `rto_min`, held at 2^27 us.
    #[test]
    fn times_by_hand() {
        let p = FixedPadhyeParams::new(2, 0, 200_000, 1000);
        assert_eq!(times_us(0, &p), (1_000_000, 1_000_000));
        assert_eq!(times_us(7, &p), (1_000_000, 1_000_000)); // under 1 us
        assert_eq!(times_us(80_000, &p), (10_000, 210_000));
        assert_eq!(
            times_us(u32::MAX, &p),
            (MAX_TIME_US.min(u64::from(u32::MAX >> 3)), MAX_TIME_US)
        );
    }
}
