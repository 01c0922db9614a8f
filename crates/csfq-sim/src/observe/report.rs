//! What a run produces: per-flow and per-link results, serializable to JSON and CSV.

use csfq_algo::DropReason;
use serde::{Deserialize, Deserializer, Serialize};

use crate::observe::delay::{DelayHistogram, DelayReport, DelayStats};

/// A name the simulator fixes (a flow kind, a discipline, a drop reason, a loop service).
/// An alias, not `&'static str` written out: serde would then read it only from input that
/// lives for ever, where a stored report is read from a file.
pub type Name = &'static str;

/// Every name a report's `&'static str` fields hold (flow kinds, disciplines, drop
/// reasons, loop services), so that a report read back (a stored run) holds the same.
fn known_name(s: &str) -> Option<&'static str> {
    use crate::kinds::{DisciplineKind, FlowKind};
    const KINDS: [FlowKind; 5] = [
        FlowKind::Udp,
        FlowKind::Onoff,
        FlowKind::Tcp,
        FlowKind::Web,
        FlowKind::Rlm,
    ];
    KINDS
        .iter()
        .map(|k| k.name())
        .chain(DisciplineKind::ALL.iter().map(|d| d.name()))
        .chain(DropReason::ALL.iter().map(|r| r.name()))
        .chain(["best-effort", "assured", "quasi-leased"])
        .find(|n| *n == s)
}

fn static_name<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let s = String::deserialize(d)?;
    known_name(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown name `{s}`")))
}

fn static_drops<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(&'static str, u64)>, D::Error> {
    Vec::<(String, u64)>::deserialize(d)?
        .into_iter()
        .map(|(s, n)| {
            known_name(&s)
                .map(|k| (k, n))
                .ok_or_else(|| serde::de::Error::custom(format!("unknown drop reason `{s}`")))
        })
        .collect()
}

/// One flow's results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FlowReport {
    /// Flow index (0-based, in file order).
    pub flow: u32,
    /// udp, onoff or tcp.
    #[serde(deserialize_with = "static_name")]
    pub kind: Name,
    /// Source router.
    pub src: String,
    /// Destination router.
    pub dst: String,
    /// Offered rate for udp/onoff (while ON), Mbit/s; none for tcp.
    pub offered_mbps: Option<f64>,
    /// CSFQ weight.
    pub weight: f64,
    /// Delivered (unique, in-order for TCP) payload over the flow's active time, Mbit/s.
    pub throughput_mbps: f64,
    /// Data packets sent (TCP: retransmissions included).
    pub sent_pkts: u64,
    /// Data packets delivered (TCP: unique segments delivered in order).
    pub delivered_pkts: u64,
    /// Data packets dropped, all reasons.
    pub dropped_pkts: u64,
    /// Data drops by reason name (see `csfq_algo::DropReason::name`); zero counts omitted.
    #[serde(deserialize_with = "static_drops")]
    pub drops: Vec<(Name, u64)>,
    /// ACKs dropped (TCP).
    pub ack_drops: u64,
    /// Segments of a finite TCP transfer (tcp with `size_pkts`, web).
    pub size_pkts: Option<u32>,
    /// Flow completion time of a finite transfer, s: from its start to the ACK of its
    /// last segment; none if it did not finish.
    pub fct_s: Option<f64>,
    /// TCP retransmissions.
    pub retransmits: u64,
    /// TCP retransmission timeouts.
    pub timeouts: u64,
    /// Throughput in each sample interval, Mbit/s.
    pub series_mbps: Vec<f64>,
    /// Delay of the data packets that reached the destination; none if none did.
    pub delay: Option<DelayReport>,
    /// Their queueing delay as a histogram (add the flow's base delay, `one_way_ms.mean -
    /// queueing_ms.mean`, for one-way delay); none if none did. Not in `summary.json`
    /// (a flow's can hold hundreds of buckets): in `delays.csv` ([`SimReport::delays_csv`]).
    #[serde(skip)]
    pub queueing_histogram: Option<DelayHistogram>,
}

