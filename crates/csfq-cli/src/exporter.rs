//! `csfq dp exporter`: the dataplane's counters and the cores' state in the Prometheus
//! text format (OpenMetrics), read from the pinned maps at every scrape.
//!
//! Every series has the labels `netns` (the namespace's name; empty for the host),
//! `interface` and `role` (`edge`, `core`, `may`, `csfne`, `tuf`, `tuf-source`,
//! `loop-ingress` or `loop-egress`; the loops' series also `loop`, its index):
//!
//! | metric | type | what |
//! |---|---|---|
//! | `csfq_packets_total{counter}` | counter | packets by what happened to them (`csfq dp stats`) |
//! | `csfq_bytes_total{counter}` | counter | bytes, likewise |
//! | `csfq_core_capacity_bits_per_second` | gauge | `C` |
//! | `csfq_core_arrival_rate_bits_per_second` | gauge | `A`, the aggregate arrival rate |
//! | `csfq_core_accepted_rate_bits_per_second` | gauge | `F`, the rate it forwards |
//! | `csfq_core_fair_share_bits_per_second` | gauge | `alpha` (0: not congested) |
//! | `csfq_core_idle_seconds` | gauge | time since the virtual queue last emptied (no packet since); `A`, `F`, `alpha` and congested are read as of now, decayed over it |
//! | `csfq_core_congested` | gauge | 1 in a congested window |
//! | `csfq_core_virtual_queue_bytes` | gauge | the virtual queue |
//! | `csfq_core_virtual_queue_limit_bytes` | gauge | its limit (the shaper's, unless given) |
//! | `csfq_core_trusted_interfaces_missing` | gauge | trusted interfaces whose index no interface has now (their labels are not believed); only where the exporter runs in the core's namespace |
//! | `csfq_may_v` | gauge | MAY's `v`: drop probability per unit of a flow's `delta` |
//! | `csfq_may_utilization` | gauge | the last interval's rate into the queue over `C` (or arrivals', as attached) |
//! | `csfq_may_target_utilization` | gauge | `u0`, the utilization `v` steers toward |
//! | `csfq_may_table_entries` | gauge | entries in MAY's table |
//! | `csfq_may_table_live_entries` | gauge | of them, flows that lost a packet within `T0` |
//! | `csfq_csfne_capacity_bits_per_second` | gauge | the CS-FNE core's `C` |
//! | `csfq_csfne_hit_rate_bits_per_second` | gauge | `r_hit`: arrivals that matched the queued packet drawn |
//! | `csfq_csfne_miss_rate_bits_per_second` | gauge | `r_miss` |
//! | `csfq_csfne_active_flows` | gauge | `N_act = (r_hit + r_miss) / r_hit` |
//! | `csfq_csfne_threshold_rate_bits_per_second` | gauge | `CL = C / N_act` |
//! | `csfq_csfne_virtual_queue_bytes` | gauge | the virtual queue |
//! | `csfq_csfne_trusted_interfaces_missing` | gauge | as the core's |
//! | `csfq_tuf_threshold_tag` | gauge | the TUF core's threshold: the highest tag that passes (2047: all) |
//! | `csfq_tuf_threshold_bits_per_second` | gauge | that tag's least rate |
//! | `csfq_tuf_untagged_rate_bits_per_second` | gauge | the untagged traffic's rate |
//! | `csfq_tuf_virtual_queue_bytes` | gauge | the virtual queue |
//! | `csfq_tuf_trusted_interfaces_missing` | gauge | as the core's |
//! | `csfq_tuf_source_sockets` | gauge | sockets the TUF source tagger holds |
//! | `csfq_loop_rate_bits_per_second` | gauge | an overlay loop's shaper rate `lambda` (ingress) |
//! | `csfq_loop_output_rate_bits_per_second` | gauge | its last `mu(k)` |
//! | `csfq_loop_accumulation_bytes` | gauge | its last `a(k)` |
//! | `csfq_loop_epochs_total` | counter | congestion epochs entered (ingress); resynchronizations (egress) |
//! | `csfq_loop_daemon_up` | gauge | 1 while the loop's daemon publishes |
//! | `csfq_edge_flows` | gauge | flows in the edge's table |
//! | `csfq_edge_averaging_seconds` | gauge | the edge's `K` |
//! | `csfq_dataplane_up` | gauge | 1 if the maps could be read |
//! | `csfq_stale_attachments` | gauge | attachments whose interface or namespace is gone (left out of the rest) |

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

