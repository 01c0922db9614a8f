//! `csfq run` and `csfq maxmin`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use csfq_algo::Nanos;
use csfq_sim::net::References;
use csfq_sim::observe::pcap::PcapTrace;
use csfq_sim::observe::trace::TraceEnd;
use csfq_sim::{DisciplineKind, Scenario, ScenarioFile, SimReport, Simulation, Topology};
use indicatif::{ProgressBar, ProgressStyle};

fn load(path: &Path, seed: Option<u64>, d: Option<DisciplineKind>) -> Result<Scenario> {
    Ok(ScenarioFile::load(path)?.with_run_options(seed, d))
}

/// A packet trace to write: the file and the ports (both directions of each link).
pub struct TraceRequest {
    /// The pcapng file.
    pub path: PathBuf,
    /// Ports, indices into the topology's.
    pub ports: Vec<usize>,
    /// The most bytes the file may hold; recording stops there.
    pub limit_bytes: u64,
}

/// The default `--pcap-limit`: 1 GiB, about 10 million packets' headers.
pub const DEFAULT_PCAP_LIMIT: u64 = 1 << 30;

/// A run stopped by Ctrl-C (SIGINT) or SIGTERM: the command exits with 130.
#[derive(Debug)]
pub struct Interrupted(pub String);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Interrupted {}

/// Set by the SIGINT/SIGTERM handler; the run loop looks at it between steps.
static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Installs the handler once: an interrupt stops the run at its next step (a thousandth
/// of the simulated time), so a trace is closed whole and nothing half-written is left.
fn catch_interrupts() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // If a handler cannot be installed, Ctrl-C kills the process as before.
        let _ = ctrlc::set_handler(|| STOP.store(true, std::sync::atomic::Ordering::Relaxed));
    });
}

impl TraceRequest {
    /// The ports of links named on the command line (deduplicated, in order).
    pub fn of_links(
        s: &Scenario,
        links: &[String],
        path: PathBuf,
        limit_bytes: u64,
    ) -> Result<Option<Self>> {
        let mut ports = Vec::new();
        for name in links {
            for p in csfq_sim::observe::trace::link_ports(s, name)? {
                if !ports.contains(&p) {
                    ports.push(p);
                }
            }
        }
        Ok((!ports.is_empty()).then_some(TraceRequest {
            path,
            ports,
            limit_bytes,
        }))
    }
}

/// Builds a scenario's simulation if [`Simulation::admit`] admits it (it would fit in
/// memory, and take no more than a day unless `long`); says what a run of more than a
/// minute is expected to take.
pub fn build(s: &Scenario, long: bool) -> Result<Simulation> {
    let csfq_sim::Admitted { sim, estimate } = Simulation::admit(s, long)?;
    if let Some(expected) = estimate.expected() {
        eprintln!("note: {expected}");
    }
    Ok(sim)
}

/// Runs a simulation (of `s`, built by [`build`]) with a progress bar over simulated time, writing the trace if one is
/// asked for; returns the report, the flows' reference allocations, the wall time and the
/// packets traced. Ctrl-C stops the run: the trace is closed whole and the error is
/// [`Interrupted`].
pub fn simulate_with_progress(
    mut sim: Simulation,
    s: &Scenario,
    trace: Option<&TraceRequest>,
) -> Result<(SimReport, References, std::time::Duration, Option<TraceEnd>)> {
    if let Some(t) = trace {
        let pcap = PcapTrace::create(
            &t.path,
            sim.topology(),
            &t.ports,
            s.tcp.segment_bytes,
            t.limit_bytes,
        )
        .with_context(|| format!("cannot create {}", t.path.display()))?;
        sim.trace(&t.ports, Box::new(pcap))?;
    }
    catch_interrupts();
    let fair = References::of(sim.topology());
    let end = sim.end();
    let bar = ProgressBar::new(end.0 / 1_000_000);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} simulated {pos}/{len} ms [{bar:40}] {elapsed_precise}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let started = std::time::Instant::now();
    let step = Nanos((end.0 / 1000).max(1));
    while sim.now() < end && !STOP.load(std::sync::atomic::Ordering::Relaxed) {
        sim.run_until(sim.now() + step);
        bar.set_position(sim.now().0 / 1_000_000);
    }
    bar.finish_and_clear();
    let traced = match trace {
        Some(t) => Some(
            sim.finish_trace()
                .with_context(|| format!("cannot write {}", t.path.display()))?,
        ),
        None => None,
    };
    if sim.now() < end {
        let kept = match (trace, traced) {
            (Some(t), Some(e)) => format!(
                "; {} holds the {} packets traced up to then, and is whole",
                t.path.display(),
                e.packets
            ),
            _ => String::new(),
        };
        return Err(Interrupted(format!(
            "interrupted at {:.3} s of {:.3} s simulated: no results written{kept}",
            sim.now().as_secs_f64(),
            end.as_secs_f64()
        ))
        .into());
    }
    Ok((sim.report(), fair, started.elapsed(), traced))
}

