//! Adaptive RED (Floyd, Gummadi and Shenker 2001; `csfq_algo::ared`): thresholds and
//! `w_q` follow from the link's rate and a target delay (`[ared]`).

use csfq_algo::ared::{Ared, AredParams};
use csfq_algo::queue::Queued;
use serde::{Deserialize, Serialize};

use super::{DisciplineTables, Link, ParamError, TableError};
use crate::limits::{within, MIN_TIME_MS};

/// Adaptive RED at a port.
pub type Port = Box<Ared<Queued>>;

super::queue_alone!(in_order Ared<Queued>);

/// Adaptive RED with the `[ared]` table for the link, counting in TCP's segment.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(Box::new(Ared::new(t.ared.params(
        link.rate_bps,
        link.buffer_bytes,
        t.segment_bytes,
    ))))
}

/// Adaptive RED settings (Floyd, Gummadi and Shenker 2001): thresholds and `w_q` follow
/// from the link's rate and the target delay.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct AredConfig {
    /// Target queueing delay, ms: `min_th = max(5, C * target / 2)` packets.
    pub target_delay_ms: f64,
}

impl Default for AredConfig {
    fn default() -> Self {
        AredConfig {
            target_delay_ms: 5.0,
        }
    }
}

impl AredConfig {
    /// Adaptive RED's parameters for a link of `rate_bps` with `buffer_bytes` and packets
    /// of `packet_bytes`.
    pub fn params(&self, rate_bps: f64, buffer_bytes: u32, packet_bytes: u32) -> AredParams {
        AredParams::with_target_delay(
            rate_bps,
            buffer_bytes,
            packet_bytes,
            self.target_delay_ms / 1e3,
        )
    }

    /// The target delay in the range adaptive RED handles.
    pub fn check(&self) -> Result<(), TableError> {
        if !within(self.target_delay_ms, MIN_TIME_MS, 1e6) {
            return Err(TableError::at(
                "ared",
                "target_delay_ms",
                "must be 0.001..=1000000 ms",
            ));
        }
        Ok(())
    }
}
