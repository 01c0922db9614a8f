//! The kinds every layer names: a queue discipline (declared by the disciplines' list,
//! `discipline`), what a flow sends, a TCP sender's congestion control and retransmission
//! timer. They sit below the scenario file (`config`), which reads and writes them by
//! these names, so that the network, the disciplines, the hosts and the observers name
//! them without reaching up into it.

use serde::{Deserialize, Serialize};

pub use crate::discipline::DisciplineKind;

/// What a flow sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowKind {
    /// Constant bit rate with inter-arrivals uniform on [1-jitter, 1+jitter] x the mean.
    Udp,
    /// ON-OFF: exponential ON and OFF periods, sending like `udp` while ON.
    Onoff,
    /// A TCP NewReno transfer: unlimited, or `size_pkts` segments.
    Tcp,
    /// Short TCP transfers, as web traffic: `count` transfers whose starts are spaced by
    /// exponential gaps (`arrival_mean_ms`) and whose sizes are Pareto (`size_mean_pkts`,
    /// `size_shape`).
    Web,
    /// A receiver-driven layered multicast session (McCanne et al. 1996) with one receiver:
    /// `layers` cumulative layers, layer i at `layer_base_kbps * 2^(i-1)`.
    Rlm,
}

impl FlowKind {
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            FlowKind::Udp => "udp",
            FlowKind::Onoff => "onoff",
            FlowKind::Tcp => "tcp",
            FlowKind::Web => "web",
            FlowKind::Rlm => "rlm",
        }
    }

    /// Whether it sends regardless of loss (`udp`, `onoff`): judged against the per-hop
    /// allocation, not end-to-end max-min.
    pub fn is_open_loop(self) -> bool {
        matches!(self, FlowKind::Udp | FlowKind::Onoff)
    }
}

/// A TCP sender's congestion control.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CongestionControl {
    /// NewReno (RFC 5681, RFC 6582): `1/cwnd` per ACK, halving on a loss; the papers'.
    #[default]
    NewReno,
    /// CUBIC (RFC 9438), Linux's default: the window a cubic function of the time since
    /// the last loss, `0.7` of it kept on a loss.
    Cubic,
}

/// Which retransmission timer the TCP senders run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TcpTimer {
    /// RFC 6298 on every ACK's echoed timestamp: `RTO = SRTT + max(G, 4 RTTVAR)`, at least
    /// `min_rto_ms`.
    #[default]
    Rfc6298,
    /// ns-2's `TcpAgent` timer, the papers' (see `ns2_timer`): one timed segment per round
    /// trip, round trips counted in ticks of `clock_granularity_ms`, `RTO = SRTT + 4
    /// RTTVAR` ticks, at least `min_rto_ms` and two ticks.
    Ns2,
}