/// `println!` wrapped to the output's width ([`crate::paragraph`]): a line of the report
/// that would run past an 80-column terminal continues on the next.
macro_rules! say {
    ($($arg:tt)*) => {
        println!("{}", crate::paragraph("", &format!($($arg)*)))
    };
}

/// Flows shown in the terminal's per-flow table; the rest are in flows.csv (a table of
/// 100 000 rows is not read, and building it took more memory than the simulation).
const TABLE_FLOWS: usize = 50;

/// `csfq run`'s options besides the scenario.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Where to write [default: out/NAME].
    pub out: Option<PathBuf>,
    /// The seed instead of the file's.
    pub seed: Option<u64>,
    /// Every link on this discipline.
    pub discipline: Option<DisciplineKind>,
    /// Links to trace (`--pcap`).
    pub pcap: Vec<String>,
    /// The trace's size limit, bytes.
    pub pcap_limit: u64,
    /// Print summary.json instead of the tables.
    pub json: bool,
    /// Run even if estimated to take more than a day.
    pub long: bool,
    /// Every column of the per-flow table, however wide the terminal.
    pub wide: bool,
    /// Which figure to draw.
    pub figure: Figure,
}

/// The figure `csfq run` draws beside its tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Figure {
    /// throughput.svg and throughput.png.
    #[default]
    Png,
    /// throughput.svg alone.
    Svg,
    /// None: the tables only.
    None,
}

