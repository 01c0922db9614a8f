//! `csfq dp exporter`: the dataplane's counters and the cores' state in the Prometheus
//! text format (OpenMetrics), read from the pinned maps at every scrape.
//!
//! Every series has the labels `netns` (the namespace's name; empty for the host),
//! `interface` and `role` (`edge` or `core`):
//!
//! | metric | type | what |
//! |---|---|---|
//! | `csfq_packets_total{counter}` | counter | packets by what happened to them (`csfq dp stats`) |
//! | `csfq_bytes_total{counter}` | counter | bytes, likewise |
//! | `csfq_core_capacity_bits_per_second` | gauge | `C` |
//! | `csfq_core_arrival_rate_bits_per_second` | gauge | `A`, the aggregate arrival rate |
//! | `csfq_core_accepted_rate_bits_per_second` | gauge | `F`, the rate it forwards |
//! | `csfq_core_fair_share_bits_per_second` | gauge | `alpha` (0: not congested) |
//! | `csfq_core_congested` | gauge | 1 in a congested window |
//! | `csfq_core_virtual_queue_bytes` | gauge | the virtual queue |
//! | `csfq_edge_flows` | gauge | flows in the edge's table |
//! | `csfq_edge_averaging_seconds` | gauge | the edge's `K` |
//! | `csfq_dataplane_up` | gauge | 1 if the maps could be read |

use std::borrow::Cow;

use anyhow::{Context, Result};
use csfq_dp::InterfaceStats;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

/// The labels of one program's series.
type Labels = Vec<(&'static str, Cow<'static, str>)>;

fn labels(s: &InterfaceStats) -> Labels {
    let netns = s.scope.strip_prefix("netns-").unwrap_or("");
    vec![
        ("netns", Cow::Owned(netns.to_string())),
        ("interface", Cow::Owned(s.interface.clone())),
        ("role", Cow::Borrowed(s.role.name())),
    ]
}

/// A gauge of a program's state (`None`: the program has no such value).
struct Gauge {
    name: &'static str,
    help: &'static str,
    value: fn(&InterfaceStats) -> Option<f64>,
}

const GAUGES: [Gauge; 8] = [
    Gauge {
        name: "csfq_core_capacity_bits_per_second",
        help: "The core's link rate C",
        value: |s| s.core.as_ref().map(|c| c.capacity_bps as f64),
    },
    Gauge {
        name: "csfq_core_arrival_rate_bits_per_second",
        help: "The core's estimate of the aggregate arrival rate A",
        value: |s| s.core.as_ref().map(|c| c.arrival_bps as f64),
    },
    Gauge {
        name: "csfq_core_accepted_rate_bits_per_second",
        help: "The core's estimate of the rate it forwards F",
        value: |s| s.core.as_ref().map(|c| c.accepted_bps as f64),
    },
    Gauge {
        name: "csfq_core_fair_share_bits_per_second",
        help: "The core's fair share alpha (0 while not congested)",
        value: |s| s.core.as_ref().map(|c| c.alpha_bps as f64),
    },
    Gauge {
        name: "csfq_core_congested",
        help: "1 while the core is in a congested window",
        value: |s| s.core.as_ref().map(|c| f64::from(u8::from(c.congested))),
    },
    Gauge {
        name: "csfq_core_virtual_queue_bytes",
        help: "The core's virtual queue",
        value: |s| s.core.as_ref().map(|c| c.queue_bytes as f64),
    },
    Gauge {
        name: "csfq_edge_flows",
        help: "Flows in the edge's table",
        value: |s| s.edge.as_ref().map(|e| e.flows as f64),
    },
    Gauge {
        name: "csfq_edge_averaging_seconds",
        help: "The edge's averaging constant K of Eq. (3)",
        value: |s| s.edge.as_ref().map(|e| e.k_ns as f64 / 1e9),
    },
];

