//! FRED (Lin and Morris 1997; `csfq_algo::fred`), FRED-1 and FRED-2, with RED's thresholds
//! (`[red]`) and its own `[fred]` table.

use csfq_algo::fred::{Fred, FredParams, FredVariant};
use csfq_algo::queue::Queued;
use serde::{Deserialize, Serialize};

use super::{DisciplineTables, Link, ParamError, TableError};

/// FRED at a port.
pub type Port = Box<Fred<Queued>>;

super::queue_alone!(in_order Fred<Queued>);

fn build(t: &DisciplineTables, link: Link, variant: FredVariant) -> Port {
    Box::new(Fred::new(FredParams {
        red: t.red.params(link.rate_bps, link.buffer_bytes),
        min_q_packets: t.fred.min_q_packets,
        variant,
    }))
}

/// FRED-1 for the link.
pub fn build_fred1(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(build(t, link, FredVariant::Fred1))
}

/// FRED-2 (`minq` guaranteed buffers) for the link.
pub fn build_fred2(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(build(t, link, FredVariant::Fred2))
}

/// FRED's extra parameter.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FredConfig {
    /// `minq`, packets.
    pub min_q_packets: u32,
}

impl Default for FredConfig {
    fn default() -> Self {
        FredConfig { min_q_packets: 2 }
    }
}

impl FredConfig {
    /// `minq` in the range FRED handles.
    pub fn check(&self) -> Result<(), TableError> {
        if !(1..=65_535).contains(&self.min_q_packets) {
            return Err(TableError::at("fred", "min_q_packets", "must be 1..=65535"));
        }
        Ok(())
    }
}
