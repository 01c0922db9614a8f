//! CSFQ in integer arithmetic: the model of what the Linux dataplane computes.
//!
//! eBPF has no floating point, so the dataplane's edge and core run CSFQ with integers
//! only; this module is that arithmetic in Rust, operation for operation, so the simulator
//! can run exactly the dataplane's numbers and shared test vectors keep the two in step.
//!
//! - Rates are `u64` bits per second; time is `u64` nanoseconds.
//! - Eq. (3) is rewritten to avoid dividing by the gap `T`:
//!   `r_new = (l/K) * g(x) + e(x) * r_old` with `x = T/K`, `e(x) = e^-x` and
//!   `g(x) = (1 - e^-x)/x` (`g(0) = 1`), with `x` in Q28. Below `x = 1` it uses the exact
//!   identity `1 - e^-x = x g(x)`: `r_new = r_old + g(x) (l/K - x r_old)`, since `e^-x` is
//!   too close to 1 there to carry in Q16; from 1 to 16 the form above; beyond 16,
//!   `r_new = l/T`. `e` and `g` come from 4096-entry Q16 tables over [0, 16), interpolated
//!   linearly, computed once outside the per-packet path.
//! - The drop probability `1 - alpha/label` is Q0.32 and compared with a 32-bit random draw.
//! - `alpha <- alpha * C / F` is done in Kbit/s so the product fits 64 bits up to 4 Tbit/s.
//! - Labels travel as 16-bit (IPv4 Identification) or 20-bit (IPv6 flow label) floats,
//!   encoded with integer operations ([`encode_label`], [`decode_label`]), matching
//!   [`crate::label_codec::LabelCodec`].

use std::sync::OnceLock;

use rand::Rng;

use crate::csfq::Estimator;
use crate::label_codec::LabelCodec;
use crate::label_histogram::LabelHistogram;
use crate::packet::{FlowId, Packet};
use crate::queue::{ByteFifo, Held, InOrder, Keep};
use crate::time::Nanos;
use crate::verdict::{DropReason, Dropped};

/// The tables, computed once per process.
pub fn tables() -> &'static ExpTables {
    static T: OnceLock<ExpTables> = OnceLock::new();
    T.get_or_init(ExpTables::new)
}

/// Entries of each table.
pub const TABLE_LEN: usize = 4096;
/// Table entries per unit of `x`.
pub const TABLE_STEP_INV: u64 = 256;
/// `x` at and beyond which `e^-x` is taken as 0.
pub const X_MAX: u64 = TABLE_LEN as u64 / TABLE_STEP_INV;
const ONE_Q16: u64 = 1 << 16;
/// The largest averaging constant, ns (1 s): keeps `gap << 28` within 64 bits.
pub const K_MAX_NS: u64 = 1 << 30;

/// The two Q16 tables: `e^-x` and `(1 - e^-x)/x` at `x = i / 256`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpTables {
    /// `e^-x`, Q16.
    pub exp_neg: Vec<u32>,
    /// `(1 - e^-x)/x`, Q16.
    pub one_minus_exp_over_x: Vec<u32>,
}

impl ExpTables {
    /// Computes the tables (floating point here, once; the dataplane gets them as data).
    pub fn new() -> Self {
        let mut e = Vec::with_capacity(TABLE_LEN + 1);
        let mut g = Vec::with_capacity(TABLE_LEN + 1);
        for i in 0..=TABLE_LEN {
            let x = i as f64 / TABLE_STEP_INV as f64;
            e.push(((-x).exp() * ONE_Q16 as f64).round() as u32);
            let gv = if i == 0 { 1.0 } else { (1.0 - (-x).exp()) / x };
            g.push((gv * ONE_Q16 as f64).round() as u32);
        }
        ExpTables {
            exp_neg: e,
            one_minus_exp_over_x: g,
        }
    }

    /// `(e(x), g(x))` in Q16 for `x` in Q28 below 16, by linear interpolation.
    #[inline]
    pub fn lookup(&self, x_q28: u64) -> (u64, u64) {
        let pos = x_q28 * TABLE_STEP_INV; // Q28 position in entries
        let i = ((pos >> 28) as usize).min(TABLE_LEN - 1);
        let frac = pos & ((1 << 28) - 1);
        let lerp = |t: &[u32]| {
            let (a, b) = (t[i] as u64, t[i + 1] as u64);
            // a + (b - a) * frac, with b <= a for both (decreasing) functions.
            a - (((a - b) * frac) >> 28)
        };
        (lerp(&self.exp_neg), lerp(&self.one_minus_exp_over_x))
    }
}

impl Default for ExpTables {
    fn default() -> Self {
        Self::new()
    }
}

/// Eq. (3) in integers: the state of one rate estimate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FixedRate {
    /// Estimate, bits/s.
    pub rate_bps: u64,
    /// Time of the last update, ns (0: none yet).
    pub last_ns: u64,
    /// Bytes at `last_ns` not yet counted (same-instant arrivals, and the first packet).
    pub pending_bytes: u64,
}