/// `csfq run`.
pub fn run(path: &Path, o: RunOptions) -> Result<()> {
    let RunOptions {
        out,
        seed,
        discipline: d,
        pcap,
        pcap_limit,
        json,
        long,
        wide,
        figure,
    } = o;
    let s = load(path, seed, d)?;
    let dir = out.unwrap_or_else(|| PathBuf::from("out").join(&s.name));
    // A misnamed link is an error before anything is written.
    let trace = TraceRequest::of_links(&s, &pcap, dir.join("trace.pcapng"), pcap_limit)?;
    // Refused runs write nothing.
    let sim = build(&s, long)?;
    crate::prepare_out_dir(&dir)?;
    // The figure's fonts and canvas are made ready on the other core while the
    // simulation runs.
    if figure == Figure::Png {
        crate::plot::prepare_in_background();
    }
    let (report, refs, wall, traced) = simulate_with_progress(sim, &s, trace.as_ref())?;
    write_outputs(&dir, &report, &refs, figure)?;
    if json {
        // What summary.json holds, for a pipe; the files are written as usual.
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        serde_json::to_writer_pretty(&mut out, &Summary::of(&report, &refs))?;
        writeln!(out)?;
        out.flush()?;
        return Ok(());
    }
    say!("{}: {}", s.name, s.description);
    say!(
        "discipline {}, seed {}, {} s simulated in {:.3} s ({} events)",
        s.discipline,
        s.seed,
        s.duration_s,
        wall.as_secs_f64(),
        report.events
    );
    // Finite transfers (tcp with size_pkts, web) also show their completion times.
    let transfers = report.flows.iter().any(|f| f.size_pkts.is_some());
    let mut header = vec![
        "flow",
        "kind",
        "route",
        "offered Mbps",
        "max-min Mbps",
        "throughput Mbps",
        "vs reference",
        "sent",
        "delivered",
        "dropped",
        "drops by reason",
        "delay ms p50/p99",
        "jitter ms",
    ];
    let per_hop = refs.per_hop_if_different();
    if per_hop.is_some() {
        header.insert(5, "per-hop Mbps");
    }
    if transfers {
        header.extend(["size pkts", "completion ms"]);
    }
    // With overlay loops, the allocations they approach (the overlay paper, Section 5).
    let loops = !report.loops.is_empty();
    let (pf, md) = if loops {
        let topo = csfq_sim::Topology::build(&s)?;
        header.extend(["prop-fair Mbps", "min-delay Mbps"]);
        (
            topo.alpha_fair_allocation(1.0),
            topo.alpha_fair_allocation(2.0),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    let mut rows = Vec::new();
    for (i, f) in report.flows.iter().enumerate().take(TABLE_FLOWS) {
        let (a, r) = (refs.max_min[i], refs.reference[i]);
        let vs = if r > 0.0 && r.is_finite() {
            let which = if per_hop.is_some() && matches!(f.kind, "udp" | "onoff") {
                " (per-hop)"
            } else {
                ""
            };
            format!(
                "{:+.1}%{which}",
                (f.throughput_mbps * 1e6 / r - 1.0) * 100.0
            )
        } else {
            "-".into()
        };
        let reasons: Vec<String> = f.drops.iter().map(|(r, n)| format!("{r} {n}")).collect();
        let mut row = vec![
            f.flow.to_string(),
            f.kind.to_string(),
            format!("{}->{}", f.src, f.dst),
            f.offered_mbps.map_or("-".into(), |r| format!("{r:.4}")),
            format!("{:.4}", a / 1e6),
            format!("{:.4}", f.throughput_mbps),
            vs,
            f.sent_pkts.to_string(),
            f.delivered_pkts.to_string(),
            f.dropped_pkts.to_string(),
            reasons.join(", "),
            f.delay.map_or("-".into(), |d| {
                format!("{:.3}/{:.3}", d.one_way_ms.p50, d.one_way_ms.p99)
            }),
            f.delay
                .map_or("-".into(), |d| format!("{:.3}", d.jitter_ms)),
        ];
        if let Some(hop) = per_hop {
            row.insert(5, format!("{:.4}", hop[i] / 1e6));
        }
        if transfers {
            row.push(f.size_pkts.map_or("-".into(), |n| n.to_string()));
            row.push(match (f.size_pkts, f.fct_s) {
                (Some(_), Some(t)) => format!("{:.1}", t * 1e3),
                (Some(_), None) => "unfinished".into(),
                _ => "-".into(),
            });
        }
        if loops {
            row.push(format!("{:.4}", pf[i] / 1e6));
            row.push(format!("{:.4}", md[i] / 1e6));
        }
        rows.push(row);
    }
    // Narrower than the whole table (a terminal, or COLUMNS), the columns that matter most
    // for fairness first; --wide, or a pipe, shows them all.
    let kept = match crate::output_width() {
        Some(w) if !wide => {
            let at = |name: &str| header.iter().position(|h| *h == name);
            let priority: Vec<usize> = [
                "flow",
                "throughput Mbps",
                "vs reference",
                "max-min Mbps",
                "per-hop Mbps",
                "kind",
                "completion ms",
                "dropped",
                "delay ms p50/p99",
                "offered Mbps",
                "route",
                "jitter ms",
                "size pkts",
                "prop-fair Mbps",
                "min-delay Mbps",
                "sent",
                "delivered",
                "drops by reason",
            ]
            .iter()
            .filter_map(|n| at(n))
            .collect();
            crate::fit_columns(&header, &rows, &priority, w)
        }
        _ => (0..header.len()).collect(),
    };
    let mut t = crate::table(kept.iter().map(|&c| header[c]).collect::<Vec<_>>());
    if wide {
        // Rows whole, however wide (for `less -S` or a wider window), not cells wrapped.
        t.set_content_arrangement(comfy_table::ContentArrangement::Disabled);
    }
    for row in &rows {
        t.add_row(kept.iter().map(|&c| row[c].as_str()).collect::<Vec<_>>());
    }
    println!("{t}");
    if kept.len() < header.len() {
        let left: Vec<&str> = (0..header.len())
            .filter(|c| !kept.contains(c))
            .map(|c| header[c])
            .collect();
        println!(
            "{}",
            crate::paragraph(
                "",
                &format!(
                    "left out to fit: {} (--wide shows every column; flows.csv has them all)",
                    left.join(", ")
                )
            )
        );
    }
    if report.flows.len() > TABLE_FLOWS {
        say!(
            "... and {} more flows: every flow is in {}",
            report.flows.len() - TABLE_FLOWS,
            dir.join("flows.csv").display()
        );
    }
    if per_hop.is_some() {
        say!(
            "open-loop flows (udp, onoff) are judged against the per-hop allocation (each link \
             shares max-min among the rates that reach it: no per-link scheme can do better for \
             flows that do not react to loss); responsive ones against end-to-end max-min"
        );
    }
    if transfers {
        let mut t = crate::table(vec![
            "transfer size (pkts)",
            "transfers",
            "unfinished",
            "mean FCT s",
            "median s",
            "p99 s",
        ]);
        for b in report.fct_buckets() {
            let size = match (b.min_pkts, b.max_pkts) {
                (1, u32::MAX) => "all".to_string(),
                (lo, u32::MAX) => format!("{lo}+"),
                (lo, hi) => format!("{lo}-{hi}"),
            };
            t.add_row(vec![
                size,
                b.transfers.to_string(),
                b.unfinished.to_string(),
                format!("{:.3}", b.mean_s),
                format!("{:.3}", b.median_s),
                format!("{:.3}", b.p99_s),
            ]);
        }
        println!("flow completion times by transfer size:\n{t}");
    }
    print_summary(&report, &refs);
    if loops {
        print_loops(&report);
    }
    // What this run wrote (an older run's figure it did not draw was removed).
    let written: Vec<String> = RUN_FILES
        .iter()
        .filter(|f| dir.join(f).exists())
        .map(|f| dir.join(f).display().to_string())
        .collect();
    say!("wrote {}", written.join(", "));
    if let (Some(t), Some(end)) = (&trace, traced) {
        let n = end.packets;
        // Link i's ports are 2i (as listed) and 2i + 1 (back).
        let names: Vec<String> = t
            .ports
            .iter()
            .map(|&p| {
                let [a, b] = &s.links[p / 2].get_ref().between;
                if p % 2 == 0 {
                    format!("{a}->{b}")
                } else {
                    format!("{b}->{a}")
                }
            })
            .collect();
        say!(
            "wrote {} ({n} packets sent or dropped on {}; to see labels as rates: \
             wireshark -X lua_script:contrib/wireshark/csfq.lua)",
            t.path.display(),
            names.join(", ")
        );
        if let Some(at) = end.stopped_at {
            say!(
                "note: the trace stopped at {:.3} s of {:.3} s simulated, at its size limit \
                 ({} bytes; --pcap-limit): packets after that are not in it",
                at.as_secs_f64(),
                s.duration_s,
                t.limit_bytes
            );
        }
    }
    Ok(())
}

fn print_summary(r: &SimReport, refs: &References) {
    let judged = refs
        .reference
        .iter()
        .filter(|a| **a > 0.0 && a.is_finite())
        .count();
    if judged >= 2 && r.jain_index.is_nan() {
        say!(
            "fairness: Jain's index undefined: none of the {judged} flows with a reference share delivered anything"
        );
    } else if judged >= 2 {
        say!(
            "fairness: Jain's index {:.4} over {judged} flows (throughput / reference share)",
            r.jain_index
        );
    } else {
        say!(
            "fairness: Jain's index not shown: {judged} long-lived flow(s) with a reference \
             share (finite transfers are judged by their completion times)"
        );
    }
    if !r.unused_links.is_empty() {
        say!(
            "{} link direction(s) no flow crosses, not reported (named in summary.json's unused_links)",
            r.unused_links.len()
        );
    }
    for l in &r.links {
        if l.tx_pkts == 0 {
            continue;
        }
        let alpha = if l.alpha_mbps.is_empty() {
            String::new()
        } else {
            let mean = l.alpha_mbps.iter().sum::<f64>() / l.alpha_mbps.len() as f64;
            format!(", mean fair-share estimate {mean:.4} Mbps")
        };
        let table = match l.may {
            Some(m) => format!(
                ", MAY table: peak {} entries ({} bytes), {} inserted, {} expired, {} refused (full)",
                m.peak_entries, m.peak_bytes, m.inserts, m.expired, m.refused_full
            ),
            None => String::new(),
        };
        let sojourn = l.sojourn_ms.map_or(String::new(), |d| {
            format!(
                ", sojourn ms mean {:.3} p50 {:.3} p99 {:.3} max {:.3}",
                d.mean, d.p50, d.p99, d.max
            )
        });
        say!(
            "link {}->{} ({}): utilization {:.1}%, mean queue {:.1} KB, {} drops{}{}{}",
            l.from,
            l.to,
            l.discipline,
            l.utilization * 100.0,
            l.mean_queue_bytes / 1e3,
            l.dropped_pkts,
            sojourn,
            alpha,
            table
        );
    }
}

fn print_loops(r: &SimReport) {
    let mut t = crate::table(vec![
        "loop",
        "edges",
        "service",
        "tau ms",
        "mean lambda Mbps",
        "sent",
        "ingress drops",
        "peak ingress KB",
        "lost in network",
        "epochs",
        "control sent/lost",
    ]);
    for l in &r.loops {
        let mean = l.lambda_mbps.iter().sum::<f64>() / l.lambda_mbps.len().max(1) as f64;
        t.add_row(vec![
            l.name.clone(),
            format!("{}->{}", l.ingress, l.egress),
            match l.rate_mbps {
                Some(a) => format!("{} {a} Mbps", l.service),
                None => l.service.to_string(),
            },
            format!("{:.2}", l.tau_ms),
            format!("{mean:.3}"),
            l.sent_pkts.to_string(),
            l.ingress_drops.to_string(),
            format!("{:.1}", l.peak_ingress_queue_bytes as f64 / 1e3),
            format!("{} B", l.network_lost_bytes),
            l.epochs.to_string(),
            format!("{}/{}", l.control_sent, l.control_lost + l.feedback_lost),
        ]);
    }
    println!("edge-to-edge loops:\n{t}");
}

/// summary.json: the report, and each flow's reference shares (Mbit/s, null where there is
/// none) as arrays indexed by flow, as `flows.csv` has them.
#[derive(serde::Serialize)]
struct Summary<'a> {
    #[serde(flatten)]
    report: &'a SimReport,
    references: SummaryShares,
}

#[derive(serde::Serialize)]
struct SummaryShares {
    max_min_mbps: Vec<Option<f64>>,
    per_hop_mbps: Vec<Option<f64>>,
    reference_mbps: Vec<Option<f64>>,
}

impl<'a> Summary<'a> {
    fn of(report: &'a SimReport, refs: &References) -> Self {
        let n = report.flows.len();
        let mbps = |v: &[f64]| -> Vec<Option<f64>> {
            (0..n)
                .map(|i| v.get(i).filter(|x| x.is_finite()).map(|x| x / 1e6))
                .collect()
        };
        Summary {
            report,
            references: SummaryShares {
                max_min_mbps: mbps(&refs.max_min),
                per_hop_mbps: mbps(refs.per_hop.as_deref().unwrap_or(&[])),
                reference_mbps: mbps(&refs.reference),
            },
        }
    }
}

/// The files a run writes into its `--out` directory, written as one set
/// ([`crate::write_set`]).
const RUN_FILES: [&str; 5] = [
    "flows.csv",
    "delays.csv",
    "summary.json",
    "throughput.svg",
    "throughput.png",
];

fn write_outputs(dir: &Path, r: &SimReport, refs: &References, figure: Figure) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    crate::write_set(
        dir,
        |name| RUN_FILES.contains(&name),
        |stage| write_run_files(stage, r, refs, figure),
    )
}

