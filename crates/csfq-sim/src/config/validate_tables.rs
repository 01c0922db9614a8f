//! Validation of the per-discipline tables (see `params.rs`) and of `[tcp]`: every
//! parameter in the range its algorithm handles.

use std::ops::Range;

use super::validate::{within, Locate};
use super::*;

impl ScenarioFile {
    /// The discipline and TCP tables: every parameter in the range its algorithm handles.
    pub(super) fn validate_tables(&self, at: &Locate) -> Result<(), ScenarioError> {
        let err =
            |span: Range<usize>, field: &str, message: String| at.in_table(span, field, message);
        let table_key = |table: &str, key: &str| at.table_key(table, key);
        let c = &self.csfq;
        for (v, name) in [
            (Some(c.k_ms), "csfq.k_ms"),
            (c.k_alpha_ms, "csfq.k_alpha_ms"),
            (c.k_c_ms, "csfq.k_c_ms"),
        ] {
            if v.is_some_and(|v| !within(v, MIN_TIME_MS, 1000.0)) {
                return Err(err(
                    table_key("csfq", name.trim_start_matches("csfq.")),
                    name,
                    "must be a number of ms in [0.001, 1000]".into(),
                ));
            }
        }
        let r = &self.red;
        if r.min_th_bytes == 0 || r.min_th_bytes >= r.max_th_bytes {
            return Err(err(
                table_key("red", "min_th_bytes"),
                "red.min_th_bytes",
                "must be positive and below max_th_bytes".into(),
            ));
        }
        if !(r.w_q > 0.0 && r.w_q <= 1.0 && r.max_p > 0.0 && r.max_p <= 1.0) {
            return Err(err(
                table_key("red", "w_q"),
                "red.w_q / red.max_p",
                "must be in (0, 1]".into(),
            ));
        }
        if self.drr.quantum_bytes == 0 || self.drr.quantum_bytes > 1 << 24 {
            return Err(err(
                table_key("drr", "quantum_bytes"),
                "drr.quantum_bytes",
                "must be 1..=16777216".into(),
            ));
        }
        if self.drr.buckets > 1 << 20 {
            return Err(err(
                table_key("drr", "buckets"),
                "drr.buckets",
                "must be 0 (a queue per flow) ..=1048576".into(),
            ));
        }
        if !(1..=65_535).contains(&self.fred.min_q_packets) {
            return Err(err(
                table_key("fred", "min_q_packets"),
                "fred.min_q_packets",
                "must be 1..=65535".into(),
            ));
        }
        let u = &self.tuf;
        if !(within(u.k_ms, MIN_TIME_MS, 1000.0) && (0.0..=1.0).contains(&u.untagged_buffer_share))
            || u.tagged_weight == 0
            || u.untagged_weight == 0
        {
            return Err(err(
                table_key("tuf", "untagged_buffer_share"),
                "tuf",
                "k_ms must be 0.001..=1000 ms, untagged_buffer_share in [0, 1], weights at least 1"
                    .into(),
            ));
        }
        let c = &self.csfne;
        if !(within(c.win_ms, MIN_TIME_MS, 1e6) && within(c.k_ms, MIN_TIME_MS, 1e6)) {
            return Err(err(
                table_key("csfne", "win_ms"),
                "csfne.win_ms",
                "win_ms and k_ms must be 0.001..=1000000 ms".into(),
            ));
        }
        let t = &self.tcp;
        if t.segment_bytes < 64 || t.segment_bytes > 65_535 {
            return Err(err(
                table_key("tcp", "segment_bytes"),
                "tcp.segment_bytes",
                "must be 64..=65535 bytes".into(),
            ));
        }
        if t.ack_bytes == 0 || t.ack_bytes > 65_535 {
            return Err(err(
                table_key("tcp", "ack_bytes"),
                "tcp.ack_bytes",
                "must be 1..=65535 bytes".into(),
            ));
        }
        if !(1..=MAX_WINDOW).contains(&t.max_window_segments)
            || !(1..=t.max_window_segments).contains(&t.initial_window_segments)
        {
            return Err(err(
                table_key("tcp", "max_window_segments"),
                "tcp.max_window_segments",
                format!("windows must be 1..={MAX_WINDOW} segments, the initial one at most the maximum"),
            ));
        }
        let timer_ok = |ms: f64| within(ms, MIN_TIME_MS, MAX_DURATION_S * 1e3);
        if !(timer_ok(t.min_rto_ms)
            && timer_ok(t.initial_rto_ms)
            && timer_ok(t.delayed_ack_ms)
            && (t.clock_granularity_ms == 0.0 || timer_ok(t.clock_granularity_ms)))
        {
            return Err(err(
                table_key("tcp", "min_rto_ms"),
                "tcp.min_rto_ms",
                "timers must be 0.001 ms..=1000000 s".into(),
            ));
        }
        if t.timer == TcpTimer::Ns2 && t.clock_granularity_ms == 0.0 {
            return Err(err(
                table_key("tcp", "clock_granularity_ms"),
                "tcp.clock_granularity_ms",
                "the ns2 timer counts round trips in ticks of clock_granularity_ms: it must be > 0"
                    .into(),
            ));
        }
        let m = &self.may;
        let may_checks = [
            (
                within(m.update_interval_ms, MIN_TIME_MS, MAX_DURATION_S * 1e3),
                "update_interval_ms",
                "must be 0.001 ms..=1000000 s",
            ),
            (
                m.target_utilization > 0.0 && m.target_utilization <= 1.0,
                "target_utilization",
                "must be in (0, 1]",
            ),
            (
                m.gain.is_finite() && m.gain > 0.0,
                "gain",
                "must be positive",
            ),
            (m.q_w > 0.0 && m.q_w <= 1.0, "q_w", "must be in (0, 1]"),
            (
                within(m.timeout_s, MIN_TIME_MS / 1e3, MAX_DURATION_S),
                "timeout_s",
                "must be a positive number of seconds",
            ),
            (
                m.s0.is_finite() && m.s0 >= 1.0,
                "s0",
                "must be at least 1 (packets)",
            ),
            (
                m.table_capacity >= 1,
                "table_capacity",
                "must be at least 1 entry",
            ),
        ];
        for (ok, name, what) in may_checks {
            if !ok {
                return Err(err(
                    table_key("may", name),
                    &format!("may.{name}"),
                    what.into(),
                ));
            }
        }
        let a = &self.ared;
        if !within(a.target_delay_ms, MIN_TIME_MS, 1e6) {
            return Err(err(
                table_key("ared", "target_delay_ms"),
                "ared.target_delay_ms",
                "must be 0.001..=1000000 ms".into(),
            ));
        }
        let q = &self.fq_codel;
        let fq_checks = [
            (
                (1..=65_536).contains(&q.flows),
                "flows",
                "must be 1..=65536 buckets",
            ),
            (
                (1..=1 << 24).contains(&q.quantum_bytes),
                "quantum_bytes",
                "must be 1..=16777216",
            ),
            (
                within(q.target_ms, MIN_TIME_MS, 1e6),
                "target_ms",
                "must be a positive number of ms, at most 1e6",
            ),
            (
                within(q.interval_ms, MIN_TIME_MS, 1e6),
                "interval_ms",
                "must be a positive number of ms, at most 1e6",
            ),
        ];
        for (ok, name, what) in fq_checks {
            if !ok {
                return Err(err(
                    table_key("fq_codel", name),
                    &format!("fq_codel.{name}"),
                    what.into(),
                ));
            }
        }
        Ok(())
    }
}