impl FixedRate {
    /// Accounts `bytes` at `now_ns` with averaging constant `k_ns`; returns the estimate.
    #[inline]
    pub fn update(&mut self, t: &ExpTables, now_ns: u64, bytes: u32, k_ns: u64) -> u64 {
        if self.last_ns == 0 && self.rate_bps == 0 && self.pending_bytes == 0 {
            self.last_ns = now_ns.max(1);
            self.pending_bytes = bytes as u64;
            return 0;
        }
        let gap = now_ns.saturating_sub(self.last_ns);
        if gap == 0 {
            self.pending_bytes += bytes as u64;
            return self.rate_bps;
        }
        let bits = (bytes as u64 + self.pending_bytes) * 8;
        let k = k_ns.clamp(1, K_MAX_NS);
        self.rate_bps = if gap >= X_MAX * k {
            // x >= 16: e^-x ~ 0 and g = 1/x, so the estimate is just l/T.
            bits * 1_000_000_000 / gap
        } else {
            let x_q28 = (gap << 28) / k; // gap < 16 K <= 2^34: fits
            let (e, g) = t.lookup(x_q28);
            let burst_bps = bits * 1_000_000_000 / k; // l/K
            if x_q28 < 1 << 28 {
                // x < 1: r + g (l/K - x r), from 1 - e^-x = x g(x); e^-x itself is too close
                // to 1 here for Q16. x r in two halves of r keeps every product in 64 bits.
                let r = self.rate_bps;
                let decay = (((r >> 16) * x_q28) >> 12) + (((r & 0xffff) * x_q28) >> 28); // x r
                let delta = burst_bps as i64 - decay as i64;
                (self.rate_bps as i64 + ((g as i64 * delta) >> 16)).max(0) as u64
            } else {
                ((burst_bps * g) >> 16) + ((self.rate_bps * e) >> 16)
            }
        };
        self.last_ns = now_ns;
        self.pending_bytes = 0;
        self.rate_bps
    }
}

/// Encodes a rate (bits/s) as a `codec` label with integer operations only: round to the
/// nearest code, saturating. Equal to [`LabelCodec::encode`].
pub fn encode_label(codec: &LabelCodec, rate_bps: u64) -> u32 {
    let x = rate_bps / codec.unit_bps; // whole units
    let rem = rate_bps % codec.unit_bps;
    if x == 0 || (x == 1 && rem == 0) {
        return 0;
    }
    let m_bits = codec.mantissa_bits;
    let mut e = (63 - x.leading_zeros()) as u64; // floor(log2 x)
                                                 // The mantissa with one extra bit for rounding: floor(rate 2^(M+1) / (unit 2^e)), as
                                                 // one shift and one division (floor(floor(a/b)/c) = floor(a/bc)): no 128-bit
                                                 // arithmetic, which eBPF lacks. Shifting left, rate < 2^(e+1) unit, so it fits.
    let s = m_bits as u64 + 1;
    let scaled = if e >= s {
        (rate_bps >> (e - s)) / codec.unit_bps
    } else {
        (rate_bps << (s - e)) / codec.unit_bps
    };
    // scaled is in [2^(M+1), 2^(M+2)): round half up, drop the implicit 1.
    let mut m = scaled.div_ceil(2) - (1 << m_bits);
    if m == 1 << m_bits {
        m = 0;
        e += 1;
    }
    if e >= 1 << codec.exponent_bits {
        return codec.max_code();
    }
    ((e as u32) << m_bits) | m as u32
}

/// Decodes a label to bits/s, rounding down: `(2^M + m) * 2^e * unit / 2^M`.
pub fn decode_label(codec: &LabelCodec, code: u32) -> u64 {
    let code = code & codec.max_code();
    let m = (code & ((1 << codec.mantissa_bits) - 1)) as u64;
    let e = (code >> codec.mantissa_bits) as u64;
    ((((1u64 << codec.mantissa_bits) + m) * codec.unit_bps) << e) >> codec.mantissa_bits
}

/// Fixed-point core parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedCoreParams {
    /// `C`, bits/s.
    pub capacity_bps: u64,
    /// `K_alpha`, ns.
    pub k_alpha_ns: u64,
    /// `K_c`, ns.
    pub k_c_ns: u64,
    /// Queue threshold below which `alpha = 0` is kept, bytes.
    pub threshold_bytes: u32,
    /// Overflow decreases between two updates of `alpha`.
    pub overflow_budget: u32,
    /// How `alpha` is estimated.
    pub estimator: Estimator,
}

/// The core's aggregate state (SPEC Section 1), all integers.
///
/// With the histogram estimator the per-packet state is kept per lane (one per CPU in the
/// dataplane, which runs packets on many CPUs at once without a lock): each lane counts
/// its own packets' labels, largest label and bytes, and the window's end merges them
/// (sum of histograms, largest of the largest labels). The merge is exact, so any spread
/// of the same packets over lanes gives the same `alpha` and the same verdicts as one
/// lane. The paper's estimator tests `A >= C` on every packet and keeps one state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FixedCore {
    /// `A`: Eq. (3) over every arrival with the paper's estimator; with the histogram
    /// estimator, the last window's average over all lanes (only reported).
    pub arrival: FixedRate,
    /// `F`, as `A`, of the packets not dropped by Eq. (2).
    pub accepted: FixedRate,
    /// `alpha`, bits/s (0: not dropping).
    pub alpha_bps: u64,
    /// In a congested window.
    pub congested: bool,
    /// Window start, ns.
    pub start_ns: u64,
    /// Largest label in the current uncongested window, bits/s (paper's estimator).
    pub max_label_bps: u64,
    /// Overflow decreases left until the next update of `alpha`.
    pub overflow_left: u32,
    /// The lanes' window state ([`Estimator::Histogram`]; made by [`FixedCore::new`]).
    pub lanes: Vec<Lane>,
    /// Unlabeled traffic (label code 0: no edge priced it, or the packet has no carrier)
    /// as one flow, Eq. (3) with `K_alpha`: its rate, through the carrier, is the label
    /// it is judged by. Unknown is never free: together, unlabeled packets get about one
    /// fair share. (Beyond the paper.) Shared by the lanes.
    pub unlabeled: FixedRate,
}