fn write_run_files(dir: &Path, r: &SimReport, refs: &References, figure: Figure) -> Result<()> {
    if figure == Figure::None {
        return write_tables(dir, r, refs);
    }
    // The figure (SVG, and PNG from it: most of a small run's output time) is drawn on a
    // second thread while this one writes the tables; the set is complete when both are.
    std::thread::scope(|scope| {
        let figure = scope.spawn(|| write_throughput_figure(dir, r, &refs.reference, figure));
        let tables = write_tables(dir, r, refs);
        let figure = figure
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        tables.and(figure)
    })
}

fn write_tables(dir: &Path, r: &SimReport, refs: &References) -> Result<()> {
    // Each file whole or not at all (a full disk leaves no truncated file that looks done),
    // each on a thread of its own: formatting on both cores, and the three files' flushes
    // to the disk waited for together rather than one after another.
    std::thread::scope(|scope| {
        let flows = scope.spawn(|| {
            crate::write_atomic(&dir.join("flows.csv"), r.flows_csv_with(&refs.columns()))
        });
        let delays = scope.spawn(|| crate::write_atomic(&dir.join("delays.csv"), r.delays_csv()));
        // Streamed: with per-flow time series the JSON can be far larger than the run's
        // state.
        let summary = crate::write_atomic_with(&dir.join("summary.json"), |out| {
            // serde_json writes a token at a time: gathered here, each token is a copy, not
            // a call through `dyn Write`.
            let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
            serde_json::to_writer_pretty(&mut out, &Summary::of(r, refs))?;
            writeln!(out)?;
            out.flush()
        });
        let join = |h: std::thread::ScopedJoinHandle<'_, Result<()>>| {
            h.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        };
        let (flows, delays) = (join(flows), join(delays));
        flows.and(delays).and(summary)
    })
}

