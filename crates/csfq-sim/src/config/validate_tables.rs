//! Validation of the per-discipline tables (each checked by its discipline's module) and
//! of `[tcp]`: every parameter in the range its algorithm handles.

use std::ops::Range;

use super::validate::{within, Locate};
use super::*;

impl ScenarioFile {
    /// The discipline and TCP tables: every parameter in the range its algorithm handles.
    pub(super) fn validate_tables(&self, at: &Locate) -> Result<(), ScenarioError> {
        let err =
            |span: Range<usize>, field: &str, message: String| at.in_table(span, field, message);
        let table_key = |table: &str, key: &str| at.table_key(table, key);
        if let Err(e) = self.check_discipline_tables() {
            return Err(err(table_key(e.table, e.key), &e.field, e.message));
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
        Ok(())
    }
}