/// One lane's part of the current window (histogram estimator).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lane {
    /// The labels of the lane's packets.
    pub histogram: Box<LabelHistogram>,
    /// Their largest label, bits/s.
    pub max_label_bps: u64,
    /// Their bytes.
    pub arrived_bytes: u64,
    /// The bytes of those not dropped by Eq. (2).
    pub accepted_bytes: u64,
}

/// One packet arriving at a core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// Arrival time, ns.
    pub now_ns: u64,
    /// Size, bytes.
    pub bytes: u32,
    /// Label, bits/s.
    pub label_bps: u64,
    /// Queue in front of the link at arrival, bytes.
    pub queue_bytes: u32,
    /// A uniform 32-bit random draw.
    pub draw: u32,
}

/// What the core decided for a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixedVerdict {
    /// Drop it.
    Drop,
    /// Forward it with this label (bits/s; relabeled to `min(label, alpha)` when it was
    /// subject to dropping).
    Forward(u64),
}

impl FixedCore {
    /// A core in its initial state for `p`, with one lane.
    pub fn new(p: &FixedCoreParams) -> Self {
        Self::with_lanes(p, 1)
    }

    /// A core in its initial state for `p` whose packets arrive on `lanes` lanes (at
    /// least one).
    pub fn with_lanes(p: &FixedCoreParams, lanes: usize) -> Self {
        let n = if p.estimator == Estimator::Histogram {
            lanes.max(1)
        } else {
            0
        };
        FixedCore {
            lanes: vec![Lane::default(); n],
            ..Default::default()
        }
    }

    /// `max(0, 1 - alpha/label)` in Q0.32 (`u32::MAX` stands for 1).
    #[inline]
    pub fn drop_probability_q32(&self, label_bps: u64) -> u32 {
        drop_probability_q32(self.alpha_bps, label_bps)
    }

    /// One arrival: the drop decision with the 32-bit random `a.draw`, then `estimate_alpha`.
    #[inline]
    pub fn on_arrival(&mut self, t: &ExpTables, p: &FixedCoreParams, a: &Arrival) -> FixedVerdict {
        self.on_arrival_on(t, p, a, 0)
    }

    /// [`FixedCore::on_arrival`] on lane `lane` (taken modulo the lanes).
    #[inline]
    pub fn on_arrival_on(
        &mut self,
        t: &ExpTables,
        p: &FixedCoreParams,
        a: &Arrival,
        lane: usize,
    ) -> FixedVerdict {
        let given = a.label_bps;
        let mut a = *a;
        // Label code 0 (what a packet no edge labeled carries: rates up to the carrier's
        // unit) is unlabeled: judged by the unlabeled traffic's price.
        if given <= CARRIER.unit_bps {
            a.label_bps = carried(self.unlabeled.update(t, a.now_ns, a.bytes, p.k_alpha_ns));
        }
        let prob = self.drop_probability_q32(a.label_bps);
        let dropped = prob > 0 && a.draw < prob;
        self.estimate_alpha(t, p, &a, dropped, lane);
        if dropped {
            return FixedVerdict::Drop;
        }
        // Relabeled to alpha when subject to dropping; otherwise the label it came with.
        if prob > 0 && self.alpha_bps > 0 && self.alpha_bps < a.label_bps {
            FixedVerdict::Forward(self.alpha_bps)
        } else {
            FixedVerdict::Forward(given)
        }
    }

    fn estimate_alpha(
        &mut self,
        t: &ExpTables,
        p: &FixedCoreParams,
        arr: &Arrival,
        dropped: bool,
        lane: usize,
    ) {
        let (now, label, queue_bytes) = (arr.now_ns, arr.label_bps, arr.queue_bytes);
        if p.estimator == Estimator::Histogram {
            let n = self.lanes.len().max(1);
            if self.lanes.is_empty() {
                self.lanes.push(Lane::default());
            }
            let l = &mut self.lanes[lane % n];
            l.histogram.add(label, arr.bytes);
            l.max_label_bps = l.max_label_bps.max(label);
            l.arrived_bytes += arr.bytes as u64;
            if !dropped {
                l.accepted_bytes += arr.bytes as u64;
            }
            if self.alpha_bps == 0 && queue_bytes >= p.threshold_bytes {
                self.alpha_bps = self.window_max_label(); // the paper's restart
            }
            if now >= self.start_ns + p.k_c_ns {
                self.end_histogram_window(p, now, queue_bytes);
            }
            return;
        }
        let a = self.arrival.update(t, now, arr.bytes, p.k_alpha_ns);
        if !dropped {
            self.accepted.update(t, now, arr.bytes, p.k_alpha_ns);
        }
        if self.alpha_bps == 0 {
            if queue_bytes < p.threshold_bytes {
                self.max_label_bps = self.max_label_bps.max(label);
                return;
            }
            self.alpha_bps = if self.max_label_bps > 0 {
                self.max_label_bps
            } else {
                p.capacity_bps / 2
            };
            self.max_label_bps = 0;
            self.start_ns = now; // a fresh window: the last may have ended long ago
        }
        if a >= p.capacity_bps {
            if !self.congested {
                self.congested = true;
                self.start_ns = now;
                self.overflow_left = p.overflow_budget;
            } else if now > self.start_ns + p.k_c_ns {
                let (alpha_k, c_k, f_k) = (
                    self.alpha_bps / 1000,
                    p.capacity_bps / 1000,
                    self.accepted.rate_bps / 1000,
                );
                // alpha <- min(alpha C / F, C), in Kbit/s; C when F is 0.
                self.alpha_bps = (alpha_k * c_k)
                    .checked_div(f_k)
                    .map_or(p.capacity_bps, |a| (a * 1000).min(p.capacity_bps));
                self.start_ns = now;
                self.overflow_left = p.overflow_budget;
            }
        } else if self.congested {
            self.congested = false;
            self.start_ns = now;
            self.max_label_bps = 0;
        } else if now < self.start_ns + p.k_c_ns {
            self.max_label_bps = self.max_label_bps.max(label);
        } else {
            self.alpha_bps = self.max_label_bps;
            self.start_ns = now;
            self.overflow_left = p.overflow_budget;
            if queue_bytes < p.threshold_bytes {
                self.alpha_bps = 0;
            } else {
                self.max_label_bps = 0;
            }
        }
    }