/// throughput.svg (and .png, for [`Figure::Png`]): each flow's throughput beside its
/// reference share.
fn write_throughput_figure(dir: &Path, r: &SimReport, fair: &[f64], figure: Figure) -> Result<()> {
    let chart = crate::plot::Chart {
        title: format!("{} ({}): per-flow throughput", r.scenario, r.discipline),
        x_label: "flow number".into(),
        y_label: "throughput (Mbps)".into(),
        series: vec![
            crate::plot::Series {
                name: "throughput".into(),
                points: r
                    .flows
                    .iter()
                    .map(|f| (f.flow as f64, f.throughput_mbps))
                    .collect(),
                markers: true,
                line: true,
            },
            crate::plot::Series {
                name: "reference share".into(),
                points: r
                    .flows
                    .iter()
                    .zip(fair)
                    .filter(|(_, a)| a.is_finite())
                    .map(|(f, a)| (f.flow as f64, a / 1e6))
                    .collect(),
                markers: false,
                line: true,
            },
        ],
        reference: None,
        log_y: false,
        per_flow: true,
    };
    // The flows that do not react to loss (udp, onoff) marked apart: the ones a fair
    // scheme must hold to their share.
    let mut chart = chart;
    let open_loop: Vec<(f64, f64)> = r
        .flows
        .iter()
        .filter(|f| matches!(f.kind, "udp" | "onoff"))
        .map(|f| (f.flow as f64, f.throughput_mbps))
        .collect();
    if !open_loop.is_empty() {
        chart.series.push(crate::plot::Series {
            name: "unresponsive flows (udp, onoff)".into(),
            points: open_loop,
            markers: true,
            line: false,
        });
    }
    let svg = dir.join("throughput.svg");
    if figure == Figure::Png {
        crate::plot::Draw::write_svg(&chart, &svg)
    } else {
        crate::plot::Draw::draw_svg(&chart, &svg, &[])
    }
}

