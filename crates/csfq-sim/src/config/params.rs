//! `[tcp]`: the settings every TCP flow of a scenario shares. The disciplines' tables
//! (`[csfq]`, `[red]`, ...) are their modules' (`crate::discipline`).

use serde::{Deserialize, Serialize};

use crate::kinds::{CongestionControl, TcpTimer};

/// TCP settings shared by every TCP flow of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// Segment size on the wire, bytes (1000 in the papers).
    pub segment_bytes: u32,
    /// ACK size on the wire, bytes.
    pub ack_bytes: u32,
    /// Largest window, segments (the receiver's window).
    pub max_window_segments: u32,
    /// Initial congestion window, segments.
    pub initial_window_segments: u32,
    /// Minimum retransmission timeout, ms (RFC 6298 says 1000; Linux and ns-2 use 200).
    pub min_rto_ms: f64,
    /// Initial retransmission timeout, ms (RFC 6298: 1000).
    pub initial_rto_ms: f64,
    /// Clock granularity `G` of RFC 6298, ms: `RTO = SRTT + max(G, 4 RTTVAR)`. A floor on
    /// the variance term, not on the whole timeout. 100 ms by default: ns-2's TCP timer tick
    /// in the papers' era (`tcpTick_ 0.1`); Linux behaves as if G were 200 ms. Without it,
    /// long-delay paths with deep queues see spurious timeouts (csfq-table3).
    pub clock_granularity_ms: f64,
    /// Delayed ACKs: acknowledge every second segment or after `delayed_ack_ms`.
    pub delayed_ack: bool,
    /// Delayed-ACK timeout, ms.
    pub delayed_ack_ms: f64,
    /// Selective acknowledgments (RFC 2018) with RFC 6675-style loss recovery.
    pub sack: bool,
    /// The retransmission timer: RFC 6298's, or ns-2's coarse one with
    /// `clock_granularity_ms` as its tick (`tcp_tick_`).
    pub timer: TcpTimer,
    /// Every TCP flow's congestion control unless its `[[flow]]` table names one:
    /// `newreno` (the default, the papers') or `cubic`.
    pub congestion_control: CongestionControl,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            segment_bytes: 1000,
            ack_bytes: 40,
            max_window_segments: 64,
            initial_window_segments: 1,
            min_rto_ms: 200.0,
            initial_rto_ms: 1000.0,
            clock_granularity_ms: 100.0,
            delayed_ack: false,
            delayed_ack_ms: 100.0,
            sack: false,
            timer: TcpTimer::Rfc6298,
            congestion_control: CongestionControl::NewReno,
        }
    }
}
