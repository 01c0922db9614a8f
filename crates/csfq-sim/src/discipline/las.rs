//! Least Attained Service (`csfq_algo::las`): per-flow queues, the least-served flow first.

use csfq_algo::las::Las;

use super::{DisciplineTables, Link, ParamError};
use crate::packet::SimPacket;

/// LAS at a port.
pub type Port = Box<Las<SimPacket>>;

super::queue_alone!(scheduled Las<SimPacket>);

/// LAS over the link's buffer.
pub fn build(_: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(Box::new(Las::new(link.buffer_bytes)))
}
