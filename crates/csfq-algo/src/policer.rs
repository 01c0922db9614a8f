//! A token-bucket policer in integers: what a CSFQ edge may do with traffic that cannot
//! carry a label.
//!
//! The dataplane carries labels in the IPv4 Identification field, which only atomic
//! datagrams (DF set, not a fragment; RFC 6864) leave free. Other IPv4 traffic crosses
//! the island unlabeled. By default the cores judge it as one flow (`fixed.rs`
//! `FixedCore`, "unlabeled"), so it gets one fair share in all; an operator who wants a
//! fixed budget for it instead polices it at the edge with this bucket: `rate` bits/s,
//! `burst` bytes deep, all such traffic of the edge together.
//!
//! The arithmetic is exact: credit is kept in nanobits (10^-9 bit), so `rate` bit/s adds
//! `rate` nanobits per ns and nothing is lost to rounding between packets. It is the
//! model the eBPF edge (`edge.bpf.c`, `police`) follows operation for operation; the
//! shared vectors (`police` lines) hold the two equal.

/// The largest burst, bytes: keeps the credit (`burst * 8 * 10^9` nanobits) in a `u64`.
pub const MAX_BURST_BYTES: u32 = 1 << 30;

const NANOBITS_PER_BYTE: u64 = 8_000_000_000;

/// A token bucket: `rate_bps` bit/s, `burst_bytes` deep. It starts full.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenBucket {
    /// Credit, nanobits.
    pub credit: u64,
    /// The last packet's time, ns; 0: no packet yet (the bucket is full).
    pub last_ns: u64,
}

impl TokenBucket {
    /// Whether a packet of `bytes` at `now_ns` conforms to `rate_bps` with `burst_bytes`
    /// (at most [`MAX_BURST_BYTES`]); a conforming packet takes its bytes from the bucket.
    /// A clock that goes back adds nothing.
    pub fn admit(&mut self, now_ns: u64, bytes: u32, rate_bps: u64, burst_bytes: u32) -> bool {
        let full = burst_bytes.min(MAX_BURST_BYTES) as u64 * NANOBITS_PER_BYTE;
        if self.last_ns == 0 {
            self.credit = full;
        } else {
            let gap = now_ns.saturating_sub(self.last_ns);
            let room = full.saturating_sub(self.credit);
            // gap * rate <= room unless the bucket fills: no overflow.
            if rate_bps == 0 || gap <= room / rate_bps {
                self.credit += gap * rate_bps;
            } else {
                self.credit = full;
            }
            self.credit = self.credit.min(full);
        }
        self.last_ns = now_ns.max(self.last_ns).max(1);
        let cost = bytes as u64 * NANOBITS_PER_BYTE;
        if self.credit >= cost {
            self.credit -= cost;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Hand-computed: 8 kbit/s is one byte per ms; a 3000-byte bucket passes two
    /// 1500-byte packets at once, then one every 1.5 s.
    #[test]
    fn hand_computed_case() {
        let mut b = TokenBucket::default();
        let ms = 1_000_000u64;
        assert!(b.admit(10 * ms, 1500, 8_000, 3000));
        assert!(b.admit(10 * ms, 1500, 8_000, 3000));
        assert!(!b.admit(10 * ms, 1, 8_000, 3000));
        assert!(!b.admit(1509 * ms, 1500, 8_000, 3000)); // 1499 bytes of credit
        assert!(b.admit(1510 * ms, 1500, 8_000, 3000));
        assert_eq!(b.credit, 0);
        // A long silence fills the bucket, never beyond it.
        assert!(b.admit(1_000_000 * ms, 3000, 8_000, 3000));
        assert!(!b.admit(1_000_000 * ms, 1, 8_000, 3000));
    }

    /// A steady stream at twice the rate for 100 s: what passes is the burst plus the
    /// rate's worth from the first packet to the last, within one packet.
    #[test]
    fn twice_the_rate_passes_half() {
        let mut b = TokenBucket::default();
        let (rate, burst) = (1_000_000u64, 10_000u32);
        let gap = 1500 * 8 * 1_000_000_000 / (2 * rate); // 6 ms: 2 Mbit/s
        let (mut passed, n) = (0u64, 100_000_000_000 / gap);
        for i in 1..=n {
            if b.admit(i * gap, 1500, rate, burst) {
                passed += 1500;
            }
        }
        // From the first packet (bucket full) to the last, (n - 1) gaps of credit.
        let allowed = burst as u64 + rate * (n - 1) * gap / 8_000_000_000;
        assert!(
            passed <= allowed && passed + 1500 > allowed,
            "{passed} vs {allowed}"
        );
    }

    /// A clock that goes back adds no credit and does not move the clock back.
    #[test]
    fn clock_going_back_adds_nothing() {
        let mut b = TokenBucket::default();
        assert!(b.admit(1_000, 3000, 8_000, 3000));
        assert!(!b.admit(500, 1, 8_000, 3000));
        assert_eq!(b.last_ns, 1_000);
    }

    proptest! {
        /// Over any arrival pattern, what passes in [t0, t1] is at most
        /// burst + rate * (t1 - t0) (the token bucket's arrival curve), with exact
        /// arithmetic at the extremes of rate and burst.
        #[test]
        fn passes_at_most_the_arrival_curve(
            rate in prop_oneof![Just(1u64), 1u64..10_000_000_000, Just(4_000_000_000_000u64)],
            burst in prop_oneof![1500u32..100_000, Just(MAX_BURST_BYTES)],
            gaps in prop::collection::vec((0u64..50_000_000, 40u32..9000), 1..300),
        ) {
            let mut b = TokenBucket::default();
            let mut now = 1u64;
            let mut passed: Vec<(u64, u64)> = Vec::new();
            for (gap, bytes) in gaps {
                now += gap;
                if b.admit(now, bytes, rate, burst) {
                    passed.push((now, bytes as u64));
                }
            }
            for i in 0..passed.len() {
                let mut sum: u128 = 0;
                for p in &passed[i..] {
                    sum += p.1 as u128 * 8_000_000_000;
                    let allowed = burst as u128 * 8_000_000_000
                        + (p.0 - passed[i].0) as u128 * rate as u128;
                    prop_assert!(sum <= allowed);
                }
            }
        }
    }
}