const GAUGES: [Gauge; 29] = [
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
        name: "csfq_core_idle_seconds",
        help: "Time since the core's virtual queue last emptied (no packet since; the last is at most one queue drain older); A, F and alpha are read as of now, decayed over it",
        value: |s| s.core.as_ref().map(|c| c.idle_ns as f64 / 1e9),
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
        name: "csfq_core_virtual_queue_limit_bytes",
        help: "The core's virtual queue limit: the shaper's, read at attach unless given",
        value: |s| s.core.as_ref().map(|c| c.limit_bytes as f64),
    },
    Gauge {
        name: "csfq_core_trusted_interfaces_missing",
        help: "Trusted interfaces, by the index the core holds, that no interface has now: their labels are not believed (attach again, or attach with --follow)",
        value: |s| {
            s.core
                .as_ref()
                .filter(|c| !c.site.trusted_now.is_empty())
                .map(|c| c.site.trusted_now.iter().filter(|t| t.1.is_none()).count() as f64)
        },
    },
    Gauge {
        name: "csfq_may_v",
        help: "MAY's v: the drop probability per unit of a flow's average drops delta",
        value: |s| s.may.as_ref().map(|m| m.v),
    },
    Gauge {
        name: "csfq_may_utilization",
        help: "MAY's utilization over its last interval: the bytes it passed (or every arrival, as attached) over C",
        value: |s| s.may.as_ref().map(|m| m.utilization),
    },
    Gauge {
        name: "csfq_may_target_utilization",
        help: "MAY's u0: the utilization its v steers toward",
        value: |s| s.may.as_ref().map(|m| m.target_utilization),
    },
    Gauge {
        name: "csfq_may_table_entries",
        help: "Entries in MAY's table of flows that lost a packet",
        value: |s| s.may.as_ref().map(|m| m.table_entries as f64),
    },
    Gauge {
        name: "csfq_may_table_live_entries",
        help: "Entries of MAY's table whose flow lost a packet within T0",
        value: |s| s.may.as_ref().map(|m| m.table_live as f64),
    },
    Gauge {
        name: "csfq_csfne_capacity_bits_per_second",
        help: "The CS-FNE core's link rate C",
        value: |s| s.csfne.as_ref().map(|c| c.capacity_bps as f64),
    },
    Gauge {
        name: "csfq_csfne_hit_rate_bits_per_second",
        help: "The CS-FNE core's r_hit: the rate of arrivals that matched the queued packet drawn for them",
        value: |s| s.csfne.as_ref().map(|c| c.hit_bps as f64),
    },
    Gauge {
        name: "csfq_csfne_miss_rate_bits_per_second",
        help: "The CS-FNE core's r_miss: the rate of arrivals that did not",
        value: |s| s.csfne.as_ref().map(|c| c.miss_bps as f64),
    },
    Gauge {
        name: "csfq_csfne_active_flows",
        help: "The CS-FNE core's estimate of the active flows, (r_hit + r_miss) / r_hit",
        value: |s| s.csfne.as_ref().map(|c| c.active_flows),
    },
    Gauge {
        name: "csfq_csfne_threshold_rate_bits_per_second",
        help: "The CS-FNE core's threshold rate CL = C / N_act",
        value: |s| s.csfne.as_ref().map(|c| c.cl_bps as f64),
    },
    Gauge {
        name: "csfq_csfne_virtual_queue_bytes",
        help: "The CS-FNE core's virtual queue",
        value: |s| s.csfne.as_ref().map(|c| c.queue_bytes as f64),
    },
    Gauge {
        name: "csfq_csfne_trusted_interfaces_missing",
        help: "Trusted interfaces, by the index the CS-FNE core holds, that no interface has now: their labels are not believed (attach again)",
        value: |s| {
            s.csfne
                .as_ref()
                .filter(|c| c.site.trusted_ifindexes.is_some() && !c.site.trusted_now.is_empty())
                .map(|c| c.site.trusted_now.iter().filter(|t| t.1.is_none()).count() as f64)
        },
    },
    Gauge {
        name: "csfq_tuf_threshold_tag",
        help: "The TUF core's threshold: the highest tag that passes (2047: every tag)",
        value: |s| s.tuf.as_ref().map(|c| c.threshold as f64),
    },
    Gauge {
        name: "csfq_tuf_threshold_bits_per_second",
        help: "The least rate of the TUF core's threshold tag",
        value: |s| s.tuf.as_ref().map(|c| c.threshold_bps),
    },
    Gauge {
        name: "csfq_tuf_untagged_rate_bits_per_second",
        help: "The rate of the traffic that reaches the TUF core untagged",
        value: |s| s.tuf.as_ref().map(|c| c.untagged_bps as f64),
    },
    Gauge {
        name: "csfq_tuf_virtual_queue_bytes",
        help: "The TUF core's virtual queue",
        value: |s| s.tuf.as_ref().map(|c| c.queue_bytes as f64),
    },
    Gauge {
        name: "csfq_tuf_trusted_interfaces_missing",
        help: "Trusted interfaces, by the index the TUF core holds, that no interface has now: their tags are not believed (attach again)",
        value: |s| {
            s.tuf
                .as_ref()
                .filter(|c| c.site.trusted_ifindexes.is_some() && !c.site.trusted_now.is_empty())
                .map(|c| c.site.trusted_now.iter().filter(|t| t.1.is_none()).count() as f64)
        },
    },
    Gauge {
        name: "csfq_tuf_source_sockets",
        help: "Sockets the TUF source tagger holds (a counter and its last tag each)",
        value: |s| s.tuf_source.as_ref().map(|c| c.sockets_total as f64),
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

/// A gauge of an overlay loop, labeled by the loop's index.
type LoopGauge = (
    &'static str,
    &'static str,
    fn(&csfq_dp::loops::LoopStats) -> f64,
);

const LOOP_GAUGES: [LoopGauge; 4] = [
    (
        "csfq_loop_rate_bits_per_second",
        "An overlay loop's shaper rate lambda at its ingress (0 at the egress)",
        |l| l.lambda_bps as f64,
    ),
    (
        "csfq_loop_output_rate_bits_per_second",
        "An overlay loop's last output rate mu(k), measured at its egress",
        |l| l.mu_bps as f64,
    ),
    (
        "csfq_loop_accumulation_bytes",
        "An overlay loop's last accumulation a(k): its bytes queued inside the network",
        |l| l.accumulation_bytes as f64,
    ),
    (
        "csfq_loop_daemon_up",
        "1 while the overlay loop's daemon publishes its state",
        |l| f64::from(u8::from(l.daemon_running)),
    ),
];

/// Reads the maps at every scrape.
#[derive(Debug)]
struct Dataplane {
    /// Where the numbers come from (the pinned maps; a fixed list in tests).
    read: fn() -> Result<Vec<InterfaceStats>, csfq_dp::SysError>,
}

impl Collector for Dataplane {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let (up, mut stats) = match (self.read)() {
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
        // A stale attachment runs nowhere: its frozen numbers would read as a live core's.
        let stale = stats.iter().filter(|s| s.stale).count();
        stats.retain(|s| !s.stale);
        let g = ConstGauge::new(stale as i64);
        let m = encoder.encode_descriptor(
            "csfq_stale_attachments",
            "Attachments whose interface or namespace is gone (csfq dp detach --stale)",
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
        let loops = || {
            stats.iter().flat_map(|s| {
                s.loops.iter().flatten().map(move |l| {
                    let mut lab = labels(s);
                    lab.push(("loop", Cow::Owned(l.index.to_string())));
                    (lab, l)
                })
            })
        };
        for (name, help, value) in &LOOP_GAUGES {
            let mut family = encoder.encode_descriptor(
                name,
                help,
                None,
                ConstGauge::new(0.0f64).metric_type(),
            )?;
            for (lab, l) in loops() {
                ConstGauge::new(value(l)).encode(family.encode_family(&lab)?)?;
            }
        }
        let mut family = encoder.encode_descriptor(
            "csfq_loop_epochs",
            "Congestion epochs an overlay loop entered (ingress); resynchronizations (egress)",
            None,
            ConstCounter::new(0u64).metric_type(),
        )?;
        for (lab, l) in loops() {
            ConstCounter::new(l.epochs).encode(family.encode_family(&lab)?)?;
        }
        Ok(())
    }
}

/// The metrics page, from `read`.
fn render(read: fn() -> Result<Vec<InterfaceStats>, csfq_dp::SysError>) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Dataplane { read }));
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, &registry)
        .expect("writing to a String does not fail");
    out
}

