//! MAY in integer arithmetic: the model of what the Linux dataplane's MAY program
//! (`crates/csfq-dp/bpf/may.bpf.c`) computes, operation for operation. The algorithm is
//! [`crate::may`]'s (the MAY paper, Section II and the pseudocode of its Fig. 1, with the
//! utilization read as the arrival rate at the queue, Section V); what differs is how it is
//! computed, so that no packet ever walks the table:
//!
//! - **The update every `Delta` is folded in lazily.** The controller on `v` (line 20) runs
//!   on the first arrival at least `Delta` after the last update, as in `may.rs`, and counts
//!   one more interval (`epoch`). An entry of `H` remembers the interval it was last brought
//!   up to date in. Its flow's next packet applies the steps of lines 25-27 it missed, in
//!   closed form: the first with the interval's drops, `delta = (1 - q_w) delta + q_w ND`,
//!   the `k - 1` others with none, `delta *= (1 - q_w)^(k - 1)` (by squaring).
//! - **Expiry is judged the same way.** An entry whose last drop (`TS`) is more than `T0`
//!   before the latest update would have been removed by the walk at some update (the
//!   first past `T0`; `TS` does not change between two packets of its flow, and updates
//!   only grow later), so its flow's next packet finds it gone and is treated as a new
//!   flow's.
//! - **Numbers.** `v` in Q32 (at most 16), `delta` in Q16 drops per interval (at most
//!   2^31), the utilization in Q16 (at most 256); `u0`, `kappa` and `q_w` in Q16, `1 - q_w`
//!   and `q0 = 1/S0` in Q32. The drop probability `v delta` is Q0.32 against a 32-bit random
//!   draw; a packet takes one draw, for the drop (its flow in `H`) or for the sampling (not).
//!   The utilization divides the interval's arriving bits (at most 2^40 bytes counted:
//!   `csfq dp may attach` refuses a rate and interval whose arrivals could exceed it) by
//!   `C` in kbit/s times the elapsed time in microseconds (at most 2^31 us), so every
//!   product fits 64 bits up to 4 Tbit/s; products of `delta` and a Q32 factor are taken
//!   in two halves ([`mul_q32`]).
//! - **The table** has no capacity limit here; the program's is an LRU hash of the size the
//!   operator chose, which evicts entries not seen recently when full (the kernel's LRU is
//!   approximate, kept per CPU). The vectors never fill it.
//!
//! Only MAY's own drops count in `ND` (the pseudocode's reading): the program sits in front
//! of the link's shaper and does not see the shaper's buffer overflow.
//!
//! The utilization counts the bytes MAY passes on to the queue (`passed_only`, set from
//! [`MayParams::utilization`], [`MayUtilization::Passed`] by default: Eq. (3)'s rate after
//! MAY's own drops): a constant-rate flow MAY has shut off then stops holding `v` up.
//! Without it every arriving byte counts, and a flow's dropped packets keep the
//! utilization above `u0`, and `v` rising, for as long as it sends, so flows in the table
//! beside it are dropped too.

use std::collections::HashMap;

use crate::may::{MayCeiling, MayParamError, MayParams, MayUtilization};
use crate::packet::FlowId;

/// `v`'s ceiling, Q32: 16 (a flow with `delta` of 1/16 drop per interval already loses
/// every packet).
pub const V_MAX_Q32: u64 = 16 << 32;
/// `delta`'s ceiling, Q16: 2^31 drops per interval (a flow is shut off once `v delta`
/// reaches 1, which needs `delta` of `1/v`: its share in packets per interval).
pub const DELTA_MAX_Q16: u64 = 1 << 47;
/// The utilization's ceiling, Q16: 256 times the capacity.
pub const UTIL_MAX_Q16: u64 = 256 << 16;
/// The bytes one interval's utilization counts at most.
pub const ARRIVED_MAX: u64 = 1 << 40;
/// The elapsed time one interval's utilization counts at most, microseconds (36 minutes).
pub const ELAPSED_US_MAX: u64 = 1 << 31;
/// One in Q32: a drop probability of 1.
pub const ONE_Q32: u64 = 1 << 32;

