//! The report's section beyond the papers: CSFQ at the scale of a modern network. The
//! scale scenarios (`scenarios/scale-*.toml`) and csfq-fig3a/3b under CSFQ with both
//! estimators (the label histogram, the default; the paper's, with its 100 ms constants),
//! DRR, FQ-CoDel and FIFO; tables of outcomes and plots of `alpha` and the UDP's rate
//! over time.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use csfq_algo::maxmin::jain_index;
use csfq_sim::observe::delay::DelayHistogram;
use csfq_sim::observe::report::LinkReport;
use csfq_sim::{DisciplineKind, ScenarioFile, SimReport, Simulation};
use rayon::prelude::*;

use crate::plot::{Chart, Draw, Series};

/// One way of running a scenario.
#[derive(Clone, Copy, PartialEq)]
enum Scheme {
    CsfqHistogram,
    CsfqPaper,
    Drr,
    FqCodel,
    Fifo,
}

impl Scheme {
    fn name(self) -> &'static str {
        match self {
            Scheme::CsfqHistogram => "CSFQ, histogram estimator",
            Scheme::CsfqPaper => "CSFQ, paper's estimator",
            Scheme::Drr => "DRR",
            Scheme::FqCodel => "FQ-CoDel",
            Scheme::Fifo => "FIFO",
        }
    }

    fn apply(self, s: &ScenarioFile) -> ScenarioFile {
        match self {
            Scheme::CsfqHistogram => {
                let mut s = s.with_discipline(DisciplineKind::Csfq);
                s.csfq.estimator = csfq_sim::config::EstimatorKind::Histogram;
                s
            }
            Scheme::CsfqPaper => {
                let mut s = s.with_discipline(DisciplineKind::Csfq);
                s.csfq = s.csfq.paper();
                s
            }
            Scheme::Drr => s.with_discipline(DisciplineKind::Drr),
            Scheme::FqCodel => s.with_discipline(DisciplineKind::FqCodel),
            Scheme::Fifo => s.with_discipline(DisciplineKind::Fifo),
        }
    }
}

const ALL: [Scheme; 5] = [
    Scheme::CsfqHistogram,
    Scheme::CsfqPaper,
    Scheme::Drr,
    Scheme::FqCodel,
    Scheme::Fifo,
];

/// A scenario of this section and what to show of it.
struct Case {
    id: &'static str,
    /// What changes and when, for the reader.
    what: &'static str,
    /// The UDP's fair share before and after the step (Mbit/s), and the step time (s).
    share: (f64, f64, f64),
    /// Whether flow 0 is the UDP of interest (the others TCP).
    udp_among_tcp: bool,
    /// Whether every TCP runs the whole time, so their Jain index means something.
    tcp_jain: bool,
}

const CASES: [Case; 5] = [
    Case {
        id: "scale-1000",
        what: "1 UDP at 1 Gbit/s and 999 TCP on 1 Gbit/s (1 MB buffer) for 10 s",
        share: (1.0, 1.0, 0.0),
        udp_among_tcp: true,
        tcp_jain: true,
    },
    Case {
        id: "scale-tcp-step",
        what: "as scale-1000, and 500 more TCP flows start at 5 s",
        share: (1.0, 1000.0 / 1500.0, 5.0),
        udp_among_tcp: true,
        tcp_jain: false,
    },
    Case {
        id: "scale-udp-step",
        what: "999 TCP on 1 Gbit/s; the 1 Gbit/s UDP starts at 5 s",
        share: (1.0, 1.0, 5.0),
        udp_among_tcp: true,
        tcp_jain: true,
    },
    Case {
        id: "csfq-fig3a",
        what: "32 UDP at 0.3125 x (i+1) Mbit/s on 10 Mbit/s",
        share: (0.3125, 0.3125, 0.0),
        udp_among_tcp: false,
        tcp_jain: true,
    },
    Case {
        id: "csfq-fig3b",
        what: "1 UDP at 10 Mbit/s and 31 TCP on 10 Mbit/s",
        share: (0.3125, 0.3125, 0.0),
        udp_among_tcp: true,
        tcp_jain: true,
    },
];

