//! MAY (the MAY paper; `csfq_algo::may`): one FIFO at one router, no edge, each tracked
//! flow dropped in proportion to its past drops; its `[may]` table (Table I, defaults from
//! Section IV).

use csfq_algo::may::{May, MayParams};
use csfq_algo::queue::Queued;
use serde::{Deserialize, Serialize};

use super::{ms, DisciplineTables, Link, ParamError, PortDiscipline, TableError};
use crate::limits::{within, MAX_DURATION_S, MIN_TIME_MS};

/// MAY at a port.
pub type Port = Box<May<Queued>>;

super::port_queue!(in_order May<Queued>);

impl PortDiscipline for May<Queued> {
    type Queue = Self;

    #[inline(always)]
    fn queue(&self) -> &Self {
        self
    }

    #[inline(always)]
    fn queue_mut(&mut self) -> &mut Self {
        self
    }

    /// `1/v` (0 while `v` is 0).
    fn alpha(&self) -> Option<f64> {
        Some(self.fair_share_bps().unwrap_or(0.0))
    }
}

/// MAY with the `[may]` table for the link, counting in TCP's segment.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    let params = t
        .may
        .params(link.rate_bps, link.buffer_bytes, t.segment_bytes);
    Ok(Box::new(May::new(params)?))
}

/// MAY settings (the MAY paper, Table I; defaults from its Section IV).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MayConfig {
    /// `Delta`: how often `v`, `delta` and expiry are updated, ms.
    pub update_interval_ms: f64,
    /// `u0`: the utilization the controller on `v` aims for, in (0, 1].
    pub target_utilization: f64,
    /// `kappa`: the controller's gain.
    pub gain: f64,
    /// `q_w`: the weight of the EWMA on each flow's drops, in (0, 1].
    pub q_w: f64,
    /// `T0`: an entry with no drop for this long leaves the table, s.
    pub timeout_s: f64,
    /// `S0`: packets of an untracked flow are sampled with probability `1/S0`.
    pub s0: f64,
    /// Most entries the table holds; a full table refuses new flows (they stay
    /// untracked). 131 072 by default: the paper's 8 Mbit of SRAM at 10 bytes per entry.
    pub table_capacity: u32,
    /// Count a tracked flow's buffer overflows in its `ND` as well as MAY's own drops (the
    /// prose's "the number of dropped packets from the flow"); the pseudocode's reading,
    /// false, is the default.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub overflow_in_nd: bool,
    /// What the utilization counts: `passed` (the default), the bytes MAY passes on to the
    /// queue, Eq. (3)'s rate after MAY's own drops; `arrivals`, every arriving byte.
    #[serde(skip_serializing_if = "MayUtilizationKind::is_default")]
    pub utilization: MayUtilizationKind,
    /// `v`'s ceiling: `heaviest` (the default), `v` kept at or below the `v` that drops
    /// every packet of the flow with the largest `delta` the interval's arrivals found;
    /// `none`, the paper's controller alone (`csfq_algo::may`, "v's ceiling"). The
    /// reproductions run `none` ([`MayConfig::paper`]).
    #[serde(skip_serializing_if = "MayCeilingKind::is_default")]
    pub ceiling: MayCeilingKind,
}

impl MayConfig {
    /// The paper's MAY: its controller without `v`'s ceiling.
    pub fn paper(self) -> Self {
        MayConfig {
            ceiling: MayCeilingKind::None,
            ..self
        }
    }
}

/// Whether MAY's `v` has a ceiling (`[may] ceiling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MayCeilingKind {
    /// At most the `v` that drops every packet of the interval's heaviest flow.
    #[default]
    Heaviest,
    /// The paper's controller.
    None,
}

impl MayCeilingKind {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

impl From<MayCeilingKind> for csfq_algo::may::MayCeiling {
    fn from(k: MayCeilingKind) -> Self {
        match k {
            MayCeilingKind::Heaviest => Self::Heaviest,
            MayCeilingKind::None => Self::None,
        }
    }
}

/// What MAY's utilization counts (`[may] utilization`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MayUtilizationKind {
    /// The bytes MAY passes on to the queue, overflowed or not (Eq. 3).
    #[default]
    Passed,
    /// Every arriving byte, MAY's own drops included.
    Arrivals,
}

impl MayUtilizationKind {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

impl From<MayUtilizationKind> for csfq_algo::may::MayUtilization {
    fn from(k: MayUtilizationKind) -> Self {
        match k {
            MayUtilizationKind::Passed => Self::Passed,
            MayUtilizationKind::Arrivals => Self::Arrivals,
        }
    }
}

impl Default for MayConfig {
    fn default() -> Self {
        MayConfig {
            update_interval_ms: 1000.0,
            target_utilization: 0.98,
            gain: 0.1,
            q_w: 0.05,
            timeout_s: 64.0,
            s0: 1000.0,
            table_capacity: 1 << 17,
            overflow_in_nd: false,
            utilization: MayUtilizationKind::Passed,
            ceiling: MayCeilingKind::Heaviest,
        }
    }
}

impl MayConfig {
    /// MAY's parameters for a link of `rate_bps` with `buffer_bytes`, its packets of
    /// `packet_bytes` (TCP's segment: the unit MAY's sampling counts in).
    pub fn params(&self, rate_bps: f64, buffer_bytes: u32, packet_bytes: u32) -> MayParams {
        MayParams {
            update_interval: ms(self.update_interval_ms),
            target_utilization: self.target_utilization,
            gain: self.gain,
            q_w: self.q_w,
            timeout: ms(self.timeout_s * 1e3),
            s0: self.s0,
            table_capacity: self.table_capacity as usize,
            packet_bytes,
            overflow_in_nd: self.overflow_in_nd,
            utilization: self.utilization.into(),
            ceiling: self.ceiling.into(),
            ..MayParams::new(rate_bps, buffer_bytes)
        }
    }

    /// Every value in the range MAY handles.
    pub fn check(&self) -> Result<(), TableError> {
        let checks = [
            (
                within(self.update_interval_ms, MIN_TIME_MS, MAX_DURATION_S * 1e3),
                "update_interval_ms",
                "must be 0.001 ms..=1000000 s",
            ),
            (
                self.target_utilization > 0.0 && self.target_utilization <= 1.0,
                "target_utilization",
                "must be in (0, 1]",
            ),
            (
                self.gain.is_finite() && self.gain > 0.0,
                "gain",
                "must be positive",
            ),
            (
                self.q_w > 0.0 && self.q_w <= 1.0,
                "q_w",
                "must be in (0, 1]",
            ),
            (
                within(self.timeout_s, MIN_TIME_MS / 1e3, MAX_DURATION_S),
                "timeout_s",
                "must be a positive number of seconds",
            ),
            (
                self.s0.is_finite() && self.s0 >= 1.0,
                "s0",
                "must be at least 1 (packets)",
            ),
            (
                self.table_capacity >= 1,
                "table_capacity",
                "must be at least 1 entry",
            ),
        ];
        match checks.into_iter().find(|(ok, ..)| !ok) {
            Some((_, key, what)) => Err(TableError::at("may", key, what)),
            None => Ok(()),
        }
    }
}