/// One direction of a link.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LinkReport {
    /// Sending router.
    pub from: String,
    /// Receiving router.
    pub to: String,
    /// Discipline.
    #[serde(deserialize_with = "static_name")]
    pub discipline: Name,
    /// Capacity, Mbit/s.
    pub rate_mbps: f64,
    /// Packets transmitted.
    pub tx_pkts: u64,
    /// Utilization over the run, 0..1.
    pub utilization: f64,
    /// Packets dropped here (data and ACKs).
    pub dropped_pkts: u64,
    /// Mean queue over the samples, bytes.
    pub mean_queue_bytes: f64,
    /// The most packets queued at once.
    pub peak_queue_pkts: u64,
    /// Time packets spent in the queue, enqueue to start of transmission, ms; none if no
    /// packet was sent.
    pub sojourn_ms: Option<DelayStats>,
    /// The same as a histogram (bucket edges and counts), for distributions; merges with
    /// other links' and other seeds' of the same precision.
    #[serde(rename = "sojourn_histogram")]
    pub sojourn: DelayHistogram,
    /// Queue at each sample, bytes.
    pub queue_bytes: Vec<u32>,
    /// Fair-share estimate at each sample, Mbit/s: CSFQ's `alpha`, CS-FNE's `C/N_act`,
    /// MAY's `1/v` (0 while `v` is 0); empty for other disciplines.
    pub alpha_mbps: Vec<f64>,
    /// MAY: entries in the table at each sample (10 bytes each in the paper's layout).
    pub table_entries: Vec<u32>,
    /// MAY: what the table did over the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub may: Option<MayTableReport>,
}

/// A MAY table over a run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct MayTableReport {
    /// Flows entered.
    pub inserts: u64,
    /// Inserts refused because the table was full.
    pub refused_full: u64,
    /// Entries removed after `T0` without a drop.
    pub expired: u64,
    /// The most entries held at once.
    pub peak_entries: u64,
    /// The same in bytes, at the paper's 10 bytes per entry.
    pub peak_bytes: u64,
}

/// A whole run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SimReport {
    /// Scenario name.
    pub scenario: String,
    /// The default discipline it ran with.
    #[serde(deserialize_with = "static_name")]
    pub discipline: Name,
    /// Seed.
    pub seed: u64,
    /// Simulated time, s.
    pub duration_s: f64,
    /// Sample interval of the series, s.
    pub sample_interval_s: f64,
    /// Per flow.
    pub flows: Vec<FlowReport>,
    /// Router-to-router link directions that some flow or loop crosses.
    pub links: Vec<LinkReport>,
    /// The other router-to-router link directions, as `[from, to]`: nothing crosses them,
    /// so nothing is recorded there (in a topology of thousands of routers with a few
    /// flows, most of its links).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unused_links: Vec<[String; 2]>,
    /// Jain's index of the flows' throughputs normalized by their reference shares (per hop
    /// for open-loop flows, end-to-end max-min for responsive ones; see
    /// `Topology::reference_allocation`) where those are known, else of raw throughputs.
    pub jain_index: f64,
    /// Events processed.
    pub events: u64,
    /// Packet transmissions over links (every hop counts).
    pub packet_hops: u64,
    /// Edge-to-edge overlay loops.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loops: Vec<LoopReport>,
}

/// Completion times of the finite transfers whose size falls in one bucket.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FctBucket {
    /// Smallest size, segments.
    pub min_pkts: u32,
    /// Largest size, segments.
    pub max_pkts: u32,
    /// Transfers of that size.
    pub transfers: usize,
    /// Those that did not finish before the run ended (left out of the statistics).
    pub unfinished: usize,
    /// Mean completion time, s.
    pub mean_s: f64,
    /// Median, s.
    pub median_s: f64,
    /// 99th percentile (nearest rank), s.
    pub p99_s: f64,
}

/// The size buckets of [`SimReport::fct_buckets`], segments: decades, and all sizes.
pub const FCT_BUCKETS: [(u32, u32); 5] = [
    (1, 10),
    (11, 100),
    (101, 1000),
    (1001, u32::MAX),
    (1, u32::MAX),
];