const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The most bytes of a request's head (request line and headers) read before it is
/// refused: a scraper sends a few hundred.
pub const MAX_REQUEST_HEAD: usize = 16 * 1024;

/// The most connections held at once. A connection arriving when all are held evicts the
/// oldest one still sending its request's head (a slow or idle client); where every one
/// is being answered, the newcomer is closed.
pub const MAX_CONNECTIONS: usize = 256;

/// How long a connection may take to send its request's head.
pub const HEAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Serves `/metrics` on `listen` until the process is stopped.
pub fn serve(listen: std::net::SocketAddr) -> Result<()> {
    csfq_dp::stats().context("the exporter reads csfq's pinned maps")?;
    let listener = std::net::TcpListener::bind(listen)
        .with_context(|| format!("cannot listen on {listen}"))?;
    let addr = listener.local_addr()?;
    println!("serving csfq dataplane metrics on http://{addr}/metrics (Ctrl-C stops)");
    serve_on(listener, csfq_dp::stats)
}

/// The metrics page, shared by the scrapes that wait for it: a scrape is answered by the
/// first read of the dataplane that began after it arrived, so scrapes arriving together
/// cost one read (run off the connections' thread), not one each in turn, and no scrape
/// is answered with data older than itself.
struct Pages {
    read: StatsReader,
    latest: tokio::sync::Mutex<Option<(std::time::Instant, bytes::Bytes)>>,
}