    /// The largest label of the current window over all lanes.
    fn window_max_label(&self) -> u64 {
        self.lanes
            .iter()
            .map(|l| l.max_label_bps)
            .max()
            .unwrap_or(0)
    }

    /// [`crate::csfq::FairShareEstimator`]'s end of a histogram window, in integers: the
    /// lanes merged, solved, and emptied for the next window.
    fn end_histogram_window(&mut self, p: &FixedCoreParams, now: u64, queue_bytes: u32) {
        let max_label = self.window_max_label();
        let window_ns = now.saturating_sub(self.start_ns);
        let (first, rest) = self.lanes.split_first_mut().expect("one lane at least");
        let (mut arrived, mut accepted) = (first.arrived_bytes, first.accepted_bytes);
        for l in rest {
            first.histogram.absorb(&l.histogram);
            arrived += l.arrived_bytes;
            accepted += l.accepted_bytes;
            l.histogram.clear();
            (l.max_label_bps, l.arrived_bytes, l.accepted_bytes) = (0, 0, 0);
        }
        let solved = first
            .histogram
            .end_window(p.capacity_bps, window_ns, p.k_c_ns);
        (
            first.max_label_bps,
            first.arrived_bytes,
            first.accepted_bytes,
        ) = (0, 0, 0);
        if window_ns > 0 {
            self.arrival.rate_bps = window_rate(arrived, window_ns);
            self.accepted.rate_bps = window_rate(accepted, window_ns);
        }
        self.congested = solved.is_some();
        self.alpha_bps = match solved {
            Some(a) => a.min(p.capacity_bps),
            None if queue_bytes >= p.threshold_bytes => max_label,
            None => 0,
        };
        self.max_label_bps = 0;
        self.start_ns = now;
        self.overflow_left = p.overflow_budget;
    }

    /// A packet the core accepted overflowed the queue: `alpha *= 99/100`, at most
    /// `overflow_budget` times between two updates of `alpha`.
    pub fn on_overflow(&mut self) {
        if self.overflow_left > 0 {
            self.overflow_left -= 1;
            self.alpha_bps = self.alpha_bps * 99 / 100;
        }
    }
}

/// `bytes` over `window_ns` in bits/s, to 1 us, as the dataplane computes it.
pub fn window_rate(bytes: u64, window_ns: u64) -> u64 {
    bytes.saturating_mul(8_000_000) / (window_ns / 1_000).max(1)
}

/// `max(0, 1 - share/label)` in Q0.32 (`u32::MAX` stands for 1): 0 when `share` or
/// `label` is 0. CSFQ's Eq. (2) with `share = alpha`, CS-FNE's with `share = CL`.
#[inline]
pub fn drop_probability_q32(share_bps: u64, label_bps: u64) -> u32 {
    if share_bps == 0 || label_bps == 0 || label_bps <= share_bps {
        return 0;
    }
    // (label - share) 2^32 / label in 64 bits: labels of 2^32 bit/s and more are scaled
    // down first, both by the same power of two.
    let s = (64 - label_bps.leading_zeros()).saturating_sub(32);
    let (l, a) = (label_bps >> s, share_bps >> s);
    (((l - a) << 32) / l).min(u32::MAX as u64) as u32
}

/// The label carrier of the dataplane: the 16-bit IPv4 Identification float.
pub const CARRIER: LabelCodec = LabelCodec::FLOAT16;

/// A label as the dataplane carries it: encoded to 16 bits and decoded back, bits/s.
pub fn carried(rate_bps: u64) -> u64 {
    decode_label(&CARRIER, encode_label(&CARRIER, rate_bps))
}

/// The integer CSFQ edge: per-flow [`FixedRate`] and labels `r / w` through the carrier.
///
/// A new flow has no history for Eq. (3), and a rate of 0 would be a label the cores pass
/// free. So new flows are priced as one flow: an Eq. (3) estimate over the first packets
/// of all new flows (`fresh`). A flow's first packet carries that price, and its own
/// estimate starts from it. In the dataplane, a flow the full flow table evicted returns
/// as new: cycling through more flows than the table holds no longer buys a free pass, as
/// such flows are priced at their aggregate rate (they are then judged as one pool, so
/// the table should still hold the flows an edge sees). (Beyond the paper, which leaves a
/// flow's first packet unspecified.)
#[derive(Debug, Clone)]
pub struct FixedEdge {
    k_ns: u64,
    meter: Meter,
    /// Per flow: estimate and weight in thousandths.
    flows: Vec<(FixedRate, u64)>,
    /// The rate of new flows' first packets, all new flows together.
    fresh: FixedRate,
}

