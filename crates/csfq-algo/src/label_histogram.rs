//! The label-histogram fair-share estimator: `alpha` solved directly from the labels a
//! CSFQ core saw over one window, instead of scaled by `C/F` (Stoica et al. 1998, §2.2).
//!
//! The fair share is the `alpha` with `sum_i min(r_i, alpha) = C` (Eq. 1). A core does
//! not know the rates `r_i`, but every packet carries its flow's rate as its label, and a
//! flow at rate `r` sends `r W` bytes in a window of length `W`. So over the packets of
//! a window,
//!
//! `sum over packets of bytes * min(1, alpha / label) = C W / 8`
//!
//! is Eq. (1) multiplied by `W`, and its left side is exactly what CSFQ accepts with
//! `alpha` (Eq. 2). The histogram keeps, per log-spaced label bin (8 per octave, labels
//! from 1 kbit/s to 4 Pbit/s), the bytes and the bytes divided by the label, so the left
//! side is known exactly at every bin edge and the equation is solved by one scan,
//! interpolating linearly inside the bin where it crosses the target. The state is
//! [`BINS`] pairs of integers, whatever the number of flows; per packet it costs one bin
//! index and one division.
//!
//! Everything is integer arithmetic, operation for operation the dataplane's
//! (`crates/csfq-dp/bpf/core.bpf.c`), so the floating-point and fixed-point cores and the
//! eBPF program compute the same `alpha` from the same packets.

/// Bins: label 0 (below 1 kbit/s) and 8 per octave above 1 kbit/s.
pub const BINS: usize = 256;
/// Bins per octave, as a power of two.
pub const SUB_BITS: u32 = 3;
/// `inv` is `bytes * 2^INV_SHIFT / label_kbps`.
pub const INV_SHIFT: u32 = 24;

/// One bin: the bytes that arrived with a label in it, and their bytes over label.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bin {
    /// Bytes.
    pub bytes: u64,
    /// `sum bytes * 2^24 / label_kbps`, each term rounded to nearest.
    pub inv: u64,
}

/// The bin of a label (bit/s): 0 below 1 kbit/s, else `1 + 8 floor(log2 k) + m` with `k`
/// the label in kbit/s and `m` the next three bits after its leading one.
#[inline]
pub fn bin_of(label_bps: u64) -> usize {
    let k = label_bps / 1000;
    if k == 0 {
        return 0;
    }
    let e = 63 - k.leading_zeros();
    let m = if e >= SUB_BITS {
        (k >> (e - SUB_BITS)) & 7
    } else {
        (k << (SUB_BITS - e)) & 7
    };
    ((e as usize) * 8 + m as usize + 1).min(BINS - 1)
}

/// The lowest label (kbit/s, rounded down) of a bin; 0 for bin 0.
#[inline]
pub fn lower_edge_kbps(bin: usize) -> u64 {
    if bin == 0 {
        return 0;
    }
    let i = (bin - 1) as u64;
    ((8 + (i & 7)) << (i >> 3)) >> SUB_BITS
}

/// `x * d / 2^24` for `x < 2^32`, without 128-bit arithmetic.
#[inline]
fn mul_q24(x: u64, d: u64) -> u64 {
    x.wrapping_mul(d >> INV_SHIFT) + ((x * (d & ((1 << INV_SHIFT) - 1))) >> INV_SHIFT)
}

/// A window's histogram of arrived bytes by label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelHistogram {
    bins: [Bin; BINS],
    total: u64,
}

impl Default for LabelHistogram {
    fn default() -> Self {
        LabelHistogram {
            bins: [Bin::default(); BINS],
            total: 0,
        }
    }
}

impl LabelHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts a packet of `bytes` labeled `label_bps`.
    #[inline]
    pub fn add(&mut self, label_bps: u64, bytes: u32) {
        let b = bin_of(label_bps);
        let k = label_bps / 1000;
        let bin = &mut self.bins[b];
        bin.bytes += bytes as u64;
        if b > 0 {
            bin.inv = bin
                .inv
                .wrapping_add(((bytes as u64) << INV_SHIFT).wrapping_add(k / 2) / k);
        }
        self.total += bytes as u64;
    }

    /// Bytes counted since the last reset.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Adds `other`'s counts to this one's, as if its packets had been counted here (the
    /// dataplane's merge of its CPUs' histograms at the end of a window).
    pub fn absorb(&mut self, other: &LabelHistogram) {
        for (b, o) in self.bins.iter_mut().zip(&other.bins) {
            b.bytes += o.bytes;
            b.inv = b.inv.wrapping_add(o.inv);
        }
        self.total += other.total;
    }

    /// Empties the histogram.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Ends a CSFQ window of `window_ns` on a link of `capacity_bps`: the fair share that
    /// lets the link's bytes through (`None` if the window was not congested, or lasted
    /// more than `2 k_c_ns`, i.e. had an idle gap), and an empty histogram for the next.
    pub fn end_window(&mut self, capacity_bps: u64, window_ns: u64, k_c_ns: u64) -> Option<u64> {
        let solved = if window_ns <= 2 * k_c_ns {
            self.solve(target_bytes(capacity_bps, window_ns))
        } else {
            None
        };
        self.clear();
        solved
    }

    /// The fair share (bit/s) at which CSFQ accepts `target_bytes` of this window's bytes,
    /// or `None` if all of them fit (the window was not congested). Rounded down to
    /// 1 kbit/s; at least 1 kbit/s (also when unlabeled bytes alone exceed the target).
    pub fn solve(&self, target_bytes: u64) -> Option<u64> {
        if self.total <= target_bytes {
            return None;
        }
        let mut s = self.bins[0].bytes; // bytes below the current edge
        let mut d = self.bins[1..]
            .iter()
            .fold(0u64, |d, b| d.wrapping_add(b.inv)); // inv at and above it
        if s >= target_bytes {
            return Some(1000); // unlabeled traffic alone fills the window
        }
        let (mut prev_x, mut prev_f) = (0u64, s);
        for j in 1..BINS {
            let x = lower_edge_kbps(j);
            let f = s + mul_q24(x, d);
            if f >= target_bytes {
                return Some(interpolate(prev_x, prev_f, x, f, target_bytes).max(1) * 1000);
            }
            (prev_x, prev_f) = (x, f);
            s += self.bins[j].bytes;
            d = d.wrapping_sub(self.bins[j].inv);
        }
        Some(prev_x * 1000) // labels beyond 3.7 Pbit/s
    }
}

