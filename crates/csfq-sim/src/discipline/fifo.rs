//! Drop-tail FIFO (`csfq_algo::fifo`): every host's access link, and the papers' baseline.

use csfq_algo::fifo::DropTail;

use super::{DisciplineTables, Link, ParamError};
use crate::packet::SimPacket;

/// A port's drop-tail queue, unboxed: most ports are hosts' access links.
pub type Port = DropTail<SimPacket>;

super::queue_alone!(Port);

/// A drop-tail queue of the link's buffer.
pub fn build(_: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(DropTail::new(link.buffer_bytes))
}
