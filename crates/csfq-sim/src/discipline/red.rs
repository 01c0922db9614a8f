//! RED (Floyd and Jacobson 1993; `csfq_algo::red`) and its `[red]` table, whose
//! thresholds FRED and CHOKe also read (16 KB / 32 KB in the CSFQ paper).

use csfq_algo::queue::Queued;
use csfq_algo::red::{Red, RedParams};
use serde::{Deserialize, Serialize};

use super::{DisciplineTables, Link, ParamError, TableError};

/// RED at a port.
pub type Port = Box<Red<Queued>>;

super::queue_alone!(in_order Red<Queued>);

/// RED with the `[red]` table for the link.
pub fn build(t: &DisciplineTables, link: Link) -> Result<Port, ParamError> {
    Ok(Box::new(Red::new(
        t.red.params(link.rate_bps, link.buffer_bytes),
    )))
}

/// RED and FRED thresholds (16 KB / 32 KB in the CSFQ paper).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedConfig {
    /// `min_th`, bytes.
    pub min_th_bytes: u32,
    /// `max_th`, bytes.
    pub max_th_bytes: u32,
    /// Averaging weight `w_q`.
    pub w_q: f64,
    /// Drop probability at `max_th`.
    pub max_p: f64,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            min_th_bytes: 16_000,
            max_th_bytes: 32_000,
            w_q: 0.002,
            max_p: 0.1,
        }
    }
}

impl RedConfig {
    /// RED's parameters (also FRED's and CHOKe's) for a link of `rate_bps` with
    /// `buffer_bytes`.
    pub fn params(&self, rate_bps: f64, buffer_bytes: u32) -> RedParams {
        RedParams {
            min_th_bytes: self.min_th_bytes as f64,
            max_th_bytes: self.max_th_bytes as f64,
            w_q: self.w_q,
            max_p: self.max_p,
            ..RedParams::new(rate_bps, buffer_bytes)
        }
    }

    /// Every value in the range RED handles.
    pub fn check(&self) -> Result<(), TableError> {
        if self.min_th_bytes == 0 || self.min_th_bytes >= self.max_th_bytes {
            return Err(TableError::at(
                "red",
                "min_th_bytes",
                "must be positive and below max_th_bytes",
            ));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0 && self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(TableError {
                table: "red",
                key: "w_q",
                field: "red.w_q / red.max_p".into(),
                message: "must be in (0, 1]".into(),
            });
        }
        Ok(())
    }
}