/// The highest rate a TSW estimate takes, bit/s (the dataplane's largest link rate).
pub const TSW_RATE_MAX: u64 = 1 << 42;
/// The shortest TSW window, ns (the span is counted in microseconds).
pub const TSW_WIN_MIN_NS: u64 = 1_000;

/// The TSW rate meter of the thesis's Fig. 3-1 in integers, on an Eq. (3) state's fields
/// (`rate_bps` is `avg_rate`, `last_ns` is `t_front`, `pending_bytes` a new flow's first
/// packet, counted with the next):
/// `bits = avg_rate win + l; avg_rate = bits / (now - t_front + win); t_front = now`.
/// The window's bits are the rate times the window in microseconds over 10^6 (to the bit
/// below) and the span is counted in microseconds, so every product fits 64 bits for rates
/// up to [`TSW_RATE_MAX`] and windows up to [`K_MAX_NS`]; a bit lost a packet shifts the
/// estimate by at most a bit per packet gap (40 bit/s for a packet every 25 ms).
#[inline]
pub fn tsw_update(s: &mut FixedRate, now_ns: u64, bytes: u32, win_ns: u64) -> u64 {
    if s.last_ns == 0 && s.rate_bps == 0 && s.pending_bytes == 0 {
        // A flow's first packet: no span yet, as Eq. (3)'s first packet.
        s.last_ns = now_ns.max(1);
        s.pending_bytes = bytes as u64;
        return 0;
    }
    let win = win_ns.clamp(TSW_WIN_MIN_NS, K_MAX_NS);
    let gap = now_ns.saturating_sub(s.last_ns);
    let held = s.rate_bps.min(TSW_RATE_MAX) * (win / 1_000) / 1_000_000;
    let bits = held + (bytes as u64 + s.pending_bytes) * 8;
    let span_us = (gap + win) / 1_000;
    s.rate_bps = (bits * 1_000_000 / span_us).min(TSW_RATE_MAX);
    if now_ns > s.last_ns {
        s.last_ns = now_ns;
    }
    s.pending_bytes = 0;
    s.rate_bps
}

/// How an edge measures a flow's rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Meter {
    /// CSFQ's Eq. (3), averaging constant `K` ([`FixedRate::update`]).
    #[default]
    Eq3,
    /// CS-FNE's Time Sliding Window, window `K` ([`tsw_update`]).
    Tsw,
}

impl Meter {
    /// Accounts `bytes` at `now_ns` in `s`; returns the estimate, bit/s.
    #[inline]
    pub fn update(
        self,
        t: &ExpTables,
        s: &mut FixedRate,
        now_ns: u64,
        bytes: u32,
        k_ns: u64,
    ) -> u64 {
        match self {
            Meter::Eq3 => s.update(t, now_ns, bytes, k_ns),
            Meter::Tsw => tsw_update(s, now_ns, bytes, k_ns),
        }
    }
}

impl FixedRate {
    /// A new flow's estimate: `price` from its first packet of `bytes` at `now_ns` (the
    /// packet still pending, as for [`FixedRate::update`]'s first packet).
    pub fn starting_at(price_bps: u64, now_ns: u64, bytes: u32) -> Self {
        FixedRate {
            rate_bps: price_bps,
            last_ns: now_ns.max(1),
            pending_bytes: bytes as u64,
        }
    }
}

impl FixedEdge {
    /// Per-flow records held: one per flow seen, up to the highest flow number.
    pub fn flow_slots(&self) -> usize {
        self.flows.len()
    }

    /// An edge with averaging constant `k` (at most 1 s).
    pub fn new(k: Nanos) -> Self {
        Self::with_meter(k, Meter::Eq3)
    }

    /// An edge that measures with `meter`, averaging constant (or window) `k`.
    pub fn with_meter(k: Nanos, meter: Meter) -> Self {
        FixedEdge {
            k_ns: k.0.clamp(1, K_MAX_NS),
            meter,
            flows: Vec::new(),
            fresh: FixedRate::default(),
        }
    }

    fn slot(flows: &mut Vec<(FixedRate, u64)>, f: FlowId) -> &mut (FixedRate, u64) {
        let i = f.index();
        if i >= flows.len() {
            flows.resize(i + 1, (FixedRate::default(), 1000));
        }
        &mut flows[i]
    }

    /// Sets a flow's weight (kept in thousandths, at least 1).
    pub fn set_weight(&mut self, f: FlowId, weight: f64) {
        Self::slot(&mut self.flows, f).1 = ((weight * 1000.0).round() as u64).max(1);
    }

    /// Estimates and writes the label (as carried: encoded and decoded).
    #[inline]
    pub fn label<P: Packet>(&mut self, p: &mut P, now: Nanos) {
        let (r, w) = self.estimate_weighted(p.flow(), now.0, p.size_bytes());
        p.set_label(carried(r * 1000 / w) as f64);
    }

    /// A flow's rate after a packet of `bytes` at `now_ns` (a new flow: the new flows'
    /// price), bits/s.
    pub fn estimate(&mut self, f: FlowId, now_ns: u64, bytes: u32) -> u64 {
        self.estimate_weighted(f, now_ns, bytes).0
    }

