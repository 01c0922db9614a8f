//! CS-FNE (Kim 2005; `csfq_algo::csfne`): Time Sliding Window labels at the edge, a core
//! that estimates the number of flows; its `[csfne]` table (the thesis gives no window or
//! target: these are ours), which the dataplane's model (`csfne-fixed`) also reads.

use csfq_algo::csfne::{CsfneCore, CsfneParams, TswMeter};
use csfq_algo::queue::Queued;
use csfq_algo::Nanos;
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{ms, DisciplineTables, Edge, EdgeCore, Estimate, Link, ParamError, TableError};
use crate::limits::{within, MIN_TIME_MS};
use crate::packet::SimPacket;

/// CS-FNE at a port: its edge's TSW meter and its flow-number-estimating core.
pub type Port = Box<EdgeCore<TswMeter, CsfneCore<Queued>>>;

/// Labels with the TSW rate; keeps no weights.
impl Edge for TswMeter {
    #[inline]
    fn on_entry<R: Rng + ?Sized>(&mut self, p: &mut SimPacket, now: Nanos, _: &mut R) {
        self.label(p, now)
    }

    fn flow_records(&self) -> usize {
        self.flow_slots()
    }
}

super::port_queue!(in_order CsfneCore<Queued>);

/// `C / N_act`, the threshold rate.
impl Estimate for CsfneCore<Queued> {
    fn fair_share(&self) -> Option<f64> {
        Some(self.threshold_rate())
    }
}

/// CS-FNE with the `[csfne]` table for the link.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(Box::new(EdgeCore {
        edge: TswMeter::new(t.csfne.win()),
        core: CsfneCore::new(t.csfne.params(link.rate_bps, link.buffer_bytes)),
    }))
}

/// CS-FNE settings (Kim 2005; the thesis gives no window or target, these are ours).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct CsfneConfig {
    /// The edge's Time Sliding Window, ms.
    pub win_ms: f64,
    /// Queue below which the core drops nothing, bytes.
    pub target_bytes: u32,
    /// Averaging constant of the hit and miss rates, ms.
    pub k_ms: f64,
}

impl Default for CsfneConfig {
    fn default() -> Self {
        CsfneConfig {
            win_ms: 100.0,
            target_bytes: 16_000,
            k_ms: 100.0,
        }
    }
}

impl CsfneConfig {
    /// The edge's Time Sliding Window.
    pub fn win(&self) -> Nanos {
        ms(self.win_ms)
    }

    /// The core's averaging constant of the hit and miss rates.
    pub fn k(&self) -> Nanos {
        ms(self.k_ms)
    }

    /// The target queue, no more than the buffer of `buffer_bytes`.
    pub fn target_bytes(&self, buffer_bytes: u32) -> u32 {
        self.target_bytes.min(buffer_bytes)
    }

    /// The core's parameters for a link of `rate_bps` with `buffer_bytes`.
    pub fn params(&self, rate_bps: f64, buffer_bytes: u32) -> CsfneParams {
        CsfneParams {
            target_bytes: self.target_bytes(buffer_bytes),
            k: self.k(),
            ..CsfneParams::new(rate_bps, buffer_bytes)
        }
    }

    /// Every value in the range CS-FNE handles.
    pub fn check(&self) -> Result<(), TableError> {
        if !(within(self.win_ms, MIN_TIME_MS, 1e6) && within(self.k_ms, MIN_TIME_MS, 1e6)) {
            return Err(TableError::at(
                "csfne",
                "win_ms",
                "win_ms and k_ms must be 0.001..=1000000 ms",
            ));
        }
        Ok(())
    }
}