/// MAY's parameters in the program's units, converted once from [`MayParams`]. One type
/// for this model and the dataplane's program: laid out as C lays out the programs'
/// `struct csfq_may_params` (`crates/csfq-dp/bpf/csfq_shared.h`), which the dataplane's
/// configuration holds as it is and its tests check against the compiled objects' BTF.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct FixedMayParams {
    /// `C`, bit/s (1 kbit/s to 4 Tbit/s).
    pub capacity_bps: u64,
    /// `Delta`, ns.
    pub interval_ns: u64,
    /// `T0`, ns.
    pub timeout_ns: u64,
    /// `u0`, Q16.
    pub u0_q16: u64,
    /// `kappa`, Q16.
    pub gain_q16: u64,
    /// `q_w`, Q16.
    pub q_w_q16: u64,
    /// `1 - q_w`, Q32 (below 2^32).
    pub keep_q32: u64,
    /// `q0 = 1/S0`, Q32 (at most 2^32).
    pub sample_q32: u64,
    /// Nonzero: count only the bytes MAY passes in the utilization, not those it drops
    /// (Eq. 3's reading, the default); 0: every arrival counts. (A 32-bit word, as the
    /// program reads it: see [`FixedMayParams::counts_passed_only`].)
    pub passed_only: u32,
    /// Nonzero: `v` kept at or below `2^48 / delta_max` (Q32 over Q16: the `v` at which
    /// the interval's largest `delta` is dropped with certainty; [`MayCeiling::Heaviest`]).
    pub ceiling: u32,
}

fn q(x: f64, bits: u32) -> u64 {
    (x * (1u64 << bits) as f64).round() as u64
}

impl FixedMayParams {
    /// The program's parameters for `p` (checked first); `capacity_bps`, `kappa`, `q_w`
    /// and `S0` must also fit the fixed-point ranges.
    pub fn from_params(p: &MayParams) -> Result<Self, MayParamError> {
        p.validate()?;
        let bad =
            |field: &'static str, expected: &'static str| Err(MayParamError { field, expected });
        if !(1e3..=4e12).contains(&p.capacity_bps) {
            return bad("capacity_bps", "from 1 kbit/s to 4 Tbit/s");
        }
        if !(1.0 / 65536.0..=1000.0).contains(&p.gain) {
            return bad("gain", "from 2^-16 to 1000");
        }
        if p.q_w < 1.0 / 65536.0 {
            return bad("q_w", "at least 2^-16");
        }
        if p.s0 > 1e9 {
            return bad("s0", "at most 10^9");
        }
        Ok(FixedMayParams {
            capacity_bps: p.capacity_bps.round() as u64,
            interval_ns: p.update_interval.0,
            timeout_ns: p.timeout.0,
            u0_q16: q(p.target_utilization, 16),
            gain_q16: q(p.gain, 16),
            q_w_q16: q(p.q_w, 16),
            keep_q32: q(1.0 - p.q_w, 32).min(ONE_Q32 - 1),
            sample_q32: q(1.0 / p.s0, 32).min(ONE_Q32),
            passed_only: u32::from(p.utilization == MayUtilization::Passed),
            ceiling: u32::from(p.ceiling == MayCeiling::Heaviest),
        })
    }

    /// The utilization counts only the bytes MAY passes (`passed_only` nonzero).
    pub fn counts_passed_only(&self) -> bool {
        self.passed_only != 0
    }
}

/// The program's aggregate state (`struct csfq_may_state`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FixedMayState {
    /// `v`, Q32.
    pub v_q32: u64,
    /// The utilization of the last completed interval, Q16.
    pub util_q16: u64,
    /// When the last interval ended, ns (0: none yet).
    pub last_update_ns: u64,
    /// Intervals ended so far.
    pub epoch: u64,
    /// Bytes arrived since `last_update_ns`, dropped ones included.
    pub arrived_bytes: u64,
}

/// One entry of `H` (`struct csfq_may_entry`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FixedMayEntry {
    /// `delta`, Q16 drops per interval, as of the end of interval `epoch`.
    pub delta_q16: u64,
    /// `TS`: the last drop (or the insert), ns.
    pub ts_ns: u64,
    /// The interval the entry is up to date in.
    pub epoch: u64,
    /// `ND`: drops in that interval.
    pub nd: u32,
}

