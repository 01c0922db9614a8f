//! FQ-CoDel (RFC 8290, RFC 8289; `csfq_algo::fq_codel`) as Linux's `fq_codel`, and its
//! `[fq_codel]` table.

use csfq_algo::fq_codel::{FqCodel, FqCodelParams};
use serde::{Deserialize, Serialize};

use super::{ms, DisciplineTables, Link, ParamError, TableError};
use crate::limits::{within, MIN_TIME_MS};
use crate::packet::SimPacket;

/// FQ-CoDel at a port.
pub type Port = Box<FqCodel<SimPacket>>;

super::queue_alone!(scheduled FqCodel<SimPacket>);

/// FQ-CoDel with the `[fq_codel]` table over the link's buffer. The hash perturbation
/// follows the scenario's seed: runs stay reproducible.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(Box::new(FqCodel::new(
        t.fq_codel.params(link.buffer_bytes),
        t.seed,
    )))
}

/// FQ-CoDel settings (RFC 8290, RFC 8289); the defaults are Linux's `fq_codel`. The
/// buffer is the link's `buffer_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FqCodelConfig {
    /// Hash buckets (default 1024); flows that collide share a queue.
    pub flows: u32,
    /// Bytes per round (default 1514).
    pub quantum_bytes: u32,
    /// CoDel's target sojourn time, ms (default 5).
    pub target_ms: f64,
    /// CoDel's interval, ms (default 100).
    pub interval_ms: f64,
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig {
            flows: 1024,
            quantum_bytes: 1514,
            target_ms: 5.0,
            interval_ms: 100.0,
        }
    }
}

impl FqCodelConfig {
    /// FQ-CoDel's parameters for a buffer of `buffer_bytes`.
    pub fn params(&self, buffer_bytes: u32) -> FqCodelParams {
        FqCodelParams {
            flows: self.flows,
            quantum_bytes: self.quantum_bytes,
            target: ms(self.target_ms),
            interval: ms(self.interval_ms),
            ..FqCodelParams::new(buffer_bytes)
        }
    }

    /// Every value in the range FQ-CoDel handles.
    pub fn check(&self) -> Result<(), TableError> {
        let checks = [
            (
                (1..=65_536).contains(&self.flows),
                "flows",
                "must be 1..=65536 buckets",
            ),
            (
                (1..=1 << 24).contains(&self.quantum_bytes),
                "quantum_bytes",
                "must be 1..=16777216",
            ),
            (
                within(self.target_ms, MIN_TIME_MS, 1e6),
                "target_ms",
                "must be a positive number of ms, at most 1e6",
            ),
            (
                within(self.interval_ms, MIN_TIME_MS, 1e6),
                "interval_ms",
                "must be a positive number of ms, at most 1e6",
            ),
        ];
        match checks.into_iter().find(|(ok, ..)| !ok) {
            Some((_, key, what)) => Err(TableError::at("fq_codel", key, what)),
            None => Ok(()),
        }
    }
}