    /// The rate, and the flow's weight in thousandths.
    pub fn estimate_weighted(&mut self, f: FlowId, now_ns: u64, bytes: u32) -> (u64, u64) {
        let (k, t, meter) = (self.k_ns, tables(), self.meter);
        let (rate, w) = Self::slot(&mut self.flows, f);
        let r = if *rate == FixedRate::default() {
            let price = meter.update(t, &mut self.fresh, now_ns, bytes, k);
            *rate = FixedRate::starting_at(price, now_ns, bytes);
            price
        } else {
            meter.update(t, rate, now_ns, bytes, k)
        };
        (r, *w)
    }
}

/// The integer CSFQ core port: [`FixedCore`] in front of a FIFO, drawing 32-bit randoms.
#[derive(Debug, Clone)]
pub struct FixedCsfqCore<K> {
    params: FixedCoreParams,
    core: FixedCore,
    fifo: ByteFifo<K>,
}

impl<K: Held> FixedCsfqCore<K> {
    /// A port with the given parameters and buffer.
    pub fn new(params: FixedCoreParams, buffer_bytes: u32) -> Self {
        FixedCsfqCore {
            params,
            core: FixedCore::new(&params),
            fifo: ByteFifo::new(buffer_bytes),
        }
    }

    /// The fair share estimate, bits/s.
    pub fn alpha_bps(&self) -> u64 {
        self.core.alpha_bps
    }
}

impl<P: Packet, K: Keep<P>> InOrder<P> for FixedCsfqCore<K> {
    type Kept = K;

    #[inline]
    fn admit<R: Rng + ?Sized>(
        &mut self,
        mut p: P,
        now: Nanos,
        rng: &mut R,
    ) -> Result<P, Dropped<P>> {
        let draw = rng.random::<u32>();
        let label = p.label() as u64;
        let arrival = Arrival {
            now_ns: now.0,
            bytes: p.size_bytes(),
            label_bps: label,
            queue_bytes: self.fifo.bytes(),
            draw,
        };
        let v = self.core.on_arrival(tables(), &self.params, &arrival);
        match v {
            FixedVerdict::Drop => Err(Dropped::new(p, DropReason::CsfqProbabilistic)),
            FixedVerdict::Forward(l) => {
                if l != label {
                    p.set_label(carried(l) as f64);
                }
                self.fifo.admit(p, now).map_err(|p| {
                    self.core.on_overflow();
                    Dropped::new(p, DropReason::BufferOverflow)
                })
            }
        }
    }
    fn depart(&mut self, _now: Nanos) -> Option<K> {
        self.fifo.pop()
    }
    fn len_bytes(&self) -> u32 {
        self.fifo.bytes()
    }
    fn len_packets(&self) -> usize {
        self.fifo.len()
    }
    fn reserved_slots(&self) -> usize {
        self.fifo.reserved_slots()
    }
}