impl Pages {
    async fn metrics(&self) -> Option<bytes::Bytes> {
        let arrived = std::time::Instant::now();
        // tokio's mutex is fair: waiters take it in the order they came.
        let mut latest = self.latest.lock().await;
        if let Some((began, page)) = latest.as_ref() {
            if *began >= arrived {
                return Some(page.clone());
            }
        }
        let began = std::time::Instant::now();
        let read = self.read;
        let page = bytes::Bytes::from(
            tokio::task::spawn_blocking(move || render(read))
                .await
                .ok()?,
        );
        *latest = Some((began, page.clone()));
        Some(page)
    }
}

/// Connections still sending their request's head, oldest first: the ones evicted when
/// every slot is held.
#[derive(Default)]
struct Heads {
    next: u64,
    waiting: std::collections::VecDeque<(u64, tokio::task::AbortHandle)>,
}

impl Heads {
    fn done(heads: &std::sync::Mutex<Heads>, id: u64) {
        let mut h = heads.lock().unwrap_or_else(|e| e.into_inner());
        h.waiting.retain(|(i, _)| *i != id);
    }
}

/// Serves on `listen`, reading the dataplane with `read` when scraped. Memory is bounded
/// whatever clients send: at most [`MAX_CONNECTIONS`] at once, each read at most
/// [`MAX_REQUEST_HEAD`] bytes of request head (HTTP 431 beyond) within [`HEAD_TIMEOUT`];
/// slow clients cannot keep a scraper out (the oldest is evicted) and concurrent scrapes
/// share reads ([`Pages`]).
fn serve_on(listener: std::net::TcpListener, read: StatsReader) -> Result<()> {
    use hyper::server::conn::http1;
    use hyper_util::rt::{TokioIo, TokioTimer};
    use std::sync::{Arc, Mutex};

    listener.set_nonblocking(true)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        let pages = Arc::new(Pages {
            read,
            latest: tokio::sync::Mutex::new(None),
        });
        let heads = Arc::new(Mutex::new(Heads::default()));
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(c) => c,
                // Out of descriptors and the like: the next accept may succeed.
                Err(_) => continue,
            };
            let slot = match slots.clone().try_acquire_owned() {
                Ok(slot) => slot,
                Err(_) => {
                    let oldest = heads
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .waiting
                        .pop_front();
                    let Some((_, task)) = oldest else {
                        continue; // every slot is answering: dropping the stream closes it
                    };
                    // The evicted task gives its slot back when the runtime drops it,
                    // at the next turn of this thread.
                    task.abort();
                    match slots.clone().acquire_owned().await {
                        Ok(slot) => slot,
                        Err(_) => continue,
                    }
                }
            };
            let id = {
                let mut h = heads.lock().unwrap_or_else(|e| e.into_inner());
                h.next += 1;
                h.next
            };
            let (pages, served) = (pages.clone(), heads.clone());
            let task = tokio::spawn(async move {
                let own = served.clone();
                let service = hyper::service::service_fn(move |req| {
                    // The head is in: this connection is answered, not evicted.
                    Heads::done(&own, id);
                    let pages = pages.clone();
                    async move {
                        Ok::<_, std::convert::Infallible>(respond(req.uri().path(), &pages).await)
                    }
                });
                // A scraper that hangs up early, or sends too much, is its own business.
                let _ = http1::Builder::new()
                    .max_buf_size(MAX_REQUEST_HEAD)
                    .timer(TokioTimer::new())
                    .header_read_timeout(HEAD_TIMEOUT)
                    .keep_alive(false)
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
                Heads::done(&served, id);
                drop(slot);
            });
            // One thread runs every task: this one cannot have begun before it is listed.
            heads
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .waiting
                .push_back((id, task.abort_handle()));
        }
    })
}

/// How the exporter reads the dataplane (`csfq_dp::stats`, or a stand-in in tests).
type StatsReader = fn() -> Result<Vec<InterfaceStats>, csfq_dp::SysError>;

