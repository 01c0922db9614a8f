//! CSFQ (Stoica, Shenker and Zhang 1998; `csfq_algo::csfq`): the edge labels the packets
//! of flows entering the island here (Eq. 3), the core runs on every port; its `[csfq]`
//! table, which the dataplane's models (`csfq-fixed`, `tuf-filter`) also read.

use csfq_algo::csfq::{CsfqCore, CsfqEdge, CsfqParams};
use csfq_algo::queue::Queued;
use csfq_algo::{FlowId, Nanos};
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{ms, DisciplineTables, Edge, EdgeCore, Estimate, Link, ParamError, TableError};
use crate::limits::{within, MIN_TIME_MS};
use crate::packet::SimPacket;

/// CSFQ at a port: its edge and its core.
pub type Port = Box<EdgeCore<CsfqEdge, CsfqCore<Queued>>>;

impl Edge for CsfqEdge {
    #[inline]
    fn on_entry<R: Rng + ?Sized>(&mut self, p: &mut SimPacket, now: Nanos, _: &mut R) {
        self.label(p, now)
    }

    fn set_flow_weight<R: Rng + ?Sized>(&mut self, flow: FlowId, weight: f64, _: &mut R) {
        self.set_weight(flow, weight)
    }

    fn flow_records(&self) -> usize {
        self.flow_slots()
    }
}

super::port_queue!(in_order CsfqCore<Queued>);

/// `alpha`.
impl Estimate for CsfqCore<Queued> {
    fn fair_share(&self) -> Option<f64> {
        Some(self.estimator().alpha())
    }
}

/// CSFQ with the `[csfq]` table for the link.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(Box::new(EdgeCore {
        edge: CsfqEdge::new(t.csfq.edge_k()),
        core: CsfqCore::new(t.csfq.core_params(link.rate_bps, link.buffer_bytes)),
    }))
}

/// How CSFQ cores estimate the fair share `alpha` (`[csfq] estimator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EstimatorKind {
    /// The paper's: `alpha <- alpha C / F` once per congested window (Section 2.2).
    Paper,
    /// Solved from a histogram of one window's labels (`csfq_algo::label_histogram`).
    #[default]
    Histogram,
}

impl From<EstimatorKind> for csfq_algo::csfq::Estimator {
    fn from(k: EstimatorKind) -> Self {
        match k {
            EstimatorKind::Paper => Self::Paper,
            EstimatorKind::Histogram => Self::Histogram,
        }
    }
}

/// CSFQ constants. The paper (Section 3) uses 100 ms for all three; by default `K_alpha`
/// and `K_c` follow its rule instead, twice the link's buffer drain time within 1 ms and
/// 1 s (`csfq_algo::csfq::scaled_window`), so they scale with the link.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct CsfqConfig {
    /// `K`: the edge's flow-rate averaging constant, ms (default 100).
    pub k_ms: f64,
    /// `K_alpha`: the core's aggregate-rate averaging constant, ms (default: per link,
    /// twice its buffer's drain time, within 1 ms and 1 s).
    pub k_alpha_ms: Option<f64>,
    /// `K_c`: the window of the fair-share estimate, ms (default as `k_alpha_ms`).
    pub k_c_ms: Option<f64>,
    /// The fair-share estimator (default `histogram`; `paper` for the paper's).
    pub estimator: EstimatorKind,
    /// Relabel packets to `min(label, alpha)` at cores (Section 2.5).
    pub relabel: bool,
}

impl Default for CsfqConfig {
    fn default() -> Self {
        CsfqConfig {
            k_ms: 100.0,
            k_alpha_ms: None,
            k_c_ms: None,
            estimator: EstimatorKind::Histogram,
            relabel: true,
        }
    }
}

impl CsfqConfig {
    /// The constants and estimator of the paper's simulations (Section 3): 100 ms unless
    /// the scenario states others, and the paper's estimator.
    pub fn paper(self) -> Self {
        CsfqConfig {
            k_alpha_ms: self.k_alpha_ms.or(Some(100.0)),
            k_c_ms: self.k_c_ms.or(Some(100.0)),
            estimator: EstimatorKind::Paper,
            ..self
        }
    }

    /// `K`, the edge's averaging constant.
    pub fn edge_k(&self) -> Nanos {
        ms(self.k_ms)
    }

    /// The core's parameters for a link of `rate_bps` with `buffer_bytes`: `K_alpha` and
    /// `K_c` as given, else scaled to the link (`csfq_algo::csfq::scaled_window`).
    pub fn core_params(&self, rate_bps: f64, buffer_bytes: u32) -> CsfqParams {
        let scaled = csfq_algo::csfq::scaled_window(rate_bps, buffer_bytes);
        let window = |v: Option<f64>| v.map_or(scaled, ms);
        CsfqParams {
            k_alpha: window(self.k_alpha_ms),
            k_c: window(self.k_c_ms),
            relabel: self.relabel,
            estimator: self.estimator.into(),
            ..CsfqParams::new(rate_bps, buffer_bytes)
        }
    }

    /// Every constant in the range CSFQ handles.
    pub fn check(&self) -> Result<(), TableError> {
        for (v, key) in [
            (Some(self.k_ms), "k_ms"),
            (self.k_alpha_ms, "k_alpha_ms"),
            (self.k_c_ms, "k_c_ms"),
        ] {
            if v.is_some_and(|v| !within(v, MIN_TIME_MS, 1000.0)) {
                return Err(TableError::at(
                    "csfq",
                    key,
                    "must be a number of ms in [0.001, 1000]",
                ));
            }
        }
        Ok(())
    }
}
