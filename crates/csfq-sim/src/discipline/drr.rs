//! Deficit Round Robin (Shreedhar and Varghese 1995; `csfq_algo::drr`) as ns-2's
//! `queue/drr.cc` runs it, and its `[drr]` table.

use csfq_algo::drr::{Drr, DrrParams};
use serde::{Deserialize, Serialize};

use super::{DisciplineTables, Link, ParamError, TableError};
use crate::packet::SimPacket;

/// DRR at a port.
pub type Port = Box<Drr<SimPacket>>;

super::queue_alone!(scheduled Drr<SimPacket>);

/// DRR with the `[drr]` table over the link's buffer.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(Box::new(Drr::new(t.drr.params(link.buffer_bytes))))
}

/// DRR's quantum and queues.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrrConfig {
    /// Bytes per round, at least the largest packet.
    pub quantum_bytes: u32,
    /// Hash buckets, as ns-2's DRR `buckets_` (0, the default: a queue per flow). Each
    /// flow has its own sending host here; hosts are numbered in flow order (ns-2 numbers
    /// nodes as a script creates them) and hashed as ns-2 hashes a source address
    /// (`csfq_algo::drr::ns2_bucket`). Flows in one bucket share its queue.
    pub buckets: u32,
    /// Which end of the longest queue a full buffer drops from: `head` (the default, as
    /// ns-2's `queue/drr.cc`: the arrival is queued, then the longest queue's head goes)
    /// or `tail` (the longest queue's tail is pushed out, the arrival dropped if its own
    /// queue is the longest).
    #[serde(skip_serializing_if = "DrrDropFrom::is_default")]
    pub drop_from: DrrDropFrom,
}

/// Which end of the longest queue DRR drops from (`[drr] drop_from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DrrDropFrom {
    /// ns-2's: the head.
    #[default]
    Head,
    /// The tail, the arrival's own queue excepted.
    Tail,
}

impl DrrDropFrom {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

impl From<DrrDropFrom> for csfq_algo::drr::DrrDropEnd {
    fn from(d: DrrDropFrom) -> Self {
        match d {
            DrrDropFrom::Head => Self::Head,
            DrrDropFrom::Tail => Self::Tail,
        }
    }
}

impl Default for DrrConfig {
    fn default() -> Self {
        DrrConfig {
            quantum_bytes: 1000,
            buckets: 0,
            drop_from: DrrDropFrom::Head,
        }
    }
}

impl DrrConfig {
    /// DRR's parameters for a buffer of `buffer_bytes`.
    pub fn params(&self, buffer_bytes: u32) -> DrrParams {
        DrrParams {
            buffer_bytes,
            quantum_bytes: self.quantum_bytes,
            drop_end: self.drop_from.into(),
        }
    }

    /// Every value in the range DRR handles.
    pub fn check(&self) -> Result<(), TableError> {
        if self.quantum_bytes == 0 || self.quantum_bytes > 1 << 24 {
            return Err(TableError::at(
                "drr",
                "quantum_bytes",
                "must be 1..=16777216",
            ));
        }
        if self.buckets > 1 << 20 {
            return Err(TableError::at(
                "drr",
                "buckets",
                "must be 0 (a queue per flow) ..=1048576",
            ));
        }
        Ok(())
    }
}
