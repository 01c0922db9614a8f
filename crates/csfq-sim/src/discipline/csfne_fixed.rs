//! CS-FNE as the dataplane computes it (`csfq_algo::csfne_fixed`): integer TSW labels
//! carried as 16-bit floats, a core that compares arrivals with a ring of the packets its
//! virtual queue holds. Reads `[csfne]`.

use csfq_algo::csfne_fixed::{FixedCsfneParams, FixedCsfnePort, RING_MAX};
use csfq_algo::fixed::{FixedEdge, Meter};
use csfq_algo::{FlowId, Nanos};
use rand::Rng;

use super::{DisciplineTables, Link, ParamError, PortDiscipline};
use crate::packet::SimPacket;

/// The integer CS-FNE at a port: its edge and its core.
pub type Port = Box<CsfneFixed>;

/// The integer edge with the TSW meter and the core with its ring.
#[derive(Debug, Clone)]
pub struct CsfneFixed {
    /// Integer edge with the TSW meter.
    pub edge: FixedEdge,
    /// Integer core with its ring.
    pub core: FixedCsfnePort<SimPacket>,
}

impl PortDiscipline for CsfneFixed {
    type Queue = FixedCsfnePort<SimPacket>;

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
        Some(self.core.threshold_rate())
    }
}

/// The integer CS-FNE with the `[csfne]` table for the link.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(Box::new(CsfneFixed {
        edge: FixedEdge::with_meter(t.csfne.win(), Meter::Tsw),
        core: FixedCsfnePort::new(FixedCsfneParams {
            capacity_bps: link.rate_bps as u64,
            k_ns: t.csfne.k().0,
            target_bytes: t.csfne.target_bytes(link.buffer_bytes),
            limit_bytes: link.buffer_bytes,
            ring: RING_MAX,
        }),
    }))
}