impl SimReport {
    /// Flow completion time statistics of the finite transfers by size bucket (see
    /// [`FCT_BUCKETS`]; the last bucket holds every transfer). Empty buckets are left out.
    pub fn fct_buckets(&self) -> Vec<FctBucket> {
        FCT_BUCKETS
            .iter()
            .filter_map(|&(lo, hi)| {
                let sized: Vec<&FlowReport> = self
                    .flows
                    .iter()
                    .filter(|f| f.size_pkts.is_some_and(|n| (lo..=hi).contains(&n)))
                    .collect();
                if sized.is_empty() {
                    return None;
                }
                let mut t: Vec<f64> = sized.iter().filter_map(|f| f.fct_s).collect();
                t.sort_by(f64::total_cmp);
                let rank = |q: f64| {
                    if t.is_empty() {
                        f64::NAN
                    } else {
                        t[((q * t.len() as f64).ceil() as usize).clamp(1, t.len()) - 1]
                    }
                };
                Some(FctBucket {
                    min_pkts: lo,
                    max_pkts: hi,
                    transfers: sized.len(),
                    unfinished: sized.len() - t.len(),
                    mean_s: t.iter().sum::<f64>() / t.len().max(1) as f64,
                    median_s: rank(0.5),
                    p99_s: rank(0.99),
                })
            })
            .collect()
    }

    /// `delays.csv`: the delay histograms, one row per bucket with packets: each flow's
    /// queueing delay (`kind` flow, `id` its number, `what` queueing), then each link's
    /// sojourn (`kind` link, `id` `FROM->TO`, `what` sojourn); the bucket `[low_ns,
    /// high_ns)`, its `count`, and the histograms' `relative_error`.
    pub fn delays_csv(&self) -> String {
        let mut out = String::from("kind,id,what,low_ns,high_ns,count,relative_error\n");
        let mut number = itoa::Buffer::new();
        let mut row = |kind: &str, id: &str, what: &str, h: &DelayHistogram| {
            // A histogram's text fields are quoted as CSV needs once, not each of its rows
            // (a run of 1000 flows has some 70 000); its numbers need no quoting.
            let mut w = csv::WriterBuilder::new()
                .terminator(csv::Terminator::Any(b','))
                .from_writer(Vec::new());
            w.write_record([kind, id, what]).expect("writing to memory");
            let head = String::from_utf8(w.into_inner().expect("in memory")).expect("UTF-8 in");
            let e = h.precision().relative_error().to_string();
            for (lo, hi, n) in h.buckets() {
                out.push_str(&head);
                for x in [lo, hi, n] {
                    out.push_str(number.format(x));
                    out.push(',');
                }
                out.push_str(&e);
                out.push('\n');
            }
        };
        for f in &self.flows {
            if let Some(h) = &f.queueing_histogram {
                row("flow", &f.flow.to_string(), "queueing", h);
            }
        }
        for l in &self.links {
            row(
                "link",
                &format!("{}->{}", l.from, l.to),
                "sojourn",
                &l.sojourn,
            );
        }
        out
    }

    /// `flows.csv`: one row per flow, with drops by reason (`drops_NAME`, every reason).
    pub fn flows_csv(&self) -> String {
        self.flows_csv_with(&[])
    }

    /// `flows.csv` with more columns: `(name, one value per flow, bits/s)` printed in
    /// Mbit/s (a non-finite value as an empty cell): the flows' reference shares.
    pub fn flows_csv_with(&self, shares: &[(&str, &[f64])]) -> String {
        // RFC 4180 quoting (a router name may hold a comma or a quote).
        let mut w = csv::Writer::from_writer(Vec::new());
        let header = "flow,kind,src,dst,offered_mbps,weight,throughput_mbps,sent_pkts,delivered_pkts,dropped_pkts,ack_drops,retransmits,timeouts,size_pkts,fct_s,\
                      delay_pkts,delay_mean_ms,delay_p50_ms,delay_p95_ms,delay_p99_ms,delay_max_ms,\
                      queueing_mean_ms,queueing_p50_ms,queueing_p95_ms,queueing_p99_ms,queueing_max_ms,jitter_ms";
        let mut header: Vec<String> = header.split(',').map(String::from).collect();
        header.extend(shares.iter().map(|(name, _)| name.to_string()));
        header.extend(
            DropReason::ALL
                .iter()
                .map(|r| format!("drops_{}", r.name())),
        );
        let rows = std::iter::once(header).chain(self.flows.iter().enumerate().map(|(i, f)| {
            let mut row = vec![
                f.flow.to_string(),
                f.kind.to_string(),
                f.src.clone(),
                f.dst.clone(),
                f.offered_mbps.map_or(String::new(), |r| format!("{r:.6}")),
                f.weight.to_string(),
                format!("{:.6}", f.throughput_mbps),
                f.sent_pkts.to_string(),
                f.delivered_pkts.to_string(),
                f.dropped_pkts.to_string(),
                f.ack_drops.to_string(),
                f.retransmits.to_string(),
                f.timeouts.to_string(),
                f.size_pkts.map_or(String::new(), |n| n.to_string()),
                f.fct_s.map_or(String::new(), |t| format!("{t:.6}")),
            ];
            // Delay columns: empty when no packet arrived.
            match &f.delay {
                Some(d) => {
                    row.push(d.packets.to_string());
                    for s in [d.one_way_ms, d.queueing_ms] {
                        for v in [s.mean, s.p50, s.p95, s.p99, s.max] {
                            row.push(format!("{v:.6}"));
                        }
                    }
                    row.push(format!("{:.6}", d.jitter_ms));
                }
                None => row.extend(std::iter::repeat_n(String::new(), 12)),
            }
            for (_, v) in shares {
                row.push(match v.get(i) {
                    Some(x) if x.is_finite() => format!("{:.6}", x / 1e6),
                    _ => String::new(),
                });
            }
            for r in DropReason::ALL {
                let n = f.drops.iter().find(|(name, _)| *name == r.name());
                row.push(n.map_or(0, |(_, n)| *n).to_string());
            }
            row
        }));
        for row in rows {
            w.write_record(&row).expect("writing to memory");
        }
        String::from_utf8(w.into_inner().expect("writing to memory")).expect("the fields are UTF-8")
    }
}