/// `csfq maxmin`.
pub fn maxmin(path: &Path, json: bool) -> Result<()> {
    let s = ScenarioFile::load(path)?;
    let topo = Topology::build(&s)?;
    let alloc = topo.max_min_allocation();
    let pf = topo.alpha_fair_allocation(1.0);
    let md = topo.alpha_fair_allocation(2.0);
    let hop = topo.per_hop_allocation();
    let mbps = |x: f64| x.is_finite().then_some(x / 1e6);
    // Each router link's capacity and what max-min gives the flows that cross it.
    let link_use: Vec<(usize, f64)> = topo
        .ports
        .iter()
        .enumerate()
        .filter(|(_, p)| p.between_routers)
        .map(|(pi, _)| {
            let used = (0..topo.flows.len())
                .zip(&alloc)
                .filter(|&(f, _)| topo.fwd_ports(f).any(|p| p == pi))
                .map(|(_, a)| a)
                .sum();
            (pi, used)
        })
        .collect();
    if json {
        let flows: Vec<serde_json::Value> = topo
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                serde_json::json!({
                    "flow": i,
                    "kind": f.kind.name(),
                    "src": topo.nodes[f.src].name(),
                    "dst": topo.nodes[f.dst].name(),
                    "weight": f.weight,
                    "demand_mbps": mbps(f.demand_bps()),
                    "max_min_mbps": mbps(alloc[i]),
                    "per_hop_mbps": hop.as_ref().and_then(|h| mbps(h[i])),
                    "prop_fair_mbps": mbps(pf[i]),
                    "min_delay_mbps": mbps(md[i]),
                })
            })
            .collect();
        let links: Vec<serde_json::Value> = link_use
            .iter()
            .map(|&(pi, used)| {
                let p = &topo.ports[pi];
                serde_json::json!({
                    "from": topo.nodes[p.from as usize].name(),
                    "to": topo.nodes[p.to as usize].name(),
                    "capacity_mbps": p.rate_bps / 1e6,
                    "allocated_mbps": used / 1e6,
                    "saturated": used >= p.rate_bps * (1.0 - 1e-9),
                })
            })
            .collect();
        let doc = serde_json::json!({ "scenario": s.name, "flows": flows, "links": links });
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(());
    }
    println!(
        "{}: max-min fair allocation (weighted; TCP greedy, ON-OFF at its mean rate), with the per-hop, proportional-fair and min-potential-delay allocations beside it",
        s.name
    );
    println!(
        "per hop: each link shares max-min among the rates that reach it, the reference for \
         open-loop flows (udp, onoff) on multi-hop paths; end-to-end max-min is the one for \
         responsive flows"
    );
    let mut t = crate::table(vec![
        "flow",
        "kind",
        "route",
        "weight",
        "demand Mbps",
        "allocation Mbps",
        "per-hop Mbps",
        "prop-fair Mbps",
        "min-delay Mbps",
    ]);
    for (i, (f, a)) in topo.flows.iter().zip(&alloc).enumerate() {
        let d = f.demand_bps();
        t.add_row(vec![
            i.to_string(),
            f.kind.name().to_string(),
            format!("{}->{}", topo.nodes[f.src].name(), topo.nodes[f.dst].name()),
            format!("{}", f.weight),
            if d.is_finite() {
                format!("{:.4}", d / 1e6)
            } else {
                "greedy".into()
            },
            format!("{:.4}", a / 1e6),
            hop.as_ref()
                .map_or("-".into(), |h| format!("{:.4}", h[i] / 1e6)),
            format!("{:.4}", pf[i] / 1e6),
            format!("{:.4}", md[i] / 1e6),
        ]);
    }
    println!("{t}");
    let mut links = crate::table(vec!["link", "capacity Mbps", "allocated Mbps", "saturated"]);
    for &(pi, used) in &link_use {
        let p = &topo.ports[pi];
        links.add_row(vec![
            format!(
                "{}->{}",
                topo.nodes[p.from as usize].name(),
                topo.nodes[p.to as usize].name()
            ),
            format!("{:.4}", p.rate_bps / 1e6),
            format!("{:.4}", used / 1e6 + 0.0),
            if used >= p.rate_bps * (1.0 - 1e-9) {
                "yes"
            } else {
                "no"
            }
            .to_string(),
        ]);
    }
    println!("{links}");
    Ok(())
}