/// Reads the maps at every scrape.
#[derive(Debug)]
struct Dataplane {
    /// Where the numbers come from (the pinned maps; a fixed list in tests).
    read: fn() -> Result<Vec<InterfaceStats>, csfq_dp::DpError>,
}

impl Collector for Dataplane {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let (up, stats) = match (self.read)() {
            Ok(s) => (1i64, s),
            Err(_) => (0, Vec::new()),
        };
        let g = ConstGauge::new(up);
        let m = encoder.encode_descriptor(
            "csfq_dataplane_up",
            "1 if csfq's pinned maps could be read",
            None,
            g.metric_type(),
        )?;
        g.encode(m)?;
        for (name, help, bytes) in [
            (
                "csfq_packets",
                "Packets by what the program did with them",
                false,
            ),
            (
                "csfq_bytes",
                "Bytes by what the program did with them",
                true,
            ),
        ] {
            let mut family = encoder.encode_descriptor(
                name,
                help,
                None,
                ConstCounter::new(0u64).metric_type(),
            )?;
            for s in &stats {
                for (counter, c) in &s.counters {
                    let mut l = labels(s);
                    l.push(("counter", Cow::Borrowed(counter)));
                    let v = ConstCounter::new(if bytes { c.bytes } else { c.packets });
                    v.encode(family.encode_family(&l)?)?;
                }
            }
        }
        for gauge in &GAUGES {
            let mut family = encoder.encode_descriptor(
                gauge.name,
                gauge.help,
                None,
                ConstGauge::new(0.0f64).metric_type(),
            )?;
            for s in &stats {
                if let Some(v) = (gauge.value)(s) {
                    ConstGauge::new(v).encode(family.encode_family(&labels(s))?)?;
                }
            }
        }
        Ok(())
    }
}

/// The metrics page, from `read`.
fn render(read: fn() -> Result<Vec<InterfaceStats>, csfq_dp::DpError>) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Dataplane { read }));
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, &registry)
        .expect("writing to a String does not fail");
    out
}

const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Serves `/metrics` on `listen` until the process is stopped.
pub fn serve(listen: std::net::SocketAddr) -> Result<()> {
    csfq_dp::stats().context("the exporter reads csfq's pinned maps")?;
    let server = tiny_http::Server::http(listen)
        .map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))?;
    let addr = server.server_addr();
    println!("serving csfq dataplane metrics on http://{addr}/metrics (Ctrl-C stops)");
    for request in server.incoming_requests() {
        let path = request.url().split('?').next().unwrap_or("");
        let response = match path {
            "/metrics" => tiny_http::Response::from_string(render(csfq_dp::stats))
                .with_header(header("Content-Type", CONTENT_TYPE)),
            "/" => tiny_http::Response::from_string(
                "<html><body><a href=\"/metrics\">csfq dataplane metrics</a></body></html>",
            )
            .with_header(header("Content-Type", "text/html; charset=utf-8")),
            _ => {
                tiny_http::Response::from_string("not found: see /metrics\n").with_status_code(404)
            }
        };
        // A scraper that hangs up early is its own business.
        let _ = request.respond(response);
    }
    Ok(())
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("valid header")
}

#[cfg(test)]
mod tests {
    use super::*;
    use csfq_dp::{CoreStats, CountJson, EdgeStats, Role};
    use std::collections::BTreeMap;