/// The response to a GET of `path`.
async fn respond(path: &str, pages: &Pages) -> hyper::Response<http_body_util::Full<bytes::Bytes>> {
    let (status, content_type, body) = match path {
        "/metrics" => match pages.metrics().await {
            Some(page) => (200, CONTENT_TYPE, page),
            None => (
                500,
                "text/plain; charset=utf-8",
                bytes::Bytes::from_static(b"the dataplane could not be read\n"),
            ),
        },
        "/" => (
            200,
            "text/html; charset=utf-8",
            bytes::Bytes::from_static(
                b"<html><body><a href=\"/metrics\">csfq dataplane metrics</a></body></html>",
            ),
        ),
        _ => (
            404,
            "text/plain; charset=utf-8",
            bytes::Bytes::from_static(b"not found: see /metrics\n"),
        ),
    };
    hyper::Response::builder()
        .status(status)
        .header("Content-Type", content_type)
        .body(http_body_util::Full::new(body))
        .expect("a valid response")
}

#[cfg(test)]
mod tests {
    use super::*;
    use csfq_dp::{CoreStats, CountJson, EdgeStats, MayStats, Role};
    use std::collections::BTreeMap;

    fn two_programs() -> Result<Vec<InterfaceStats>, csfq_dp::SysError> {
        let count = |packets, bytes| CountJson { packets, bytes };
        Ok(vec![
            InterfaceStats {
                counters: BTreeMap::from([("labeled", count(10, 15000))]),
                edge: Some(EdgeStats {
                    flows: 3,
                    k_ns: 100_000_000,
                    unlabelable: "pass",
                    police_rate_bps: 0,
                    police_burst_bytes: 0,
                    flow_key: "5-tuple",
                    clock: "fine",
                    source_filter: false,
                    meter: "eq3",
                    tuf: false,
                    keep_source_tags: false,
                }),
                ..InterfaceStats::empty("host", "eth0", Role::Edge)
            },
            InterfaceStats {
                counters: BTreeMap::from([
                    ("forwarded", count(7, 7000)),
                    ("drop_csfq_prob", count(2, 3000)),
                ]),
                core: Some(CoreStats {
                    capacity_bps: 10_000_000,
                    arrival_bps: 12_000_000,
                    accepted_bps: 9_900_000,
                    alpha_bps: 2_000_000,
                    idle_ns: 0,
                    clock: "fine",
                    congested: true,
                    queue_bytes: 4096,
                    limit_bytes: 65536,
                    site: csfq_dp::CoreSite {
                        shaper_now: None,
                        trusted_ifindexes: Some(vec![2]),
                        trusted_now: Vec::new(),
                        drop_unparsed: false,
                    },
                }),
                ..InterfaceStats::empty("netns-c1", "c1", Role::Core)
            },
            InterfaceStats {
                counters: BTreeMap::from([
                    ("forwarded", count(90, 90000)),
                    ("drop_may_history", count(4, 6000)),
                ]),
                may: Some(MayStats {
                    capacity_bps: 10_000_000,
                    v: 0.25,
                    utilization: 1.5,
                    target_utilization: 0.98,
                    utilization_counts: "arrivals",
                    ceiling: true,
                    interval_ns: 1_000_000_000,
                    intervals: 12,
                    table_entries: 5,
                    table_live: 4,
                    table_size: 65536,
                    clock: "fine",
                }),
                ..InterfaceStats::empty("netns-m1", "m1", Role::May)
            },
            InterfaceStats {
                counters: BTreeMap::new(),
                loops: Some(vec![csfq_dp::loops::LoopStats {
                    index: 1,
                    lambda_bps: 4_500_000,
                    mu_bps: 4_800_000,
                    accumulation_bytes: 3028,
                    epochs: 7,
                    in_epoch: true,
                    feedbacks: 900,
                    controls: 901,
                    lost_bytes: 0,
                    packets: 100,
                    bytes: 150_000,
                    pid: 42,
                    daemon_running: true,
                }]),
                ..InterfaceStats::empty("netns-e1", "e1", Role::LoopIngress)
            },
            InterfaceStats {
                counters: BTreeMap::from([("drop_csfne_prob", count(3, 4500))]),
                csfne: Some(csfq_dp::CsfneStats {
                    capacity_bps: 10_000_000,
                    hit_bps: 2_500_000,
                    miss_bps: 7_500_000,
                    active_flows: 4.0,
                    cl_bps: 2_500_000,
                    k_ns: 100_000_000,
                    target_bytes: 16_000,
                    queue_bytes: 20_000,
                    limit_bytes: 65_536,
                    ring: 4096,
                    ring_queued: 14,
                    admitted: 1000,
                    clock: "fine",
                    site: csfq_dp::CoreSite {
                        shaper_now: None,
                        trusted_ifindexes: None,
                        trusted_now: Vec::new(),
                        drop_unparsed: false,
                    },
                }),
                ..InterfaceStats::empty("netns-f1", "f1", Role::Csfne)
            },
            InterfaceStats {
                counters: BTreeMap::from([("drop_tuf_highest_tag", count(5, 7500))]),
                tuf: Some(csfq_dp::TufStats {
                    capacity_bps: 10_000_000,
                    threshold: 1200,
                    threshold_bps: csfq_algo::tuf::rate_of_tag(1200),
                    window_ns: 100_000_000,
                    windows: 30,
                    untagged_bps: 0,
                    queue_bytes: 3000,
                    limit_bytes: 65_536,
                    clock: "fine",
                    site: csfq_dp::CoreSite {
                        shaper_now: None,
                        trusted_ifindexes: None,
                        trusted_now: Vec::new(),
                        drop_unparsed: false,
                    },
                }),
                ..InterfaceStats::empty("netns-t1", "t1", Role::Tuf)
            },
        ])
    }