/// The `x` in `[x0, x1]` where the line through `(x0, f0)` and `(x1, f1)` reaches `t`,
/// `f0 < t <= f1`; operands scaled down so the product stays within 64 bits.
#[inline]
fn interpolate(x0: u64, f0: u64, x1: u64, f1: u64, t: u64) -> u64 {
    let (mut num, mut den) = (t - f0, f1 - f0);
    let sh = (64 - den.leading_zeros()).saturating_sub(31);
    num >>= sh;
    den >>= sh;
    x0 + (x1 - x0) * num / den
}

/// The bytes a link of `capacity_bps` sends in `window_ns` (at most 2^31 ns), in integers
/// as the dataplane computes it: `C` in kbit/s times the window, over 8 * 10^6.
#[inline]
pub fn target_bytes(capacity_bps: u64, window_ns: u64) -> u64 {
    (capacity_bps / 1000) * window_ns.min(1 << 31) / 8_000_000
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maxmin::fair_share;
    use proptest::prelude::*;

    #[test]
    fn bins_are_log_spaced_and_ordered() {
        assert_eq!(bin_of(0), 0);
        assert_eq!(bin_of(999), 0);
        assert_eq!(bin_of(1000), 1);
        assert_eq!(lower_edge_kbps(1), 1);
        // 1 Mbit/s = 1000 kbit/s = 2^9 * 1.953: e = 9, next bits 111.
        assert_eq!(bin_of(1_000_000), 9 * 8 + 7 + 1);
        assert_eq!(lower_edge_kbps(9 * 8 + 7 + 1), 960);
        for b in 1..BINS - 1 {
            assert!(lower_edge_kbps(b) <= lower_edge_kbps(b + 1));
        }
        for label in [
            1_500u64,
            64_000,
            999_999,
            1_000_000,
            7_777_777,
            10_000_000_000,
        ] {
            let b = bin_of(label);
            assert!(lower_edge_kbps(b) * 1000 <= label, "{label}");
            assert!(label < lower_edge_kbps(b + 1) * 1000 + 1000, "{label}");
        }
    }

    /// Flows at constant rates, one window: the solution is the water-filling fair share.
    /// 0.5, 1.0, ..., 4.0 Mbit/s on 8 Mbit/s: alpha = 6.5 / 6 = 1.0833 Mbit/s, in the bin
    /// [1024, 1152) kbit/s where no label lies, so the interpolation there is exact.
    #[test]
    fn solves_water_filling_for_constant_rates() {
        let rates: Vec<f64> = (1..=8).map(|i| i as f64 * 0.5e6).collect();
        let mut h = LabelHistogram::new();
        // A 1 s window of 500-byte packets; flow i sends r_i bits.
        for &r in &rates {
            for _ in 0..(r / 4000.0) as u64 {
                h.add(r as u64, 500);
            }
        }
        let c = 8e6;
        let want = fair_share(&rates, c);
        assert!((want - 6.5e6 / 6.0).abs() < 1.0);
        let got = h.solve(target_bytes(c as u64, 1_000_000_000)).unwrap() as f64;
        assert!((got / want - 1.0).abs() < 1e-3, "alpha {got} vs {want}");
        assert_eq!(h.solve(h.total_bytes()), None, "everything fits");
    }

    proptest! {
        /// The solution accepts the target: the exact accepted bytes at the returned alpha
        /// are within one bin's width of the target (the bin is interpolated linearly).
        #[test]
        fn solution_accepts_the_target(
            pkts in prop::collection::vec((1_000u64..10_000_000_000, 40u32..1500), 1..400),
            share in 0.05f64..0.95,
        ) {
            let mut h = LabelHistogram::new();
            for &(l, b) in &pkts {
                h.add(l, b);
            }
            let target = (h.total_bytes() as f64 * share) as u64;
            prop_assume!(target > 0);
            let alpha = h.solve(target).unwrap() as f64;
            let accepted = |a: f64| -> f64 {
                pkts.iter().map(|&(l, b)| b as f64 * (a / l as f64).min(1.0)).sum()
            };
            // alpha is within the bin where the exact curve crosses the target:
            // accepted(alpha / 1.125 - 1 kbit/s) <= target <= accepted(alpha * 1.125 + 1 kbit/s).
            prop_assert!(accepted(alpha / 1.125 - 1000.0) <= target as f64 + 1.0);
            prop_assert!(accepted(alpha * 1.125 + 1000.0) + 1.0 >= target as f64);
        }
    }
}
