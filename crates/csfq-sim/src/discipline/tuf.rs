//! TUF (Clerget and Dabbous 1999; `csfq_algo::tuf`): edges tag unresponsive flows' packets
//! (TCP sources tag their own), the queue drops the highest tag; its `[tuf]` table, which
//! the dataplane's model (`tuf-filter`) also reads.

use csfq_algo::tuf::{TufParams, TufQueue, TufTagger};
use csfq_algo::{FlowId, Nanos};
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{ms, DisciplineTables, Edge, EdgeCore, Estimate, Link, ParamError, TableError};
use crate::limits::{within, MIN_TIME_MS};
use crate::packet::{SimPacket, NO_TAG};

/// TUF at a port: its edge's tagger and the drop-highest-tag queue.
pub type Port = Box<EdgeCore<TufTagger, TufQueue<SimPacket>>>;

/// Tags a packet unless its source (a TCP sender) already did.
impl Edge for TufTagger {
    #[inline]
    fn on_entry<R: Rng + ?Sized>(&mut self, p: &mut SimPacket, now: Nanos, rng: &mut R) {
        if p.tag == NO_TAG {
            p.tag = self.tag(p, now, rng);
        }
    }

    fn set_flow_weight<R: Rng + ?Sized>(&mut self, flow: FlowId, weight: f64, rng: &mut R) {
        self.set_weight(flow, weight, rng)
    }

    fn flow_records(&self) -> usize {
        self.flow_slots()
    }
}

/// The push-out queue keeps no estimate.
impl Estimate for TufQueue<SimPacket> {}

super::port_queue!(scheduled TufQueue<SimPacket>);

/// TUF with the `[tuf]` table over the link's buffer.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(Box::new(EdgeCore {
        edge: TufTagger::new(t.tuf.k()),
        core: TufQueue::new(t.tuf.params(link.buffer_bytes)),
    }))
}

/// TUF settings (Clerget and Dabbous 1999).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TufConfig {
    /// The edge tagger's rate-averaging constant (Eq. 3), ms.
    pub k_ms: f64,
    /// Buffer of the untagged queue, as a share of the link's buffer.
    pub untagged_buffer_share: f64,
    /// Weighted round robin: tagged packets served per round.
    pub tagged_weight: u32,
    /// Untagged packets served per round.
    pub untagged_weight: u32,
}

impl Default for TufConfig {
    fn default() -> Self {
        TufConfig {
            k_ms: 100.0,
            untagged_buffer_share: 0.25,
            tagged_weight: 3,
            untagged_weight: 1,
        }
    }
}

impl TufConfig {
    /// `K`, the edge tagger's averaging constant.
    pub fn k(&self) -> Nanos {
        ms(self.k_ms)
    }

    /// The drop-highest-tag queue's parameters for a buffer of `buffer_bytes`.
    pub fn params(&self, buffer_bytes: u32) -> TufParams {
        TufParams {
            buffer_bytes,
            untagged_buffer_bytes: (buffer_bytes as f64 * self.untagged_buffer_share) as u32,
            tagged_weight: self.tagged_weight,
            untagged_weight: self.untagged_weight,
        }
    }

    /// Every value in the range TUF handles.
    pub fn check(&self) -> Result<(), TableError> {
        if !(within(self.k_ms, MIN_TIME_MS, 1000.0)
            && (0.0..=1.0).contains(&self.untagged_buffer_share))
            || self.tagged_weight == 0
            || self.untagged_weight == 0
        {
            return Err(TableError {
                table: "tuf",
                key: "untagged_buffer_share",
                field: "tuf".into(),
                message: "k_ms must be 0.001..=1000 ms, untagged_buffer_share in [0, 1], \
                          weights at least 1"
                    .into(),
            });
        }
        Ok(())
    }
}