/// What MAY decided for one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixedMayVerdict {
    /// Forwarded to the FIFO.
    Forward,
    /// Dropped with probability `v delta` (lines 2-7): `DropReason::MayHistory`.
    DropHistory,
    /// Sampled into `H` while the utilization was above `u0` (lines 8-15):
    /// `DropReason::MaySample`.
    DropSample,
}

/// One packet's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedMayOutcome {
    /// The verdict.
    pub verdict: FixedMayVerdict,
    /// Its flow entered `H`.
    pub inserted: bool,
    /// Its flow's entry had expired (idle past `T0`) and was removed.
    pub expired: bool,
}

/// `keep^k` in Q32, by squaring over 32 rounds (0 for `k >= 2^32`).
pub fn pow_q32(keep_q32: u64, k: u64) -> u64 {
    if k >= 1 << 32 {
        return 0;
    }
    let (mut r, mut b, mut k) = (ONE_Q32, keep_q32, k);
    for _ in 0..32 {
        if k & 1 == 1 {
            r = (r * b) >> 32;
        }
        b = (b * b) >> 32;
        k >>= 1;
    }
    r
}

/// `floor(x k / 2^32)` for `x < 2^48` and `k <= 2^32`, exactly, in 64 bits: the high and
/// low halves of `x` apart.
pub fn mul_q32(x: u64, k: u64) -> u64 {
    (x >> 32) * k + (((x & 0xffff_ffff) * k) >> 32)
}

/// `floor(log2 x)` for `x > 0`.
fn log2_floor(x: u64) -> u32 {
    63 - x.leading_zeros()
}

/// The drop probability `v delta` in Q0.32 (`ONE_Q32` and above: certain).
pub fn drop_probability_q32(v_q32: u64, delta_q16: u64) -> u64 {
    if v_q32 == 0 || delta_q16 == 0 {
        return 0;
    }
    if log2_floor(v_q32) + log2_floor(delta_q16) >= 48 {
        return ONE_Q32; // the product is at least 2^48: v delta >= 1
    }
    ((v_q32 * delta_q16) >> 16).min(ONE_Q32)
}

/// Brings an entry up to interval `epoch`: lines 25-27 for each interval it missed.
pub fn fold(e: &mut FixedMayEntry, epoch: u64, p: &FixedMayParams) {
    if e.epoch >= epoch {
        return;
    }
    let k = epoch - e.epoch;
    let first = (mul_q32(e.delta_q16, p.keep_q32) + p.q_w_q16 * u64::from(e.nd)).min(DELTA_MAX_Q16);
    e.delta_q16 = if k > 1 {
        mul_q32(first, pow_q32(p.keep_q32, k - 1))
    } else {
        first
    };
    e.nd = 0;
    e.epoch = epoch;
}

/// Whether an entry was removed by an update since it was last brought up to date: its
/// last drop is more than `T0` before the latest update.
pub fn expired(e: &FixedMayEntry, s: &FixedMayState, p: &FixedMayParams) -> bool {
    e.epoch < s.epoch && s.last_update_ns.saturating_sub(e.ts_ns) > p.timeout_ns
}

/// The ceiling on `v` (Q32) that `delta_max` (Q16, above 0) sets: the least `v` whose
/// drop probability for `delta_max` is certain (`v delta_max >= 2^48`).
pub fn ceiling_q32(delta_max_q16: u64) -> u64 {
    (1u64 << 48).div_ceil(delta_max_q16)
}

