//! CHOKe (Pan, Prabhakar and Psounis 2000; `csfq_algo::choke`), with RED's thresholds
//! (`[red]`).

use csfq_algo::choke::Choke;

use super::{DisciplineTables, Link, ParamError};
use crate::packet::SimPacket;

/// CHOKe at a port.
pub type Port = Box<Choke<SimPacket>>;

super::queue_alone!(scheduled Choke<SimPacket>);

/// CHOKe with the `[red]` table's thresholds for the link.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(Box::new(Choke::new(
        t.red.params(link.rate_bps, link.buffer_bytes),
    )))
}
