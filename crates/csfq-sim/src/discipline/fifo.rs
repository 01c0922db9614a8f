//! Drop-tail FIFO (`csfq_algo::fifo`): every host's access link, and the papers' baseline.

use csfq_algo::fifo::DropTail;
use csfq_algo::queue::Queued;

use super::{DisciplineTables, Link, ParamError};

/// A port's drop-tail queue, unboxed: most ports are hosts' access links.
pub type Port = DropTail<Queued>;

super::queue_alone!(in_order Port);

/// A drop-tail queue of the link's buffer.
pub fn build(_: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(DropTail::new(link.buffer_bytes))
}