/// Line 20 at `now`, over the `arrived` bytes of the interval that ends: the utilization
/// (arrival rate over capacity) and `v += kappa (utilization - u0)`, kept in `[0, 16]`
/// and, with `ceiling`, at or below [`ceiling_q32`] of `delta_max` (the largest `delta`
/// the interval's arrivals found in their entries, Q16; 0: none, no ceiling).
pub fn end_interval(
    s: &mut FixedMayState,
    now: u64,
    arrived: u64,
    delta_max_q16: u64,
    p: &FixedMayParams,
) {
    let elapsed_us = (now.saturating_sub(s.last_update_ns) / 1000).min(ELAPSED_US_MAX);
    let sendable_bits = (p.capacity_bps / 1000) * elapsed_us / 1000;
    let bits_q16 = (arrived.min(ARRIVED_MAX) * 8) << 16;
    s.util_q16 = bits_q16
        .checked_div(sendable_bits)
        .map_or(UTIL_MAX_Q16, |u| u.min(UTIL_MAX_Q16));
    let dv = p.gain_q16 as i64 * (s.util_q16 as i64 - p.u0_q16 as i64);
    s.v_q32 = (s.v_q32 as i64 + dv).clamp(0, V_MAX_Q32 as i64) as u64;
    if p.ceiling != 0 && delta_max_q16 > 0 {
        s.v_q32 = s.v_q32.min(ceiling_q32(delta_max_q16));
    }
    s.epoch += 1;
    s.last_update_ns = now;
}

/// MAY's decisions in the program's arithmetic: the state, the table, no queue (the
/// program sits in front of the link's shaper, which holds the FIFO).
#[derive(Debug, Clone)]
pub struct FixedMay {
    /// The parameters.
    pub params: FixedMayParams,
    /// The aggregate state.
    pub state: FixedMayState,
    table: HashMap<FlowId, FixedMayEntry>,
    /// The largest `delta` an arrival of the current interval found in its entry, Q16
    /// (the program keeps one per CPU: `may_delta_max`).
    delta_max_q16: u64,
}

impl FixedMay {
    /// An empty table, `v = 0`, no interval ended yet.
    pub fn new(params: FixedMayParams) -> Self {
        FixedMay {
            params,
            state: FixedMayState::default(),
            table: HashMap::new(),
            delta_max_q16: 0,
        }
    }

    /// A flow's entry as stored (not brought up to date).
    pub fn entry(&self, flow: FlowId) -> Option<&FixedMayEntry> {
        self.table.get(&flow)
    }

    /// Entries stored (expired ones stay until their flow's next packet).
    pub fn entries(&self) -> usize {
        self.table.len()
    }

    /// One packet of `flow`, `bytes` long, at `now` (ns) with the 32-bit random `draw`.
    pub fn on_arrival(&mut self, now: u64, flow: FlowId, bytes: u32, draw: u32) -> FixedMayOutcome {
        let p = self.params;
        let s = self.state;
        let mut out = FixedMayOutcome {
            verdict: FixedMayVerdict::Forward,
            inserted: false,
            expired: false,
        };
        let draw = u64::from(draw);
        let mut tracked = false;
        if let Some(e) = self.table.get_mut(&flow) {
            if expired(e, &s, &p) {
                self.table.remove(&flow);
                out.expired = true;
            } else {
                tracked = true;
                fold(e, s.epoch, &p);
                self.delta_max_q16 = self.delta_max_q16.max(e.delta_q16);
                if draw < drop_probability_q32(s.v_q32, e.delta_q16) {
                    e.nd = e.nd.saturating_add(1);
                    e.ts_ns = now;
                    out.verdict = FixedMayVerdict::DropHistory;
                }
            }
        }
        if !tracked && draw < p.sample_q32 {
            self.table.insert(
                flow,
                FixedMayEntry {
                    delta_q16: 0,
                    ts_ns: now,
                    epoch: s.epoch,
                    nd: 1,
                },
            );
            out.inserted = true;
            if s.util_q16 > p.u0_q16 {
                out.verdict = FixedMayVerdict::DropSample;
            }
        }
        if now.saturating_sub(self.state.last_update_ns) >= p.interval_ns {
            let arrived = std::mem::take(&mut self.state.arrived_bytes);
            let delta_max = std::mem::take(&mut self.delta_max_q16);
            end_interval(&mut self.state, now, arrived, delta_max, &p);
        }
        if !(p.counts_passed_only() && out.verdict != FixedMayVerdict::Forward) {
            self.state.arrived_bytes += u64::from(bytes);
        }
        out
    }
}