    /// The two programs, and a core whose namespace was deleted under it.
    fn with_a_stale_core() -> Result<Vec<InterfaceStats>, csfq_dp::SysError> {
        let mut v = two_programs()?;
        let mut gone = v[1].clone();
        gone.scope = "netns-gone".into();
        gone.interface = "g0".into();
        gone.stale = true;
        v.push(gone);
        Ok(v)
    }

    /// A stale attachment is counted, and its frozen numbers are left out: they would read
    /// as a live core's.
    #[test]
    fn stale_attachments_are_counted_not_shown() {
        let page = render(with_a_stale_core);
        assert!(page.contains("csfq_stale_attachments 1"), "{page}");
        assert!(!page.contains("netns=\"gone\""), "{page}");
        assert!(page.contains("netns=\"c1\""), "{page}");
        assert!(render(two_programs).contains("csfq_stale_attachments 0"));
    }

    #[test]
    fn metrics_carry_every_counter_and_state_with_their_labels() {
        let page = render(two_programs);
        for line in [
            "csfq_dataplane_up 1",
            "csfq_packets_total{netns=\"\",interface=\"eth0\",role=\"edge\",counter=\"labeled\"} 10",
            "csfq_bytes_total{netns=\"\",interface=\"eth0\",role=\"edge\",counter=\"labeled\"} 15000",
            "csfq_packets_total{netns=\"c1\",interface=\"c1\",role=\"core\",counter=\"drop_csfq_prob\"} 2",
            "csfq_core_fair_share_bits_per_second{netns=\"c1\",interface=\"c1\",role=\"core\"} 2000000.0",
            "csfq_core_congested{netns=\"c1\",interface=\"c1\",role=\"core\"} 1.0",
            "csfq_edge_flows{netns=\"\",interface=\"eth0\",role=\"edge\"} 3.0",
            "csfq_edge_averaging_seconds{netns=\"\",interface=\"eth0\",role=\"edge\"} 0.1",
            "csfq_packets_total{netns=\"m1\",interface=\"m1\",role=\"may\",counter=\"drop_may_history\"} 4",
            "csfq_may_v{netns=\"m1\",interface=\"m1\",role=\"may\"} 0.25",
            "csfq_may_utilization{netns=\"m1\",interface=\"m1\",role=\"may\"} 1.5",
            "csfq_may_target_utilization{netns=\"m1\",interface=\"m1\",role=\"may\"} 0.98",
            "csfq_may_table_entries{netns=\"m1\",interface=\"m1\",role=\"may\"} 5.0",
            "csfq_may_table_live_entries{netns=\"m1\",interface=\"m1\",role=\"may\"} 4.0",
            "csfq_loop_rate_bits_per_second{netns=\"e1\",interface=\"e1\",role=\"loop-ingress\",loop=\"1\"} 4500000.0",
            "csfq_loop_output_rate_bits_per_second{netns=\"e1\",interface=\"e1\",role=\"loop-ingress\",loop=\"1\"} 4800000.0",
            "csfq_loop_accumulation_bytes{netns=\"e1\",interface=\"e1\",role=\"loop-ingress\",loop=\"1\"} 3028.0",
            "csfq_loop_daemon_up{netns=\"e1\",interface=\"e1\",role=\"loop-ingress\",loop=\"1\"} 1.0",
            "csfq_loop_epochs_total{netns=\"e1\",interface=\"e1\",role=\"loop-ingress\",loop=\"1\"} 7",
            "csfq_packets_total{netns=\"f1\",interface=\"f1\",role=\"csfne\",counter=\"drop_csfne_prob\"} 3",
            "csfq_csfne_active_flows{netns=\"f1\",interface=\"f1\",role=\"csfne\"} 4.0",
            "csfq_csfne_threshold_rate_bits_per_second{netns=\"f1\",interface=\"f1\",role=\"csfne\"} 2500000.0",
            "csfq_csfne_hit_rate_bits_per_second{netns=\"f1\",interface=\"f1\",role=\"csfne\"} 2500000.0",
            "csfq_tuf_threshold_tag{netns=\"t1\",interface=\"t1\",role=\"tuf\"} 1200.0",
            "csfq_packets_total{netns=\"t1\",interface=\"t1\",role=\"tuf\",counter=\"drop_tuf_highest_tag\"} 5",
            "# TYPE csfq_packets counter",
            "# EOF",
        ] {
            assert!(page.lines().any(|l| l == line), "no `{line}` in:\n{page}");
        }
        // No core gauge for the edge, no edge gauge for the core.
        assert!(!page.contains("csfq_core_capacity_bits_per_second{netns=\"\""));
        assert!(!page.contains("csfq_edge_flows{netns=\"c1\""));
        assert!(!page.contains("csfq_may_v{netns=\"c1\""));
    }

