//! CSFQ in the dataplane's integer arithmetic (`csfq_algo::fixed`), labels carried as
//! 16-bit floats: the Linux programs' numbers in the simulator. Reads `[csfq]`.

use csfq_algo::fixed::{FixedCoreParams, FixedCsfqCore, FixedEdge};
use csfq_algo::queue::Queued;
use csfq_algo::{FlowId, Nanos};
use rand::Rng;

use super::{DisciplineTables, Edge, EdgeCore, Estimate, Link, ParamError};
use crate::packet::SimPacket;

/// The integer CSFQ at a port: its edge and its core.
pub type Port = Box<EdgeCore<FixedEdge, FixedCsfqCore<Queued>>>;

/// The integer edge, CSFQ's Eq. (3) meter or CS-FNE's TSW (`csfne-fixed`).
impl Edge for FixedEdge {
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

super::port_queue!(in_order FixedCsfqCore<Queued>);

/// `alpha`, bit/s.
impl Estimate for FixedCsfqCore<Queued> {
    fn fair_share(&self) -> Option<f64> {
        Some(self.alpha_bps() as f64)
    }
}

/// The integer CSFQ with the `[csfq]` table's constants for the link.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    let core = t.csfq.core_params(link.rate_bps, link.buffer_bytes);
    Ok(Box::new(EdgeCore {
        edge: FixedEdge::new(t.csfq.edge_k()),
        core: FixedCsfqCore::new(
            FixedCoreParams {
                capacity_bps: link.rate_bps as u64,
                k_alpha_ns: core.k_alpha.0,
                k_c_ns: core.k_c.0,
                threshold_bytes: core.threshold_bytes,
                overflow_budget: core.overflow_budget,
                estimator: core.estimator,
            },
            link.buffer_bytes,
        ),
    }))
}