/// Test vectors for the dataplane's MAY program: the model's outputs on fixed inputs, one
/// CSV line each; `testdata/may-fixed-vectors.csv` holds this text. The first line after
/// the comment gives the parameters (`mayparams,C,Delta,T0,u0,kappa,q_w,1-q_w,q0,
/// passed_only,ceiling`); each
/// `may` line one packet: `now,flow,bytes,draw,verdict,inserted,expired,v,utilization,
/// epoch,delta,ND` (the last two its flow's entry after it, `-` if it has none; verdict
/// 0 forward, 1 history drop, 2 sample drop).
///
/// The stream, on a 10 Mbit/s link with `Delta` = 10 ms, `T0` = 40 ms and `S0` = 8: a flow
/// at 30 Mbit/s, one at 4 Mbit/s, a sparse one that falls silent past `T0` and returns, a
/// fourth that joins late, and a 45 ms silence of all of them (an interval with almost no
/// arrivals, and entries several intervals behind).
pub fn test_vectors() -> String {
    use std::fmt::Write as _;
    let mp = MayParams {
        update_interval: crate::time::Nanos::from_millis(10),
        timeout: crate::time::Nanos::from_millis(40),
        s0: 8.0,
        ..MayParams::new(10e6, 64_000)
    };
    let p = FixedMayParams::from_params(&mp).expect("valid");
    let mut out = String::from(
        "# csfq MAY fixed-point model vectors; regenerate: CSFQ_WRITE_VECTORS=1 cargo test -p csfq-algo may_vectors\n",
    );
    writeln!(
        out,
        "mayparams,{},{},{},{},{},{},{},{},{},{}",
        p.capacity_bps,
        p.interval_ns,
        p.timeout_ns,
        p.u0_q16,
        p.gain_q16,
        p.q_w_q16,
        p.keep_q32,
        p.sample_q32,
        p.passed_only,
        p.ceiling
    )
    .unwrap();
    let mut m = FixedMay::new(p);
    let mut now = 1_000_000u64;
    for i in 0..1200u64 {
        // Every 400 us; a 45 ms silence after packet 700.
        now += if i == 700 { 45_000_000 } else { 400_000 };
        let (flow, bytes) = match i % 10 {
            0..=5 => (0, 1500),                        // 27 Mbit/s
            6 | 7 => (1, 500),                         // 2.5 Mbit/s
            8 if !(200..450).contains(&i) => (2, 200), // silent for 100 ms
            8 => (1, 500),
            _ if i >= 300 => (3, 900), // joins at 120 ms
            _ => (0, 1500),
        };
        let draw = (i.wrapping_mul(2_654_435_761).wrapping_add(i >> 3) & 0xffff_ffff) as u32;
        let o = m.on_arrival(now, FlowId(flow), bytes, draw);
        let verdict = match o.verdict {
            FixedMayVerdict::Forward => 0,
            FixedMayVerdict::DropHistory => 1,
            FixedMayVerdict::DropSample => 2,
        };
        let (delta, nd) = m
            .entry(FlowId(flow))
            .map_or(("-".to_string(), "-".to_string()), |e| {
                (e.delta_q16.to_string(), e.nd.to_string())
            });
        let s = m.state;
        writeln!(
            out,
            "may,{now},{flow},{bytes},{draw},{verdict},{},{},{},{},{},{delta},{nd}",
            u8::from(o.inserted),
            u8::from(o.expired),
            s.v_q32,
            s.util_q16,
            s.epoch
        )
        .unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::may::May;
    use crate::queue::test_packet::TestPacket;
    use crate::queue::{ConstRng, QueueDisc};
    use crate::time::Nanos;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    fn params() -> FixedMayParams {
        FixedMayParams::from_params(&MayParams::new(10e6, 64_000)).unwrap()
    }

    /// The paper's parameters in the program's units, by hand.
    #[test]
    fn paper_parameters_in_fixed_point() {
        let p = params();
        assert_eq!(p.interval_ns, 1_000_000_000);
        assert_eq!(p.timeout_ns, 64_000_000_000);
        assert_eq!(p.u0_q16, 64225); // 0.98 * 65536 = 64225.28
        assert_eq!(p.gain_q16, 6554); // 0.1 * 65536 = 6553.6
        assert_eq!(p.q_w_q16, 3277); // 0.05 * 65536 = 3276.8
        assert_eq!(p.keep_q32, 4_080_218_931); // 0.95 * 2^32 = 4080218931.2
        assert_eq!(p.sample_q32, 4_294_967); // 2^32 / 1000 = 4294967.296
    }

    #[test]
    fn out_of_range_parameters_name_the_field() {
        for (mp, field) in [
            (MayParams::new(10.0, 64_000), "capacity_bps"),
            (
                MayParams {
                    gain: 5000.0,
                    ..MayParams::new(10e6, 64_000)
                },
                "gain",
            ),
            (
                MayParams {
                    q_w: 1e-6,
                    ..MayParams::new(10e6, 64_000)
                },
                "q_w",
            ),
        ] {
            assert_eq!(FixedMayParams::from_params(&mp).unwrap_err().field, field);
        }
    }

    /// `keep^k` by squaring equals the float power within the Q32 truncations of its
    /// products, which compound to at most about `k` units of 2^-32.
    #[test]
    fn power_by_squaring_matches_the_float_power() {
        for keep in [0.5f64, 0.95, 0.999, 0.99999] {
            let kq = q(keep, 32);
            for k in [0u64, 1, 2, 3, 7, 64, 1000, 65_535] {
                let got = pow_q32(kq, k) as f64 / ONE_Q32 as f64;
                let want = (kq as f64 / ONE_Q32 as f64).powi(k as i32);
                assert!(
                    (got - want).abs() <= 2.0 * (k + 1) as f64 / ONE_Q32 as f64,
                    "{keep}^{k}: {got} vs {want}"
                );
            }
        }
        assert_eq!(pow_q32(q(0.95, 32), 1 << 32), 0);
    }

    /// Folding `k` missed intervals at once gives the walk's `k` steps: by hand for
    /// `delta = 0.5`, `ND = 3`, `q_w = 0.05`, `k = 3`: 0.95 * 0.5 + 0.05 * 3 = 0.625, then
    /// 0.625 * 0.95^2 = 0.5640625.
    #[test]
    fn folding_missed_intervals_by_hand() {
        let p = params();
        let mut e = FixedMayEntry {
            delta_q16: 1 << 15,
            ts_ns: 0,
            epoch: 4,
            nd: 3,
        };
        fold(&mut e, 7, &p);
        assert_eq!((e.epoch, e.nd), (7, 0));
        let d = e.delta_q16 as f64 / 65536.0;
        assert!((d - 0.5640625).abs() < 2.0 / 65536.0, "{d}");
        let before = e;
        fold(&mut e, 7, &p);
        assert_eq!(e, before, "an entry up to date is left alone");
    }

    /// The lazy fold against the walk: an entry folded one interval at a time and one
    /// folded `k` at once stay within the truncations of their products (a unit per step,
    /// and about `k` parts in 2^32 of delta), up to `delta`'s ceiling.
    #[test]
    fn lazy_fold_equals_the_walk_within_rounding() {
        let p = params();
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        for _ in 0..2000 {
            let e0 = FixedMayEntry {
                delta_q16: rng.random_range(0..DELTA_MAX_Q16),
                ts_ns: 0,
                epoch: 10,
                nd: rng.random_range(0..500),
            };
            let k = rng.random_range(1..80u64);
            let mut lazy = e0;
            fold(&mut lazy, 10 + k, &p);
            let mut walk = e0;
            for j in 1..=k {
                fold(&mut walk, 10 + j, &p);
            }
            let diff = lazy.delta_q16.abs_diff(walk.delta_q16) as f64;
            // One unit per truncated step, and the power's truncations relative to delta.
            let tolerance = (1 + k) as f64 + walk.delta_q16 as f64 * (k + 1) as f64 / 2f64.powi(31);
            assert!(
                diff <= tolerance,
                "k = {k}: lazy {} walk {}",
                lazy.delta_q16,
                walk.delta_q16
            );
        }
    }

    /// The split product is the exact one (checked in 128 bits).
    #[test]
    fn split_product_is_exact() {
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        for _ in 0..100_000 {
            let x = rng.random_range(0..1u64 << 48);
            let k = rng.random_range(0..=1u64 << 32);
            assert_eq!(
                u128::from(mul_q32(x, k)),
                (u128::from(x) * u128::from(k)) >> 32
            );
        }
    }

    /// `v delta` in Q0.32, saturating at 1, by hand.
    #[test]
    fn drop_probability_by_hand() {
        // v = 0.5, delta = 0.25: 1/8.
        assert_eq!(drop_probability_q32(1 << 31, 1 << 14), ONE_Q32 / 8);
        assert_eq!(drop_probability_q32(0, 1 << 20), 0);
        assert_eq!(drop_probability_q32(V_MAX_Q32, DELTA_MAX_Q16), ONE_Q32);
        // v = 2, delta = 0.5: exactly 1.
        assert_eq!(drop_probability_q32(2 << 32, 1 << 15), ONE_Q32);
    }

    /// The utilization is the interval's arriving bits over what the link could send:
    /// 25 000 bytes in 10 ms at 10 Mbit/s is 2.0; `v` moves by `kappa (2 - 0.98)`.
    #[test]
    fn interval_end_by_hand() {
        let p = params();
        let mut s = FixedMayState {
            last_update_ns: 5_000_000,
            ..Default::default()
        };
        end_interval(&mut s, 15_000_000, 25_000, 0, &p);
        assert_eq!(s.util_q16, 2 << 16);
        assert_eq!(s.v_q32, 6554 * (131_072 - 64225));
        assert_eq!((s.epoch, s.last_update_ns), (1, 15_000_000));
        // An idle interval takes kappa u0 off v; a second brings it to 0, never below.
        end_interval(&mut s, 1_015_000_000, 0, 0, &p);
        assert_eq!((s.util_q16, s.v_q32), (0, 6554 * (66847 - 64225)));
        end_interval(&mut s, 2_015_000_000, 0, 0, &p);
        assert_eq!(s.v_q32, 0);
    }

    /// `v`'s ceiling: after an interval whose arrivals found `delta` up to 4 (Q16 4 << 16),
    /// `v` is at most 1/4 (Q32 2^30), the least at which 4 drops with certainty; without
    /// `ceiling`, or with no entry seen (0), the controller's `v` stands.
    #[test]
    fn ceiling_by_hand() {
        let p = params();
        let start = FixedMayState {
            v_q32: 1 << 31, // 0.5
            last_update_ns: 5_000_000,
            ..Default::default()
        };
        // 25 000 bytes in 10 ms at 10 Mbit/s: utilization 2, v rises past 0.5.
        let mut s = start;
        end_interval(&mut s, 15_000_000, 25_000, 4 << 16, &p);
        assert_eq!(s.v_q32, 1 << 30);
        assert_eq!(drop_probability_q32(s.v_q32, 4 << 16), ONE_Q32);
        assert!(drop_probability_q32(s.v_q32 - 1, 4 << 16) < ONE_Q32);
        for (ceiling, delta_max) in [(0, 4 << 16), (1, 0)] {
            let mut s = start;
            end_interval(
                &mut s,
                15_000_000,
                25_000,
                delta_max,
                &FixedMayParams { ceiling, ..p },
            );
            assert_eq!(s.v_q32, (1 << 31) + 6554 * (131_072 - 64225));
        }
        // A delta of 3: 2^48 / 3 rounded up, so that 3 is still dropped with certainty.
        assert_eq!(ceiling_q32(3 << 16), (1u64 << 32).div_ceil(3));
        assert_eq!(drop_probability_q32(ceiling_q32(3 << 16), 3 << 16), ONE_Q32);
    }

    /// The program's arithmetic makes the same decisions as the floating-point MAY of the
    /// simulator (`may.rs`) when both see the same packets and the same draws: 8 flows of
    /// rates from a tenth to twice the link's over 30 intervals of the paper's parameters
    /// (the utilization well above `u0`, so `v` grows and both kinds of drop happen). The
    /// two may part where a probability's rounding falls on a draw, after which their
    /// tables differ; each flow's drops agree within 2% of its packets, and `v` within 2%.
    #[test]
    fn decisions_track_the_floating_point_may() {
        let mp = MayParams {
            s0: 50.0,
            ..MayParams::new(10e6, u32::MAX)
        };
        let mut fixed = FixedMay::new(FixedMayParams::from_params(&mp).unwrap());
        let mut float = May::<TestPacket>::new(mp).unwrap();
        let rates = [0.1e6, 0.5e6, 1e6, 2e6, 3e6, 5e6, 10e6, 20e6];
        let mut next: Vec<f64> = (0..8).map(|i| 1e-3 * i as f64).collect();
        let mut rng = Pcg64Mcg::seed_from_u64(11);
        let (mut sent, mut dropped_fixed, mut dropped_float) = ([0u32; 8], [0u32; 8], [0u32; 8]);
        loop {
            let (f, &t) = next
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .unwrap();
            if t > 30.0 {
                break;
            }
            next[f] += 8000.0 / rates[f] * rng.random_range(0.8..1.2);
            let now = (t * 1e9) as u64 + 1;
            let draw: u32 = rng.random();
            sent[f] += 1;
            let o = fixed.on_arrival(now, FlowId(f as u32), 1000, draw);
            if o.verdict != FixedMayVerdict::Forward {
                dropped_fixed[f] += 1;
            }
            let mut r = ConstRng(u64::from(draw) << 32);
            if float
                .enqueue(TestPacket::new(f as u32, 1000, 0.0), Nanos(now), &mut r)
                .is_some()
            {
                dropped_float[f] += 1;
            }
            let _ = float.dequeue(Nanos(now));
        }
        let total: u32 = dropped_fixed.iter().sum();
        assert!(total > 10_000, "the run must drop: {total}");
        for f in 0..8 {
            let gap = dropped_fixed[f].abs_diff(dropped_float[f]) as f64 / sent[f] as f64;
            assert!(
                gap < 0.02,
                "flow {f}: {} vs {} of {}",
                dropped_fixed[f],
                dropped_float[f],
                sent[f]
            );
        }
        let (vf, vx) = (float.v(), fixed.state.v_q32 as f64 / ONE_Q32 as f64);
        assert!((vf - vx).abs() <= 0.02 * vf.max(1e-9), "v {vx} vs {vf}");
    }

    /// With `passed_only`, a packet MAY drops does not count in the utilization: by hand,
    /// a 1000-byte packet sampled and dropped (utilization above `u0`) and a 500-byte one
    /// forwarded leave 500 bytes in the interval (1500 under the arrival reading).
    #[test]
    fn passed_only_counts_what_may_passes() {
        for (passed_only, want) in [(false, 1500), (true, 500)] {
            let mut m = FixedMay::new(FixedMayParams {
                sample_q32: ONE_Q32,
                passed_only: u32::from(passed_only),
                ..params()
            });
            m.state.util_q16 = 2 << 16;
            m.state.last_update_ns = 1;
            let o = m.on_arrival(10, FlowId(1), 1000, 0);
            assert_eq!(o.verdict, FixedMayVerdict::DropSample);
            // Already in the table with delta 0: forwarded.
            let o = m.on_arrival(20, FlowId(1), 500, 0);
            assert_eq!(o.verdict, FixedMayVerdict::Forward);
            assert_eq!(m.state.arrived_bytes, want, "passed_only {passed_only}");
        }
    }

    /// The committed vectors are what the model computes (regenerate with
    /// `CSFQ_WRITE_VECTORS=1 cargo test -p csfq-algo may_vectors`), and they exercise
    /// every path: both drops, inserts, an expiry, folds over several intervals.
    #[test]
    fn may_vectors_match_the_committed_file() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/may-fixed-vectors.csv"
        );
        let now = test_vectors();
        if std::env::var_os("CSFQ_WRITE_VECTORS").is_some() {
            std::fs::write(path, &now).unwrap();
        }
        let committed = std::fs::read_to_string(path).expect("testdata/may-fixed-vectors.csv");
        assert_eq!(
            committed, now,
            "the model changed: regenerate the vectors and update the dataplane"
        );
        let rows: Vec<Vec<&str>> = now
            .lines()
            .filter(|l| l.starts_with("may,"))
            .map(|l| l.split(',').collect())
            .collect();
        let count = |col: usize, v: &str| rows.iter().filter(|r| r[col] == v).count();
        assert!(count(5, "1") >= 20, "history drops");
        assert!(count(5, "2") >= 2, "sample drops");
        assert!(count(6, "1") >= 4, "inserts");
        assert!(count(7, "1") >= 1, "expiries");
    }
}