    /// A trusted interface the core holds by an index no interface has now is counted; a
    /// core whose interfaces cannot be looked up from here (the exporter in another
    /// namespace) has no such series rather than a 0 that would mean "all present".
    #[test]
    fn a_missing_trusted_interface_is_a_gauge() {
        fn missing() -> Result<Vec<InterfaceStats>, csfq_dp::SysError> {
            let mut v = two_programs()?;
            let core = v[1].core.as_mut().unwrap();
            core.site.trusted_ifindexes = Some(vec![2, 3]);
            core.site.trusted_now = vec![(2, None), (3, Some("c3".into()))];
            Ok(v)
        }
        let line =
            "csfq_core_trusted_interfaces_missing{netns=\"c1\",interface=\"c1\",role=\"core\"} 1.0";
        let page = render(missing);
        assert!(page.lines().any(|l| l == line), "{page}");
        assert!(!render(two_programs).contains("csfq_core_trusted_interfaces_missing{"));
    }

    #[test]
    fn an_unreadable_dataplane_is_down_not_an_error() {
        let page = render(|| Err(csfq_dp::SysError::NotPermitted("test")));
        assert!(page.lines().any(|l| l == "csfq_dataplane_up 0"), "{page}");
        assert!(!page.contains("csfq_packets_total{"));
    }

    /// [`two_programs`] with a trusted interface of each core (CSFQ, CS-FNE, TUF) gone: every
    /// series the exporter can write.
    fn trusted_gone() -> Result<Vec<InterfaceStats>, csfq_dp::SysError> {
        let mut v = two_programs()?;
        let gone = || (Some(vec![2]), vec![(2, None)]);
        for s in &mut v {
            if let Some(c) = s.core.as_mut() {
                (c.site.trusted_ifindexes, c.site.trusted_now) = gone();
            }
            if let Some(c) = s.csfne.as_mut() {
                (c.site.trusted_ifindexes, c.site.trusted_now) = gone();
            }
            if let Some(c) = s.tuf.as_mut() {
                (c.site.trusted_ifindexes, c.site.trusted_now) = gone();
            }
        }
        Ok(v)
    }