fn load(id: &str) -> Result<ScenarioFile> {
    let text = match id {
        "scale-1000" => include_str!("../../../../scenarios/scale-1000.toml"),
        "scale-tcp-step" => include_str!("../../../../scenarios/scale-tcp-step.toml"),
        "scale-udp-step" => include_str!("../../../../scenarios/scale-udp-step.toml"),
        "csfq-fig3a" => include_str!("../../../../scenarios/csfq-fig3a.toml"),
        _ => include_str!("../../../../scenarios/csfq-fig3b.toml"),
    };
    Ok(ScenarioFile::parse(text, &PathBuf::from(format!("scenarios/{id}.toml")))?.into_file())
}

/// The bottleneck: every scenario here has it from r1 to r2.
fn bottleneck(r: &SimReport) -> &LinkReport {
    r.links
        .iter()
        .find(|l| l.from == "r1" && l.to == "r2")
        .unwrap_or(&r.links[0])
}

/// Queueing delay over the packets of a group of flows: the UDP (flow 0) and the TCPs
/// where one UDP runs among TCPs; every flow as one group where all are UDP.
struct Queueing {
    udp: DelayHistogram,
    tcp: Option<DelayHistogram>,
    /// The largest of each group, ns (the histograms' last bucket is open).
    udp_max: u64,
    tcp_max: u64,
}

impl Queueing {
    fn of(sim: &Simulation, udp_among_tcp: bool) -> Self {
        let n = sim.topology().flows.len();
        let mut q = Queueing {
            udp: DelayHistogram::default(),
            tcp: udp_among_tcp.then(DelayHistogram::default),
            udp_max: 0,
            tcp_max: 0,
        };
        for i in 0..n {
            let Some(d) = sim.flow_delay(i) else { continue };
            match &mut q.tcp {
                Some(tcp) if i > 0 => {
                    tcp.merge(&d.queueing);
                    q.tcp_max = q.tcp_max.max(d.max_ns);
                }
                _ => {
                    q.udp.merge(&d.queueing);
                    q.udp_max = q.udp_max.max(d.max_ns);
                }
            }
        }
        q
    }

    /// "p50 / p99" in ms, or "-" with no packets.
    fn cell(h: &DelayHistogram, max: u64) -> String {
        match (h.quantile(0.5, max), h.quantile(0.99, max)) {
            (Some(a), Some(b)) => format!("{:.2} / {:.2}", a as f64 / 1e6, b as f64 / 1e6),
            _ => "-".into(),
        }
    }

    /// The group the delay charts show: the TCPs where a UDP runs among them, else every
    /// flow; with its largest delay.
    fn shown(&self) -> (&DelayHistogram, u64) {
        match &self.tcp {
            Some(tcp) => (tcp, self.tcp_max),
            None => (&self.udp, self.udp_max),
        }
    }

    /// The distribution as a step function (delay ms, fraction of packets at or below
    /// it): the fraction rises at each bucket's value, the one its percentiles report (its
    /// midpoint; the exact maximum for the bucket holding it), so the curve ends at the
    /// largest delay, not at a bucket's edge beyond it.
    fn cdf(h: &DelayHistogram, max: u64) -> Vec<(f64, f64)> {
        let total = h.total().max(1) as f64;
        let mut seen = 0;
        let mut points = vec![(0.0, 0.0)];
        for (b, c) in h.counts() {
            let x = h.value_of(b, max) as f64 / 1e6;
            points.push((x, seen as f64 / total));
            seen += c;
            points.push((x, seen as f64 / total));
        }
        points
    }