    fn two_programs() -> Result<Vec<InterfaceStats>, csfq_dp::DpError> {
        let count = |packets, bytes| CountJson { packets, bytes };
        Ok(vec![
            InterfaceStats {
                scope: "host".into(),
                interface: "eth0".into(),
                role: Role::Edge,
                counters: BTreeMap::from([("labeled", count(10, 15000))]),
                edge: Some(EdgeStats {
                    flows: 3,
                    k_ns: 100_000_000,
                    unlabelable: "pass",
                    police_rate_bps: 0,
                    police_burst_bytes: 0,
                    flow_key: "5-tuple",
                }),
                core: None,
            },
            InterfaceStats {
                scope: "netns-c1".into(),
                interface: "c1".into(),
                role: Role::Core,
                counters: BTreeMap::from([
                    ("forwarded", count(7, 7000)),
                    ("drop_probabilistic", count(2, 3000)),
                ]),
                edge: None,
                core: Some(CoreStats {
                    capacity_bps: 10_000_000,
                    arrival_bps: 12_000_000,
                    accepted_bps: 9_900_000,
                    alpha_bps: 2_000_000,
                    congested: true,
                    queue_bytes: 4096,
                }),
            },
        ])
    }

    #[test]
    fn metrics_carry_every_counter_and_state_with_their_labels() {
        let page = render(two_programs);
        for line in [
            "csfq_dataplane_up 1",
            "csfq_packets_total{netns=\"\",interface=\"eth0\",role=\"edge\",counter=\"labeled\"} 10",
            "csfq_bytes_total{netns=\"\",interface=\"eth0\",role=\"edge\",counter=\"labeled\"} 15000",
            "csfq_packets_total{netns=\"c1\",interface=\"c1\",role=\"core\",counter=\"drop_probabilistic\"} 2",
            "csfq_core_fair_share_bits_per_second{netns=\"c1\",interface=\"c1\",role=\"core\"} 2000000.0",
            "csfq_core_congested{netns=\"c1\",interface=\"c1\",role=\"core\"} 1.0",
            "csfq_edge_flows{netns=\"\",interface=\"eth0\",role=\"edge\"} 3.0",
            "csfq_edge_averaging_seconds{netns=\"\",interface=\"eth0\",role=\"edge\"} 0.1",
            "# TYPE csfq_packets counter",
            "# EOF",
        ] {
            assert!(page.lines().any(|l| l == line), "no `{line}` in:\n{page}");
        }
        // No core gauge for the edge, no edge gauge for the core.
        assert!(!page.contains("csfq_core_capacity_bits_per_second{netns=\"\""));
        assert!(!page.contains("csfq_edge_flows{netns=\"c1\""));
    }

    #[test]
    fn an_unreadable_dataplane_is_down_not_an_error() {
        let page = render(|| Err(csfq_dp::DpError::NotPermitted("test")));
        assert!(page.lines().any(|l| l == "csfq_dataplane_up 0"), "{page}");
        assert!(!page.contains("csfq_packets_total{"));
    }

    #[test]
    fn the_grafana_dashboard_queries_only_exported_metrics() {
        let page = render(two_programs);
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../contrib/grafana/csfq-dataplane.json"
        );
        let d: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut exprs = 0;
        for panel in d["panels"].as_array().unwrap() {
            for t in panel["targets"].as_array().into_iter().flatten() {
                let expr = t["expr"].as_str().unwrap();
                exprs += 1;
                let names: Vec<&str> = expr
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| w.starts_with("csfq_"))
                    .collect();
                assert!(!names.is_empty(), "{expr}");
                // Counter names it selects by (alternatives of a regex without wildcards).
                let known: Vec<&str> = csfq_dp::abi::Counter::ALL
                    .iter()
                    .map(|c| c.name())
                    .collect();
                for sel in expr.split("counter=").skip(1) {
                    let pattern = sel.trim_start_matches('~').split('"').nth(1).unwrap();
                    for alt in pattern.split('|').filter(|a| !a.contains(".*")) {
                        assert!(known.contains(&alt), "the dashboard selects counter {alt}");
                    }
                }
                for n in names {
                    assert!(
                        page.lines()
                            .any(|l| l.starts_with(&format!("{n}{{"))
                                || l.starts_with(&format!("{n} "))),
                        "the dashboard asks for {n}, which is not exported"
                    );
                }
            }
        }
        assert!(exprs >= 5, "{exprs} queries");
    }
}
