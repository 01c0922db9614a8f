//! TUF as the dataplane runs it (`csfq_algo::tuf_fixed`): integer tags at the edges,
//! every flow's (TCPs tagged as unresponsive, as an edge router must: only the source
//! knows a TCP's round trip), a filter that drops tags above a threshold that fills the
//! link in front of a FIFO, not a queue that pushes the highest tag out. Reads `[tuf]`
//! (the tagger's `K`) and `[csfq]` (the filter's window, `K_c`).

use csfq_algo::tuf_fixed::{FixedTufParams, FixedTufPort, FixedTufTagger};
use csfq_algo::{FlowId, Nanos};
use rand::Rng;

use super::{DisciplineTables, Link, ParamError, PortDiscipline};
use crate::packet::{SimPacket, NO_TAG};

/// The integer TUF at a port: its tagger and its filter.
pub type Port = Box<TufFilter>;

/// Integer tagging of unresponsive flows at the edge and the filter in front of a FIFO.
#[derive(Debug, Clone)]
pub struct TufFilter {
    /// Integer tagging of unresponsive flows at the edge.
    pub tagger: FixedTufTagger,
    /// The filter in front of a FIFO.
    pub core: FixedTufPort<SimPacket>,
}

impl PortDiscipline for TufFilter {
    type Queue = FixedTufPort<SimPacket>;

    #[inline(always)]
    fn queue(&self) -> &Self::Queue {
        &self.core
    }

    #[inline(always)]
    fn queue_mut(&mut self) -> &mut Self::Queue {
        &mut self.core
    }

    /// Tags the packet unless it already carries a tag.
    #[inline]
    fn label_at_edge<R: Rng + ?Sized>(&mut self, p: &mut SimPacket, now: Nanos, rng: &mut R) {
        if p.tag == NO_TAG {
            let (flow, bytes) = (csfq_algo::Packet::flow(p), csfq_algo::Packet::size_bytes(p));
            p.tag = self.tagger.tag_with(flow, now.0, bytes, rng)
        }
    }

    fn set_edge_weight<R: Rng + ?Sized>(&mut self, flow: FlowId, weight: f64, _: &mut R) {
        self.tagger.set_weight(flow, weight)
    }

    fn edge_flow_slots(&self) -> usize {
        self.tagger.flow_slots()
    }

    fn alpha(&self) -> Option<f64> {
        Some(self.core.threshold_rate())
    }
}

/// The integer TUF with the `[tuf]` table's `K` and the `[csfq]` table's window for the
/// link.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    let window = t.csfq.core_params(link.rate_bps, link.buffer_bytes).k_c;
    Ok(Box::new(TufFilter {
        tagger: FixedTufTagger::new(t.tuf.k().0),
        core: FixedTufPort::new(FixedTufParams {
            capacity_bps: link.rate_bps as u64,
            limit_bytes: link.buffer_bytes,
            window_ns: window.0,
            k_ns: t.tuf.k().0,
        }),
    }))
}
