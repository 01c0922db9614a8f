//! CSFQ in the dataplane's integer arithmetic (`csfq_algo::fixed`), labels carried as
//! 16-bit floats: the Linux programs' numbers in the simulator. Reads `[csfq]`.

use csfq_algo::fixed::{FixedCoreParams, FixedCsfqCore, FixedEdge};
use csfq_algo::{FlowId, Nanos};
use rand::Rng;

use super::{DisciplineTables, Link, ParamError, PortDiscipline};
use crate::packet::SimPacket;

/// The integer CSFQ at a port: its edge and its core.
pub type Port = Box<CsfqFixed>;

/// The integer edge and core.
#[derive(Debug, Clone)]
pub struct CsfqFixed {
    /// Integer edge.
    pub edge: FixedEdge,
    /// Integer core.
    pub core: FixedCsfqCore<SimPacket>,
}

impl PortDiscipline for CsfqFixed {
    type Queue = FixedCsfqCore<SimPacket>;

    #[inline(always)]
    fn queue(&self) -> &Self::Queue {
        &self.core
    }

    #[inline(always)]
    fn queue_mut(&mut self) -> &mut Self::Queue {
        &mut self.core
    }

    #[inline]
    fn label_at_edge<R: Rng + ?Sized>(&mut self, p: &mut SimPacket, now: Nanos, _: &mut R) {
        self.edge.label(p, now)
    }

    fn set_edge_weight<R: Rng + ?Sized>(&mut self, flow: FlowId, weight: f64, _: &mut R) {
        self.edge.set_weight(flow, weight)
    }

    fn edge_flow_slots(&self) -> usize {
        self.edge.flow_slots()
    }

    fn alpha(&self) -> Option<f64> {
        Some(self.core.alpha_bps() as f64)
    }
}

/// The integer CSFQ with the `[csfq]` table's constants for the link.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    let core = t.csfq.core_params(link.rate_bps, link.buffer_bytes);
    Ok(Box::new(CsfqFixed {
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