/// Test vectors for the dataplane: the model's outputs on fixed inputs, one CSV line each.
/// The C programs' tests replay them; `testdata/csfq-fixed-vectors.csv` holds this text.
pub fn test_vectors() -> String {
    use std::fmt::Write as _;
    let t = tables();
    let mut out = String::from("# csfq fixed-point model vectors; regenerate: CSFQ_WRITE_VECTORS=1 cargo test -p csfq-algo vectors\n");
    // Label codecs.
    for rate in [
        0u64,
        999,
        1_000,
        1_500,
        64_000,
        1_000_000,
        9_999_999,
        10_000_000,
        123_456_789,
        100_000_000_000,
        u64::MAX / 4,
    ] {
        let (c16, c20) = (
            encode_label(&LabelCodec::FLOAT16, rate),
            encode_label(&LabelCodec::FLOAT20, rate),
        );
        writeln!(
            out,
            "label,{rate},{c16},{},{c20},{}",
            decode_label(&LabelCodec::FLOAT16, c16),
            decode_label(&LabelCodec::FLOAT20, c20)
        )
        .unwrap();
    }
    // Rate estimation: a deterministic stream with bursts, gaps and same-instant arrivals.
    let mut r = FixedRate::default();
    let k = 100_000_000;
    let mut now = 1_000u64;
    for i in 0..64u64 {
        let bytes = 64 + ((i * 977) % 1437) as u32;
        now += [0, 800, 12_000, 800_000, 3_000_000, 250_000_000][(i % 6) as usize] * ((i % 5) + 1);
        let rate = r.update(t, now, bytes, k);
        writeln!(out, "rate,{now},{bytes},{k},{rate}").unwrap();
    }
    // The edge on several flows: staggered starts (each new flow priced from the new
    // flows' aggregate), different sizes and gaps. Flow ids are 0..8.
    let mut e = FixedEdge::new(Nanos(k));
    let mut now = 1_000u64;
    for i in 0..96u64 {
        let flow = if i < 24 { i / 3 } else { (i * 5) % 8 };
        let bytes = 100 + ((i * 613) % 1400) as u32;
        now += [0, 5_000, 70_000, 1_200_000][(i % 4) as usize];
        let rate = e.estimate(crate::packet::FlowId(flow as u32), now, bytes);
        writeln!(out, "edge,{now},{flow},{bytes},{k},{rate}").unwrap();
    }
    // The policer for traffic that cannot carry a label: 1 Mbit/s, 4000 bytes deep,
    // packets of many sizes in bursts and gaps (policer.rs).
    let mut b = crate::policer::TokenBucket::default();
    let (rate, burst) = (1_000_000u64, 4_000u32);
    let mut now = 1_000u64;
    for i in 0..64u64 {
        let bytes = 60 + ((i * 739) % 1455) as u32;
        now += [0, 100_000, 1_000_000, 7_000_000][(i % 4) as usize] * ((i % 3) + 1);
        let pass = b.admit(now, bytes, rate, burst) as u8;
        writeln!(out, "police,{now},{bytes},{rate},{burst},{pass}").unwrap();
    }
    // The core with each estimator: 10 Mbps, 64 KB, a flow at 3x alpha, one below, and
    // every seventh packet unlabeled (no edge labeled it: judged as one unlabeled flow).
    for (kind, estimator, rates) in [
        ("core", Estimator::Paper, [15_000_000u64, 2_000_000, 0]),
        ("hcore", Estimator::Histogram, [15_000_000, 2_500_000, 0]),
    ] {
        let p = FixedCoreParams {
            capacity_bps: 10_000_000,
            k_alpha_ns: k,
            k_c_ns: k,
            threshold_bytes: 32_000,
            overflow_budget: 29,
            estimator,
        };
        let mut c = FixedCore::new(&p);
        let mut q = 0u32;
        let mut now = 1_000u64;
        for i in 0..1500u64 {
            now += 400_000;
            let label = carried(if i % 7 == 6 {
                rates[2]
            } else {
                rates[(i % 2) as usize]
            });
            let draw = (i.wrapping_mul(2_654_435_761) & 0xffff_ffff) as u32;
            let v = c.on_arrival(
                t,
                &p,
                &Arrival {
                    now_ns: now,
                    bytes: 1000,
                    label_bps: label,
                    queue_bytes: q,
                    draw,
                },
            );
            let out_label = match v {
                FixedVerdict::Drop => u64::MAX,
                FixedVerdict::Forward(l) => {
                    q = (q + 1000).min(64_000);
                    l
                }
            };
            q = q.saturating_sub(500); // drained at 10 Mbps: 500 bytes per 400 us
            let out_label = if out_label == u64::MAX {
                "drop".to_string()
            } else {
                out_label.to_string()
            };
            writeln!(
                out,
                "{kind},{now},1000,{label},{q},{draw},{out_label},{}",
                c.alpha_bps
            )
            .unwrap();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate_estimator::RateEstimator;
    use crate::time::Nanos;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    #[test]
    fn tables_match_the_functions() {
        let t = ExpTables::new();
        for x in [0.0f64, 0.001, 0.01, 0.1, 0.5, 1.0, 3.7, 9.99, 15.9] {
            let (e, g) = t.lookup((x * (1u64 << 28) as f64) as u64);
            let ge = if x == 0.0 {
                1.0
            } else {
                (1.0 - (-x).exp()) / x
            };
            assert!((e as f64 / 65536.0 - (-x).exp()).abs() < 3e-5, "e({x})");
            assert!((g as f64 / 65536.0 - ge).abs() < 3e-5, "g({x})");
        }
    }

    /// The integer estimator tracks the floating-point Eq. (3) within 0.2% on jittered
    /// streams of many rates and packet sizes.
    #[test]
    fn fixed_rate_tracks_float_rate() {
        let t = ExpTables::new();
        let mut rng = Pcg64Mcg::seed_from_u64(8);
        for rate in [64e3, 1e6, 10e6, 1e9, 40e9] {
            let k = 100_000_000u64;
            let (mut fx, mut fl) = (FixedRate::default(), RateEstimator::new(Nanos(k)));
            let mut now = 1_000_000u64;
            let mut worst: f64 = 0.0;
            for i in 0..20_000 {
                let size = rng.random_range(64..1500u32);
                now += ((size as f64 * 8e9 / rate) * rng.random_range(0.5..1.5)) as u64 + 1;
                let a = fx.update(&t, now, size, k) as f64;
                let b = fl.update(Nanos(now), size);
                if i > 2000 {
                    worst = worst.max((a - b).abs() / b);
                }
            }
            assert!(worst < 0.002, "rate {rate}: {worst}");
        }
    }

    /// The committed vectors are what the model computes (regenerate with
    /// `CSFQ_WRITE_VECTORS=1 cargo test -p csfq-algo vectors`).
    #[test]
    fn vectors_match_the_committed_file() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/csfq-fixed-vectors.csv"
        );
        let now = test_vectors();
        if std::env::var_os("CSFQ_WRITE_VECTORS").is_some() {
            std::fs::write(path, &now).unwrap();
        }
        let committed = std::fs::read_to_string(path).expect("testdata/csfq-fixed-vectors.csv");
        assert_eq!(
            committed, now,
            "the model changed: regenerate the vectors and update the dataplane"
        );
    }

    /// A window's average: 1250 bytes in 1 ms is 10 Mbit/s; the window counts to 1 us.
    #[test]
    fn window_rate_in_bits_per_second() {
        assert_eq!(window_rate(1250, 1_000_000), 10_000_000);
        assert_eq!(window_rate(1250, 1_000_999), 10_000_000);
        assert_eq!(window_rate(125, 999), 1_000_000_000); // under 1 us: as 1 us
        assert_eq!(window_rate(u64::MAX, 1), u64::MAX);
    }

    /// The core's test for unlabeled traffic, `label <= unit`, is the carrier's code 0.
    #[test]
    fn code_zero_is_up_to_one_unit() {
        for rate in (0..5_000).chain([u64::MAX / 4, 123_456_789]) {
            assert_eq!(
                encode_label(&CARRIER, rate) == 0,
                rate <= CARRIER.unit_bps,
                "{rate}"
            );
        }
    }

    #[test]
    fn drop_probability_in_q32() {
        let c = FixedCore {
            alpha_bps: 1_000_000,
            ..Default::default()
        };
        assert_eq!(c.drop_probability_q32(1_000_000), 0);
        assert_eq!(c.drop_probability_q32(4_000_000), 3 << 30); // 0.75
        assert_eq!(FixedCore::default().drop_probability_q32(5), 0);
    }

    /// With the histogram estimator the floating-point core and the integer one compute the
    /// same alpha from the same (integer) labels: both solve the same integer histogram.
    #[test]
    fn histogram_alpha_is_the_same_in_both_models() {
        use crate::csfq::{CsfqParams, FairShareEstimator};
        let fp = CsfqParams {
            k_c: Nanos::from_millis(1),
            ..CsfqParams::scaled(10e6, 64_000)
        };
        let p = FixedCoreParams {
            capacity_bps: 10_000_000,
            k_alpha_ns: fp.k_alpha.0,
            k_c_ns: fp.k_c.0,
            threshold_bytes: fp.threshold_bytes,
            overflow_budget: fp.overflow_budget,
            estimator: Estimator::Histogram,
        };
        let mut float = FairShareEstimator::new(fp);
        let mut fixed = FixedCore::new(&p);
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let mut now = 1_000u64;
        let mut windows = 0;
        for _ in 0..20_000 {
            now += rng.random_range(1..20_000); // 800 Mbit/s of arrivals: congested
            let label = carried(rng.random_range(0..30_000_000));
            let q = rng.random_range(0..64_000);
            let before = fixed.alpha_bps;
            let arrival = Arrival {
                now_ns: now,
                bytes: 1000,
                label_bps: label,
                queue_bytes: q,
                draw: 0,
            };
            fixed.on_arrival(tables(), &p, &arrival);
            float.on_arrival(label as f64, 1000, Nanos(now), false, q);
            assert_eq!(float.alpha(), fixed.alpha_bps as f64, "at {now}");
            windows += (fixed.alpha_bps != before) as u32;
        }
        assert!(windows > 100, "alpha changed {windows} times");
    }

    proptest! {
        /// The lanes' merge is exact: the same packets spread over 1 to 8 lanes in any way
        /// give the same verdict and the same `alpha` after every packet as one lane (the
        /// dataplane's per-CPU core against its single state), through congested and
        /// uncongested windows, restarts and idle gaps.
        #[test]
        fn lanes_change_nothing(
            lanes in 1usize..8,
            seed in any::<u64>(),
            packets in prop::collection::vec((1u64..600_000, 0u64..40_000_000, 0u32..64_000, any::<u32>(), 0usize..8), 1..600),
        ) {
            let p = FixedCoreParams {
                capacity_bps: 10_000_000,
                k_alpha_ns: 100_000_000,
                k_c_ns: 20_000_000,
                threshold_bytes: 16_000,
                overflow_budget: 29,
                estimator: Estimator::Histogram,
            };
            let (mut one, mut many) = (FixedCore::new(&p), FixedCore::with_lanes(&p, lanes));
            let mut now = 1_000 + seed % 1_000_000;
            for (i, &(gap, rate, q, draw, lane)) in packets.iter().enumerate() {
                now += if i % 97 == 96 { 90_000_000 } else { gap };
                let a = Arrival { now_ns: now, bytes: 200 + (draw % 1300), label_bps: carried(rate), queue_bytes: q, draw };
                let v = one.on_arrival(tables(), &p, &a);
                prop_assert_eq!(v, many.on_arrival_on(tables(), &p, &a, lane), "packet {}", i);
                prop_assert_eq!(one.alpha_bps, many.alpha_bps, "packet {}", i);
                prop_assert_eq!(one.congested, many.congested);
                prop_assert_eq!(one.arrival.rate_bps, many.arrival.rate_bps);
                prop_assert_eq!(one.accepted.rate_bps, many.accepted.rate_bps);
                if i % 50 == 49 && v != FixedVerdict::Drop {
                    one.on_overflow();
                    many.on_overflow();
                }
            }
        }

        /// The Q0.32 drop probability is `1 - alpha/label` within 2^-30, also for labels
        /// beyond 2^32 bit/s, where it is computed on scaled-down operands.
        #[test]
        fn drop_probability_is_one_minus_ratio(alpha in 1u64..4_000_000_000_000, label in 1u64..4_000_000_000_000) {
            let c = FixedCore { alpha_bps: alpha, ..Default::default() };
            let want = (1.0 - alpha as f64 / label as f64).max(0.0);
            let got = c.drop_probability_q32(label) as f64 / 4_294_967_296.0;
            prop_assert!((got - want).abs() < 1.0 / (1u64 << 30) as f64, "{got} vs {want}");
        }

        /// The integer label codecs agree with the floating-point ones on every rate.
        #[test]
        fn integer_codec_equals_float_codec(rate in 0u64..4_000_000_000_000u64, wide in any::<bool>()) {
            let codec = if wide { LabelCodec::FLOAT20 } else { LabelCodec::FLOAT16 };
            let want = codec.encode(rate as f64);
            prop_assert_eq!(encode_label(&codec, rate), want);
            let back = decode_label(&codec, want) as f64;
            prop_assert!((back - codec.decode(want)).abs() <= 1.0);
        }
    }
}
