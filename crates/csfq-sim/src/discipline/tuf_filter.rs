//! TUF as the dataplane runs it (`csfq_algo::tuf_fixed`): integer tags at the edges,
//! every flow's (TCPs tagged as unresponsive, as an edge router must: only the source
//! knows a TCP's round trip), a filter that drops tags above a threshold that fills the
//! link in front of a FIFO, not a queue that pushes the highest tag out. Reads `[tuf]`
//! (the tagger's `K`) and `[csfq]` (the filter's window, `K_c`).

use csfq_algo::queue::Queued;
use csfq_algo::tuf_fixed::{FixedTufParams, FixedTufPort, FixedTufTagger};
use csfq_algo::{FlowId, Nanos};
use rand::Rng;

use super::{DisciplineTables, Edge, EdgeCore, Estimate, Link, ParamError};
use crate::packet::{SimPacket, NO_TAG};

/// The integer TUF at a port: its edge's tagger of every flow and the filter in front of
/// a FIFO.
pub type Port = Box<EdgeCore<FixedTufTagger, FixedTufPort<Queued>>>;

/// Tags a packet unless it already carries a tag.
impl Edge for FixedTufTagger {
    #[inline]
    fn on_entry<R: Rng + ?Sized>(&mut self, p: &mut SimPacket, now: Nanos, rng: &mut R) {
        if p.tag == NO_TAG {
            let (flow, bytes) = (csfq_algo::Packet::flow(p), csfq_algo::Packet::size_bytes(p));
            p.tag = self.tag_with(flow, now.0, bytes, rng)
        }
    }

    fn set_flow_weight<R: Rng + ?Sized>(&mut self, flow: FlowId, weight: f64, _: &mut R) {
        self.set_weight(flow, weight)
    }

    fn flow_records(&self) -> usize {
        self.flow_slots()
    }
}

super::port_queue!(in_order FixedTufPort<Queued>);

/// The threshold tag's rate.
impl Estimate for FixedTufPort<Queued> {
    fn fair_share(&self) -> Option<f64> {
        Some(self.threshold_rate())
    }
}

/// The integer TUF with the `[tuf]` table's `K` and the `[csfq]` table's window for the
/// link.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    let window = t.csfq.core_params(link.rate_bps, link.buffer_bytes).k_c;
    Ok(Box::new(EdgeCore {
        edge: FixedTufTagger::new(t.tuf.k().0),
        core: FixedTufPort::new(FixedTufParams {
            capacity_bps: link.rate_bps as u64,
            limit_bytes: link.buffer_bytes,
            window_ns: window.0,
            k_ns: t.tuf.k().0,
        }),
    }))
}