    /// Every metric a query names is exported (by the fixture's page, which has every
    /// program), and every counter it selects by name exists.
    fn check_query(expr: &str, page: &str) {
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
                assert!(known.contains(&alt), "{expr} selects counter {alt}");
            }
        }
        for n in names {
            assert!(
                page.lines()
                    .any(|l| l.starts_with(&format!("{n}{{")) || l.starts_with(&format!("{n} "))),
                "{expr} asks for {n}, which is not exported"
            );
        }
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
                check_query(t["expr"].as_str().unwrap(), &page);
                exprs += 1;
            }
        }
        assert!(exprs >= 5, "{exprs} queries");
        // Every program has a panel.
        for prefix in [
            "csfq_core_",
            "csfq_edge_",
            "csfq_may_",
            "csfq_csfne_",
            "csfq_tuf_",
            "csfq_loop_",
        ] {
            assert!(
                d["panels"].to_string().contains(prefix),
                "no panel shows {prefix}*"
            );
        }
    }

    /// The alerting rules in `contrib/prometheus` query only exported metrics and known
    /// counters, each rule an alert with an expression and a summary.
    #[test]
    fn the_alert_rules_query_only_exported_metrics() {
        let page = render(trusted_gone);
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../contrib/prometheus/csfq-alerts.yml"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let field = |key: &str| -> Vec<String> {
            text.lines()
                .filter_map(|l| l.trim_start().strip_prefix(key))
                .map(|v| v.trim().to_string())
                .collect()
        };
        let (alerts, exprs, summaries) = (field("- alert: "), field("expr: "), field("summary: "));
        assert!(alerts.len() >= 5, "{alerts:?}");
        assert_eq!(alerts.len(), exprs.len());
        assert_eq!(alerts.len(), summaries.len());
        for e in &exprs {
            check_query(e, &page);
            // `and`/`or` between series of different label sets match nothing unless told
            // which labels to match on.
            if e.contains(" and ") && e.contains("csfq_packets_total") {
                assert!(e.contains(" and on ("), "{e}");
            }
        }
    }

    /// One request on a fresh connection: the response's status line and body.
    fn ask(addr: std::net::SocketAddr, request: &[u8]) -> (String, String) {
        use std::io::{Read, Write};
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        // The server may answer and close before the whole request is written.
        let _ = c.write_all(request);
        let mut got = Vec::new();
        let _ = c.read_to_end(&mut got);
        let got = String::from_utf8_lossy(&got).into_owned();
        let (head, body) = got.split_once("\r\n\r\n").unwrap_or((&got, ""));
        (
            head.lines().next().unwrap_or("").to_string(),
            body.to_string(),
        )
    }

    /// A connection that sends the start of a request's head, then nothing.
    fn slow_client(addr: std::net::SocketAddr) -> std::net::TcpStream {
        use std::io::Write;
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.write_all(b"GET /metrics HTTP/1.1\r\n").unwrap();
        c
    }

    /// More slow clients than the exporter holds connections do not keep a scraper out:
    /// it was refused (closed at once) until they timed out, HEAD_TIMEOUT later. Here it
    /// is answered within half that, and the exporter still holds at most
    /// MAX_CONNECTIONS: the oldest slow clients were closed to make room.
    #[test]
    fn slow_clients_do_not_keep_a_scraper_out() {
        use std::io::Read;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || serve_on(listener, two_programs));
        let extra = 44;
        let slow: Vec<_> = (0..MAX_CONNECTIONS + extra)
            .map(|_| slow_client(addr))
            .collect();
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(HEAD_TIMEOUT / 2)).unwrap();
        use std::io::Write;
        c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut got = Vec::new();
        let _ = c.read_to_end(&mut got);
        let got = String::from_utf8_lossy(&got);
        assert!(
            got.starts_with("HTTP/1.1 200") && got.contains("# EOF"),
            "the scrape got {:?}",
            &got[..got.len().min(200)]
        );
        let closed = slow
            .iter()
            .filter(|c| {
                c.set_nonblocking(true).unwrap();
                let mut b = [0u8; 1];
                let mut c: &std::net::TcpStream = c;
                match c.read(&mut b) {
                    Ok(0) => true,
                    Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
                    Ok(_) => false,
                }
            })
            .count();
        assert!(
            closed > extra && slow.len() - closed < MAX_CONNECTIONS,
            "{closed} of {} slow clients closed",
            slow.len()
        );
    }

    static SLOW_READS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// A dataplane that takes half a second to read.
    fn slow_read() -> Result<Vec<InterfaceStats>, csfq_dp::SysError> {
        SLOW_READS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(500));
        two_programs()
    }

    /// 200 scrapes at once of a dataplane that takes 0.5 s to read are all answered
    /// within each client's 20 s: one at a time they took 100 s. They share reads.
    #[test]
    fn concurrent_scrapes_share_reads() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || serve_on(listener, slow_read));
        let scrapes: Vec<_> = (0..200)
            .map(|_| {
                std::thread::spawn(move || ask(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"))
            })
            .collect();
        for s in scrapes {
            let (status, body) = s.join().unwrap();
            assert!(
                status.contains(" 200") && body.contains("# EOF"),
                "{status}"
            );
        }
        let reads = SLOW_READS.load(std::sync::atomic::Ordering::SeqCst);
        eprintln!("200 scrapes, {reads} reads of the dataplane");
        assert!(reads < 40, "{reads} reads");
    }

    /// The server answers scrapes; a request whose head is larger than
    /// MAX_REQUEST_HEAD (here 1 MiB of one header) is refused with 431, not buffered, and
    /// the server answers the next scrape as before.
    #[test]
    fn oversized_requests_are_refused_and_scrapes_go_on() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || serve_on(listener, two_programs));
        let (status, body) = ask(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(status.contains(" 200"), "{status}");
        assert!(body.contains("csfq_dataplane_up 1"), "{body}");
        let mut big = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: ".to_vec();
        big.resize(big.len() + (1 << 20), b'a');
        big.extend_from_slice(b"\r\n\r\n");
        let (status, _) = ask(addr, &big);
        assert!(status.contains(" 431"), "{status}");
        let (status, _) = ask(addr, b"GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(status.contains(" 404"), "{status}");
        let (status, body) = ask(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(
            status.contains(" 200") && body.contains("# EOF"),
            "{status}"
        );
    }
}