    /// The tail: the fraction of packets delayed more than each value, as steps (see
    /// [`Self::cdf`]), down to the last packet's (0 has no place on a log axis).
    fn ccdf(h: &DelayHistogram, max: u64) -> Vec<(f64, f64)> {
        Self::cdf(h, max)
            .into_iter()
            .map(|(x, f)| (x, 1.0 - f))
            .filter(|&(_, above)| above > 0.0)
            .collect()
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The section (Markdown), its figures and `scale/results.csv` under `dir`; the number of
/// runs.
pub fn section(dir: &Path) -> Result<(String, usize)> {
    let jobs: Vec<(usize, Scheme)> = (0..CASES.len())
        .flat_map(|c| ALL.iter().map(move |&s| (c, s)))
        .collect();
    let scenarios: Vec<ScenarioFile> = CASES.iter().map(|c| load(c.id)).collect::<Result<_>>()?;
    let results: Vec<(usize, Scheme, SimReport, f64, Queueing)> = jobs
        .into_par_iter()
        .map(|(c, scheme)| {
            let s = scheme.apply(&scenarios[c]).check()?;
            let started = std::time::Instant::now();
            let mut sim = Simulation::new(&s)?;
            sim.run_until(sim.end());
            let wall = started.elapsed().as_secs_f64();
            let q = Queueing::of(&sim, CASES[c].udp_among_tcp);
            Ok((c, scheme, sim.report(), wall, q))
        })
        .collect::<Result<_>>()?;
    let out = dir.join("scale");
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let mut md = String::new();
    writeln!(md, "\n## CSFQ at scale, beside DRR, FQ-CoDel and FIFO\n")?;
    writeln!(
        md,
        "Beyond the papers: does CSFQ hold a flow to its fair share when a thousand flows \
         share a 1 Gbit/s link, and how fast does it follow a change? Each scenario runs \
         under CSFQ with the label-histogram estimator (the default outside the \
         reproductions: `alpha` solved from a 256-bin histogram of one window's labels, \
         `K_alpha = K_c` scaled to the buffer), CSFQ with the paper's estimator and 100 ms \
         constants (as the reproductions above run it), DRR (per-flow queues), FQ-CoDel \
         (RFC 8290, 1024 hashed buckets, what operators deploy) and FIFO. The UDP's fair \
         share is judged against `C/N`, which long-lived TCPs can all reach. Wall time is \
         one core's.\n"
    )?;
    let mut csv = String::from(
        "scenario,scheme,udp_mean_mbps,udp_settled_mbps,fair_share_mbps,tcp_jain,utilization,\
         tcp_queueing_p50_ms,tcp_queueing_p99_ms,udp_queueing_p50_ms,udp_queueing_p99_ms,wall_s\n",
    );
    for (c, case) in CASES.iter().enumerate() {
        let mine: Vec<&(usize, Scheme, SimReport, f64, Queueing)> =
            results.iter().filter(|r| r.0 == c).collect();
        writeln!(md, "\n### {}\n\n{}.\n", case.id, case.what)?;
        let udp_delay = if case.udp_among_tcp {
            "UDP queueing ms, p50 / p99"
        } else {
            "queueing ms, all packets, p50 / p99"
        };
        writeln!(
            md,
            "| scheme | UDP Mbit/s, mean | UDP Mbit/s, from 1 s after the change | its fair share | TCP Jain | utilization | TCP queueing ms, p50 / p99 | {udp_delay} | wall s |"
        )?;
        writeln!(md, "|---|---|---|---|---|---|---|---|---|")?;
        for (_, scheme, r, wall, q) in &mine {
            let link = bottleneck(r);
            let udp = &r.flows[0];
            let dt = r.sample_interval_s;
            let settle_from = ((case.share.2 + 1.0) / dt).round() as usize;
            let settled = mean(&udp.series_mbps[settle_from.min(udp.series_mbps.len())..]);
            let (udp_mean, settled, jain) = if case.udp_among_tcp {
                let tcp: Vec<f64> = r.flows[1..].iter().map(|f| f.throughput_mbps).collect();
                let jain = if case.tcp_jain {
                    jain_index(&tcp)
                } else {
                    f64::NAN
                };
                (udp.throughput_mbps, settled, jain)
            } else {
                // All flows UDP: Jain over throughput / fair share.
                let x: Vec<f64> = r.flows.iter().map(|f| f.throughput_mbps / 0.3125).collect();
                (f64::NAN, f64::NAN, jain_index(&x))
            };
            let cell = |x: f64| {
                if x.is_nan() {
                    "-".to_string()
                } else {
                    format!("{x:.3}")
                }
            };
            let tcp_q = q
                .tcp
                .as_ref()
                .map_or("-".into(), |h| Queueing::cell(h, q.tcp_max));
            writeln!(
                md,
                "| {} | {} | {} | {} | {} | {:.1}% | {} | {} | {:.2} |",
                scheme.name(),
                cell(udp_mean),
                cell(settled),
                cell(if case.udp_among_tcp {
                    case.share.1
                } else {
                    f64::NAN
                }),
                cell(jain),
                link.utilization * 100.0,
                tcp_q,
                Queueing::cell(&q.udp, q.udp_max),
                wall
            )?;
            let ms = |h: Option<&DelayHistogram>, max: u64, p: f64| {
                h.and_then(|h| h.quantile(p, max))
                    .map_or(f64::NAN, |ns| ns as f64 / 1e6)
            };
            writeln!(
                csv,
                "{},\"{}\",{},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.3}",
                case.id,
                // Quoted: the names hold commas.
                scheme.name(),
                udp_mean,
                settled,
                case.share.1,
                jain,
                link.utilization,
                ms(q.tcp.as_ref(), q.tcp_max, 0.5),
                ms(q.tcp.as_ref(), q.tcp_max, 0.99),
                ms(Some(&q.udp), q.udp_max, 0.5),
                ms(Some(&q.udp), q.udp_max, 0.99),
                wall
            )?;
        }
        // Where latency shows: the queueing delay of the TCPs' packets (of every packet
        // where all flows are UDP), one curve per scheme.
        let cdf = Chart {
            title: format!(
                "{}: queueing delay of {} packets",
                case.id,
                if case.udp_among_tcp { "TCP" } else { "all" }
            ),
            x_label: "queueing delay, sender to receiver (ms)".into(),
            y_label: "fraction of packets delivered with at most that delay".into(),
            series: mine
                .iter()
                .map(|(_, s, _, _, q)| {
                    let (h, max) = q.shown();
                    Series {
                        name: s.name().to_string(),
                        points: Queueing::cdf(h, max),
                        markers: false,
                        line: true,
                    }
                })
                .collect(),
            reference: None,
            log_y: false,
            per_flow: false,
        };
        cdf.write_svg(&out.join(format!("{}-delay-cdf.svg", case.id)))?;
        let ccdf = Chart {
            title: format!("{}: the tail of the same delays", case.id),
            y_label: "fraction of packets delivered with more delay".into(),
            series: mine
                .iter()
                .map(|(_, s, _, _, q)| {
                    let (h, max) = q.shown();
                    Series {
                        name: s.name().to_string(),
                        points: Queueing::ccdf(h, max),
                        markers: false,
                        line: true,
                    }
                })
                .collect(),
            log_y: true,
            ..cdf
        };
        ccdf.write_svg(&out.join(format!("{}-delay-ccdf.svg", case.id)))?;
        writeln!(
            md,
            "\n![{0}: queueing delay CDF](scale/{0}-delay-cdf.svg)\n\n\
             ![{0}: queueing delay CCDF](scale/{0}-delay-ccdf.svg)\n",
            case.id
        )?;
        if !case.udp_among_tcp {
            continue;
        }
        // On the log axes a zero is drawn at the floor, except alpha's: 0 there is "no
        // estimate yet", not a rate, and is left out.
        let over_time = |pick: &dyn Fn(&SimReport) -> &[f64], csfq_only: bool| -> Vec<Series> {
            mine.iter()
                .filter(|(_, s, _, _, _)| {
                    !csfq_only || matches!(s, Scheme::CsfqHistogram | Scheme::CsfqPaper)
                })
                .map(|(_, s, r, _, _)| Series {
                    name: s.name().to_string(),
                    points: pick(r)
                        .iter()
                        .enumerate()
                        .filter(|&(_, &y)| !csfq_only || y > 0.0)
                        .map(|(i, &y)| ((i + 1) as f64 * r.sample_interval_s, y.max(1e-3)))
                        .collect(),
                    markers: false,
                    line: true,
                })
                .collect()
        };
        let rate = Chart {
            title: format!("{}: the UDP's throughput over time", case.id),
            x_label: "time (s)".into(),
            y_label: "UDP throughput (Mbit/s, 100 ms samples, log scale)".into(),
            series: over_time(&|r: &SimReport| &r.flows[0].series_mbps, false),
            reference: Some((case.share.1, "fair share".into())),
            log_y: true,
            per_flow: false,
        };
        rate.write_svg(&out.join(format!("{}-udp.svg", case.id)))?;
        let alpha = Chart {
            title: format!("{}: CSFQ's fair-share estimate alpha over time", case.id),
            x_label: "time (s)".into(),
            y_label: "alpha (Mbit/s, log scale)".into(),
            series: over_time(&|r: &SimReport| &bottleneck(r).alpha_mbps, true),
            reference: Some((case.share.1, "fair share".into())),
            log_y: true,
            per_flow: false,
        };
        alpha.write_svg(&out.join(format!("{}-alpha.svg", case.id)))?;
        writeln!(
            md,
            "\n![{0}: UDP throughput](scale/{0}-udp.svg)\n\n![{0}: alpha](scale/{0}-alpha.svg)\n",
            case.id
        )?;
    }
    writeln!(
        md,
        "\n### What the tables show\n\nThe paper's estimator starts `alpha` at the largest label \
         seen and moves it by `C/F` (near 1 while the link is full) and 1% overflow steps, so \
         at a thousand flows it needs seconds to reach the share; the histogram estimator \
         solves Eq. (1) over each window and reaches it within one. FQ-CoDel holds the UDP to \
         a bucket's round-robin share (1 Gbit/s over the ~640 buckets 1000 flows occupy, \
         about 1.6 Mbit/s, more while TCP buckets are not backlogged), and its TCP Jain index \
         is lower than DRR's because colliding TCPs share a bucket. With one flow in each of \
         32 buckets on csfq-fig3a, FQ-CoDel is DRR with CoDel. csfq-fig3a's Jain index is over \
         throughput / max-min share; scale-tcp-step has none, as half its TCPs run half the \
         time.\n\nDelay. The queueing columns are over every delivered packet of the group \
         (histogram percentiles of the flows' packets, within 1.6%), the CDFs over the TCPs' packets (every \
         packet on csfq-fig3a, where all flows are UDP), drawn as steps at the values the \
         percentiles report and ending at the largest delay, with the tail apart (CCDF, \
         log scale). CSFQ's \
         core is one FIFO: no packet, the UDP's or a TCP's, waits longer than the buffer \
         takes to drain (8 ms on scale-1000, 51 ms on csfq-fig3b), and it keeps the queue \
         shorter than FIFO, which holds the buffer full for everyone (the UDP's low median \
         under CSFQ on scale-1000 is its first second, when the TCPs sat out a timeout). \
         The per-flow schedulers split delay by flow instead: DRR serves the UDP's long \
         queue at its share, so the UDP's packets wait several buffer drain times; FQ-CoDel \
         keeps the UDP's own queue short (CoDel drops at its head) while a TCP packet \
         behind others of its bucket waits a round of every backlogged bucket per packet \
         ahead of it (about 640 x 8 us = 5 ms on scale-1000), so its TCPs' p99 is more \
         than twice the buffer's drain time.\n"
    )?;
    let path = out.join("results.csv");
    crate::write_atomic(&path, csv)?;
    Ok((md, results.len()))
}
