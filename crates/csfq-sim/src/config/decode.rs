//! Each discipline's table decoded into its algorithm's parameters for one link (its rate,
//! bit/s, and its buffer, bytes): the only place a table's units (milliseconds, seconds,
//! shares of the buffer) become the algorithms' (nanoseconds, bytes). A port's discipline
//! is built from these values ([`crate::discipline::Discipline::build`]), converting
//! nothing itself.

use csfq_algo::ared::AredParams;
use csfq_algo::csfne::CsfneParams;
use csfq_algo::csfq::CsfqParams;
use csfq_algo::drr::DrrParams;
use csfq_algo::fq_codel::FqCodelParams;
use csfq_algo::may::MayParams;
use csfq_algo::red::RedParams;
use csfq_algo::tuf::TufParams;
use csfq_algo::Nanos;

use super::{
    AredConfig, CsfneConfig, CsfqConfig, DrrConfig, FqCodelConfig, MayConfig, RedConfig, TufConfig,
};

/// Milliseconds as the algorithms' time.
fn ms(x: f64) -> Nanos {
    Nanos::from_secs_f64(x / 1e3)
}

impl CsfqConfig {
    /// `K`, the edge's averaging constant.
    pub fn edge_k(&self) -> Nanos {
        ms(self.k_ms)
    }

    /// The core's parameters for a link of `rate_bps` with `buffer_bytes`: `K_alpha` and
    /// `K_c` as given, else scaled to the link (`csfq_algo::csfq::scaled_window`).
    pub fn core_params(&self, rate_bps: f64, buffer_bytes: u32) -> CsfqParams {
        let scaled = csfq_algo::csfq::scaled_window(rate_bps, buffer_bytes);
        let window = |v: Option<f64>| v.map_or(scaled, ms);
        CsfqParams {
            k_alpha: window(self.k_alpha_ms),
            k_c: window(self.k_c_ms),
            relabel: self.relabel,
            estimator: self.estimator.into(),
            ..CsfqParams::new(rate_bps, buffer_bytes)
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
}

impl TufConfig {
    /// `K`, the edge tagger's averaging constant.
    pub fn k(&self) -> Nanos {
        ms(self.k_ms)
    }

    /// The drop-highest-tag queue's parameters for a buffer of `buffer_bytes`.
    pub fn params(&self, buffer_bytes: u32) -> TufParams {
        TufParams {
            buffer_bytes,
            untagged_buffer_bytes: (buffer_bytes as f64 * self.untagged_buffer_share) as u32,
            tagged_weight: self.tagged_weight,
            untagged_weight: self.untagged_weight,
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
}

impl MayConfig {
    /// MAY's parameters for a link of `rate_bps` with `buffer_bytes`, its packets of
    /// `packet_bytes` (TCP's segment: the unit MAY's sampling counts in).
    pub fn params(&self, rate_bps: f64, buffer_bytes: u32, packet_bytes: u32) -> MayParams {
        MayParams {
            update_interval: ms(self.update_interval_ms),
            target_utilization: self.target_utilization,
            gain: self.gain,
            q_w: self.q_w,
            timeout: ms(self.timeout_s * 1e3),
            s0: self.s0,
            table_capacity: self.table_capacity as usize,
            packet_bytes,
            overflow_in_nd: self.overflow_in_nd,
            utilization: self.utilization.into(),
            ceiling: self.ceiling.into(),
            ..MayParams::new(rate_bps, buffer_bytes)
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables' defaults decode to the papers' values in the algorithms' units, worked
    /// by hand: MAY's `Delta` 1 s and `T0` 64 s (Section IV), FQ-CoDel's 5 ms and 100 ms
    /// (RFC 8290), CSFQ's and TUF's `K` 100 ms, TUF's untagged queue a quarter of the
    /// buffer, CS-FNE's 16 000-byte target held to a smaller buffer.
    #[test]
    fn defaults_decode_to_the_papers_values() {
        let may = MayConfig::default().params(10e6, 64_000, 1000);
        assert_eq!(may.update_interval, Nanos(1_000_000_000));
        assert_eq!(may.timeout, Nanos(64_000_000_000));
        assert_eq!(
            (may.s0, may.packet_bytes, may.buffer_bytes),
            (1000.0, 1000, 64_000)
        );
        let fq = FqCodelConfig::default().params(64_000);
        assert_eq!(
            (fq.target, fq.interval),
            (Nanos(5_000_000), Nanos(100_000_000))
        );
        assert_eq!(CsfqConfig::default().edge_k(), Nanos(100_000_000));
        let tuf = TufConfig::default();
        assert_eq!(tuf.k(), Nanos(100_000_000));
        assert_eq!(tuf.params(64_000).untagged_buffer_bytes, 16_000);
        let csfne = CsfneConfig::default();
        assert_eq!(csfne.params(10e6, 8_000).target_bytes, 8_000);
        assert_eq!(csfne.params(10e6, 64_000).target_bytes, 16_000);
        assert_eq!(csfne.win(), Nanos(100_000_000));
    }
}
