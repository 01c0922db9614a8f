//! CS-FNE as the dataplane computes it (`csfq_algo::csfne_fixed`): integer TSW labels
//! carried as 16-bit floats, a core that compares arrivals with a ring of the packets its
//! virtual queue holds. Reads `[csfne]`.

use csfq_algo::csfne_fixed::{FixedCsfneParams, FixedCsfnePort, RING_MAX};
use csfq_algo::fixed::{FixedEdge, Meter};
use csfq_algo::queue::Queued;

use super::{DisciplineTables, EdgeCore, Estimate, Link, ParamError};

/// The integer CS-FNE at a port: its edge (the integer edge with the TSW meter,
/// `csfq_fixed`) and its core with its ring.
pub type Port = Box<EdgeCore<FixedEdge, FixedCsfnePort<Queued>>>;

super::port_queue!(in_order FixedCsfnePort<Queued>);

/// `CL`, the threshold rate.
impl Estimate for FixedCsfnePort<Queued> {
    fn fair_share(&self) -> Option<f64> {
        Some(self.threshold_rate())
    }
}

/// The integer CS-FNE with the `[csfne]` table for the link.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(Box::new(EdgeCore {
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
