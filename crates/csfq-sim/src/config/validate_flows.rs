//! Validation of the `[[flow]]` tables: at least one; each flow's routers, kind, rates,
//! sizes, times and access links.

use std::ops::Range;

use super::validate::{some_routers, within, Locate};
use super::*;

impl ScenarioFile {
    /// Flows: at least one; their routers, kinds, rates, sizes, times and access links.
    pub(super) fn validate_flows(&self, at: &Locate) -> Result<(), ScenarioError> {
        let err =
            |span: Range<usize>, field: &str, message: String| at.in_table(span, field, message);
        let top = 0..0;
        let routers = self.router_index();
        let known = |n: &str| routers.contains_key(n);
        if self.flows.is_empty() {
            return Err(err(top, "flow", "at least one [[flow]] is needed".into()));
        }
        for f in &self.flows {
            let s = f.span();
            let spec = f.get_ref();
            for (end, name) in [(&spec.from, "from"), (&spec.to, "to")] {
                if !known(end) {
                    return Err(err(
                        s.clone(),
                        name,
                        format!(
                            "unknown router `{end}` (routers: {})",
                            some_routers(&self.routers)
                        ),
                    ));
                }
            }
            if spec.count == 0 {
                return Err(err(s, "count", "must be at least 1".into()));
            }
            if spec.from == spec.to && spec.access.is_none() {
                return Err(err(
                    s,
                    "to",
                    "a flow between a router and itself needs `access` links".into(),
                ));
            }
            match spec.kind {
                FlowKind::Udp | FlowKind::Onoff => {
                    let Some(rate) = spec.rate_mbps else {
                        return Err(err(
                            s,
                            "rate_mbps",
                            format!("a {} flow needs a rate", spec.kind.name()),
                        ));
                    };
                    let last = rate + spec.rate_step_mbps * (spec.count - 1) as f64;
                    if !(within(rate, MIN_RATE_MBPS, MAX_RATE_MBPS)
                        && within(last, MIN_RATE_MBPS, MAX_RATE_MBPS))
                    {
                        let field = if within(rate, MIN_RATE_MBPS, MAX_RATE_MBPS) {
                            "rate_step_mbps"
                        } else {
                            "rate_mbps"
                        };
                        return Err(err(s, field, format!("every flow's rate: {RATE_RANGE}")));
                    }
                    if spec.packet_bytes < 20 || spec.packet_bytes > 65_535 {
                        return Err(err(s, "packet_bytes", "must be 20..=65535".into()));
                    }
                    // Sources send at most one packet per ns (time is kept in whole ns).
                    let fastest = spec.packet_bytes as f64 * 8e3;
                    if rate.max(last) > fastest {
                        return Err(err(
                            s,
                            "rate_mbps",
                            format!(
                                "{} Mbit/s would send {}-byte packets less than 1 ns apart; \
                                 at most {fastest} Mbit/s at this packet size",
                                rate.max(last),
                                spec.packet_bytes
                            ),
                        ));
                    }
                    // A jitter below 1e-6 would make an empty range of gap factors.
                    if !(spec.jitter == 0.0 || (1e-6..1.0).contains(&spec.jitter)) {
                        return Err(err(s, "jitter", "must be 0, or in [0.000001, 1)".into()));
                    }
                }
                FlowKind::Tcp | FlowKind::Web | FlowKind::Rlm => {
                    if spec.rate_mbps.is_some() {
                        return Err(err(
                            s,
                            "rate_mbps",
                            format!(
                                "a {} flow has no sending rate; its window sets it",
                                spec.kind.name()
                            ),
                        ));
                    }
                }
            }
            if spec.kind != FlowKind::Rlm
                && (spec.layers.is_some() || spec.layer_base_kbps.is_some())
            {
                return Err(err(s, "layers", "only rlm flows have layers".into()));
            }
            if spec.layers.is_some_and(|l| !(1..=16).contains(&l)) {
                return Err(err(s, "layers", "must be 1..=16".into()));
            }
            if spec
                .layer_base_kbps
                .is_some_and(|b| !(b.is_finite() && b > 0.0 && b < 1e9))
            {
                return Err(err(s, "layer_base_kbps", "must be positive".into()));
            }
            if spec.kind == FlowKind::Rlm {
                // Layer i sends base x 2^(i-1): all of them together, base x (2^layers - 1),
                // is bounded like any source's rate, and the top layer's packets stay at
                // least 1 ns apart.
                let (layers, base) = (
                    spec.layers.unwrap_or(RLM_DEFAULT_LAYERS),
                    spec.layer_base_kbps.unwrap_or(RLM_DEFAULT_BASE_KBPS),
                );
                let total_mbps = base * (2f64.powi(i32::from(layers)) - 1.0) / 1e3;
                let top_mbps = base * 2f64.powi(i32::from(layers) - 1) / 1e3;
                let fastest = f64::from(spec.packet_bytes) * 8e3;
                if total_mbps > MAX_RATE_MBPS || top_mbps > fastest {
                    return Err(err(
                        s,
                        "layer_base_kbps",
                        format!(
                            "{layers} layers from {base} kbit/s send {total_mbps} Mbit/s in all: {RATE_RANGE}, and the top layer at most {fastest} Mbit/s at {}-byte packets",
                            spec.packet_bytes
                        ),
                    ));
                }
            }
            if spec.size_pkts.is_some() && spec.kind != FlowKind::Tcp {
                return Err(err(
                    s,
                    "size_pkts",
                    "only tcp flows have a transfer size".into(),
                ));
            }
            if spec.congestion_control.is_some()
                && !matches!(spec.kind, FlowKind::Tcp | FlowKind::Web)
            {
                return Err(err(
                    s,
                    "congestion_control",
                    "only tcp and web flows have a congestion control".into(),
                ));
            }
            if spec.size_pkts == Some(0) {
                return Err(err(s, "size_pkts", "must be at least 1 segment".into()));
            }
            let uniform = spec.size_min_pkts.is_some() || spec.size_max_pkts.is_some();
            let web_fields = [
                (spec.arrival_mean_ms, "arrival_mean_ms", 0.0, true),
                (spec.size_mean_pkts, "size_mean_pkts", 1.0, !uniform),
                (spec.size_shape, "size_shape", 1.0, !uniform),
            ];
            for (v, name, above, needed) in web_fields {
                match (spec.kind, v, needed) {
                    (FlowKind::Web, Some(_), false) => {
                        return Err(err(
                            s,
                            name,
                            "a web table has Pareto sizes (size_mean_pkts, size_shape) or uniform ones (size_min_pkts, size_max_pkts), not both".into(),
                        ));
                    }
                    (FlowKind::Web, Some(v), true) if v.is_finite() && v > above && v < 1e9 => {}
                    (FlowKind::Web, None, false) => {}
                    (FlowKind::Web, _, _) => {
                        return Err(err(
                            s,
                            name,
                            format!("a web flow needs {name} above {above}"),
                        ));
                    }
                    (_, Some(_), _) => {
                        return Err(err(s, name, format!("only web flows have {name}")));
                    }
                    (_, None, _) => {}
                }
            }
            if uniform {
                if spec.kind != FlowKind::Web {
                    return Err(err(
                        s,
                        "size_min_pkts",
                        "only web flows have size_min_pkts and size_max_pkts".into(),
                    ));
                }
                match (spec.size_min_pkts, spec.size_max_pkts) {
                    (Some(lo), Some(hi)) if lo >= 1 && lo <= hi && hi <= 10_000_000 => {}
                    _ => {
                        return Err(err(
                            s,
                            "size_min_pkts",
                            "uniform sizes need 1 <= size_min_pkts <= size_max_pkts <= 10000000"
                                .into(),
                        ))
                    }
                }
            }
            if spec.kind != FlowKind::Web && spec.arrivals != Arrivals::default() {
                return Err(err(s, "arrivals", "only web flows have arrivals".into()));
            }
            if spec.kind == FlowKind::Onoff {
                for (v, name) in [(spec.on_ms, "on_ms"), (spec.off_ms, "off_ms")] {
                    match v {
                        Some(v) if within(v, MIN_TIME_MS, MAX_DURATION_S * 1e3) => {}
                        _ => {
                            return Err(err(
                                s,
                                name,
                                format!(
                                    "an onoff flow needs a mean period of {MIN_TIME_MS} ms \
                                     (1 us) to {} ms",
                                    MAX_DURATION_S * 1e3
                                ),
                            ))
                        }
                    }
                }
            } else if spec.on_ms.is_some() || spec.off_ms.is_some() {
                return Err(err(
                    s,
                    "on_ms",
                    "only onoff flows have ON/OFF periods".into(),
                ));
            }
            if !within(spec.weight, MIN_WEIGHT, MAX_WEIGHT) {
                return Err(err(
                    s,
                    "weight",
                    format!("must be {MIN_WEIGHT}..={MAX_WEIGHT}"),
                ));
            }
            let stop = spec.stop_s.unwrap_or(self.duration_s);
            if !(within(spec.start_s, 0.0, MAX_DURATION_S)
                && within(stop, 0.0, MAX_DURATION_S)
                && stop > spec.start_s)
            {
                let field = if spec.stop_s.is_some() && !within(stop, 0.0, MAX_DURATION_S) {
                    "stop_s"
                } else {
                    "start_s"
                };
                return Err(err(
                    s,
                    field,
                    format!("need 0 <= start_s < stop_s <= {MAX_DURATION_S} s"),
                ));
            }
            if let Some(a) = spec.access {
                let last = a.delay_ms + a.delay_step_ms * (spec.count - 1) as f64;
                if !(within(a.rate_mbps, MIN_RATE_MBPS, MAX_RATE_MBPS)
                    && within(a.delay_ms, 0.0, MAX_DELAY_MS)
                    && a.delay_step_ms.is_finite()
                    && within(last, 0.0, MAX_DELAY_MS))
                {
                    return Err(err(
                        s,
                        "access",
                        format!(
                            "rate_mbps: {RATE_RANGE}; delay_ms (plus delay_step_ms per flow): \
                             {DELAY_RANGE}"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