/// One loop's results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LoopReport {
    /// Name.
    pub name: String,
    /// Ingress router.
    pub ingress: String,
    /// Egress router.
    pub egress: String,
    /// best-effort, assured or quasi-leased.
    #[serde(deserialize_with = "static_name")]
    pub service: Name,
    /// The assured or leased rate, Mbit/s.
    pub rate_mbps: Option<f64>,
    /// `tau = T`, ms.
    pub tau_ms: f64,
    /// Data packets the shaper sent into the network.
    pub sent_pkts: u64,
    /// Data packets the shaper queue dropped at the ingress.
    pub ingress_drops: u64,
    /// The most bytes the shaper queue held.
    pub peak_ingress_queue_bytes: u32,
    /// Data bytes lost inside the network, as the egress learned from control packets.
    pub network_lost_bytes: u64,
    /// Control packets sent / lost in the network.
    pub control_sent: u64,
    /// Control packets lost.
    pub control_lost: u64,
    /// Feedback packets sent.
    pub feedback_sent: u64,
    /// Feedback packets lost.
    pub feedback_lost: u64,
    /// Congestion epochs entered.
    pub epochs: u64,
    /// Re-synchronizations of the egress's intervals.
    pub resyncs: u64,
    /// `lambda`, the shaper's rate, at each sample, Mbit/s.
    pub lambda_mbps: Vec<f64>,
    /// The latest `mu` at each sample, Mbit/s.
    pub mu_mbps: Vec<f64>,
    /// The latest accumulation at each sample, packets.
    pub accumulation_pkts: Vec<f64>,
    /// The shaper queue at each sample, bytes.
    pub ingress_queue_bytes: Vec<u32>,
}

#[cfg(test)]
mod tests {
    use crate::{ScenarioFile, Simulation};

    /// A router name with a comma, quotes and a non-ASCII letter comes back whole from
    /// flows.csv read as CSV (it used to split the row).
    #[test]
    fn flows_csv_quotes_names() {
        let name = "b,\"c\" é";
        let text = format!(
            "name = \"t\"\nduration_s = 0.1\ndiscipline = \"fifo\"\nrouters = [\"a\", {name:?}]\n\
             [[link]]\nbetween = [\"a\", {name:?}]\nrate_mbps = 10\n\
             [[flow]]\nkind = \"udp\"\nfrom = \"a\"\nto = {name:?}\nrate_mbps = 1\n"
        );
        let s = ScenarioFile::parse(&text, std::path::Path::new("t.toml")).unwrap();
        let csv_text = Simulation::new(&s).unwrap().run().flows_csv();
        let mut r = csv::Reader::from_reader(csv_text.as_bytes());
        let header = r.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].len(), header.len());
        let dst = header.iter().position(|h| h == "dst").unwrap();
        assert_eq!(&rows[0][dst], name);
    }
}
