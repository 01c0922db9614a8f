//! The dataplane's per-packet cost on a real path: UDP packets per second through a veth
//! pair between two network namespaces, without a program, with an empty program, with the
//! edge, with the core, with both (on the fine clock, then both on the coarse one), and
//! with MAY (on each clock), each reported as a ratio to the path without, measured in the
//! same run.
//!
//! The sender is one thread sending 64-byte datagrams as fast as it can; the cost of the
//! programs shows as the rate they take off that. The core runs uncongested (`C` = 100
//! Gbit/s, its windows 43 ms: `bench_core`): every packet pays for parsing, its CPU's
//! lane and the virtual queue (alone, it sees unlabeled packets, priced under the lock),
//! and none is dropped, so every configuration delivers all it is handed. MAY runs
//! uncongested too (`C` = 100 Gbit/s, so `v` stays 0): every packet pays for parsing, its
//! flow's lookup in the table (the one flow enters it within about a thousand packets),
//! the fold and the drop decision.
//!
//! The cases are interleaved: each repetition measures all nine in turn, and each ratio is
//! taken against the `none` of its own repetition, so a machine that slows down over the
//! run moves all of them alike. The median ratio is reported with its spread.
//!
//! Scaling across CPUs (on a machine with two or more): two senders, each pinned to its own
//! CPU, through the same veth, without a program (`2 CPUs: none`), with the core alone
//! (`2 CPUs: core`: unlabeled packets, priced as one flow under the state's lock), with
//! the edge (`2 CPUs: edge`) and with both (`2 CPUs: edge+core`: the core sees labeled
//! packets, as in an island; then both on the coarse clock), and with MAY on the coarse
//! clock (`2 CPUs: may, coarse clock`), each as a ratio to the first. A core's state is
//! the link's, as is MAY's, shared by every CPU that sends on it, so this is where CPUs
//! could serialize. The rate is what the far end's receive counter saw (no receiving
//! thread competes for the CPUs).
//!
//! The programs' own cost is read from the kernel: with BPF run-time statistics on
//! (`BPF_ENABLE_STATS`, as `sysctl kernel.bpf_stats_enabled=1` does, for the run only), the
//! kernel adds up each program's run time and run count; `run_time_ns / run_cnt` is its mean
//! cost per packet, as `bpftool prog show` gives it. That figure includes the measure's
//! own cost (two clock reads around each run) and the cost of calling a program at all, so
//! an empty program (`bpf/empty.bpf.c`) is measured the same way in the same run: what a
//! program takes beyond it is its own work.

use std::net::UdpSocket;
use std::time::Duration;

use serde::Serialize;

use aya::programs::tc::{TcAttachOptions, TcAttachType};
use aya::programs::{LinkOrder, SchedClassifier};

mod senders;

use senders::{blast, blast_parallel, set_rcvbuf, setns};

use crate::error::{AttachError, DetachError, SysError};
use crate::lab::{Lab, LabError, Offloads};
use crate::loader::EMPTY_PROGRAM;
use crate::programs::{CORE, CSFNE, EDGE, MAY, TUF};
use crate::{
    attach_core, attach_csfne, attach_edge, attach_may, attach_tuf, detach, enter_netns, Clock,
    CoreSettings, CsfneSettings, EdgeSettings, MaySettings, TufSettings,
};

/// Why the benchmark stopped.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The system refused (a namespace, a socket, the kernel).
    #[error(transparent)]
    System(#[from] SysError),
    /// Attaching a measured program failed.
    #[error(transparent)]
    Attach(#[from] AttachError),
    /// Detaching one between cases failed.
    #[error(transparent)]
    Detach(#[from] DetachError),
    /// The benchmark's namespaces could not be made.
    #[error("setting up the benchmark's namespaces: {0}")]
    Setup(#[from] LabError),
}

/// One measured configuration.
#[derive(Debug, Clone, Serialize)]
pub struct PathResult {
    /// `none`, `empty`, `edge`, `edge, coarse clock`, `edge, tsw meter`, `core`,
    /// `edge+core`, `edge+core, coarse clocks`, `may`, `may, coarse clock`, `csfne`,
    /// `edge (tsw)+csfne`, `edge, tuf tags`, `tuf`, `edge (tuf)+tuf`, or one of the `2 CPUs: `
    /// cases.
    pub case: &'static str,
    /// Datagrams received per second (the median of the repeats).
    pub pps: f64,
    /// `pps` over the `none` case's in the same repetition: the median of the repeats.
    pub ratio: f64,
    /// The lowest of the repeats' ratios.
    pub ratio_min: f64,
    /// The highest of the repeats' ratios.
    pub ratio_max: f64,
    /// The edge program's mean run time per packet, ns (kernel BPF statistics), if it ran.
    pub edge_ns: Option<f64>,
    /// The core program's mean run time per packet, ns, if it ran.
    pub core_ns: Option<f64>,
    /// The empty program's mean run time per packet, ns, if it ran: the measure's floor.
    pub empty_ns: Option<f64>,
    /// The MAY program's mean run time per packet, ns, if it ran.
    pub may_ns: Option<f64>,
    /// The CS-FNE core's mean run time per packet, ns, if it ran.
    pub csfne_ns: Option<f64>,
    /// The TUF core's mean run time per packet, ns, if it ran.
    pub tuf_ns: Option<f64>,
}

/// Run time and run count the kernel accumulated for one program.
#[derive(Debug, Clone, Copy, Default)]
struct ProgCost {
    ns: u64,
    runs: u64,
}

impl ProgCost {
    fn per_run(self) -> Option<f64> {
        (self.runs > 0).then(|| self.ns as f64 / self.runs as f64)
    }
}

/// The run-time statistics of the edge, the core, the empty program, MAY, the CS-FNE core
/// and the TUF core attached to `dev`'s egress, in that order.
fn costs(dev: &str) -> Result<[ProgCost; 6], SysError> {
    let (_, progs) = SchedClassifier::query_tcx(dev, TcAttachType::Egress)
        .map_err(|e| SysError::kernel(format!("querying the programs on {dev}"), e))?;
    let mut out = [ProgCost::default(); 6];
    for p in progs {
        let c = ProgCost {
            ns: p.run_time().as_nanos() as u64,
            runs: p.run_count(),
        };
        match p.name_as_str() {
            Some(n) if n == EDGE.function => out[0] = c,
            Some(n) if n == CORE.function => out[1] = c,
            Some(EMPTY_PROGRAM) => out[2] = c,
            Some(n) if n == MAY.function => out[3] = c,
            Some(n) if n == CSFNE.function => out[4] = c,
            Some(n) if n == TUF.function => out[5] = c,
            _ => {}
        }
    }
    Ok(out)
}

/// Attaches the empty program to `dev`'s egress; it stays while the result lives.
fn attach_empty(dev: &str) -> Result<aya::Ebpf, SysError> {
    let mut ebpf = crate::loader::load_empty()?;
    let prog: &mut SchedClassifier = ebpf
        .program_mut(EMPTY_PROGRAM)
        .expect("program in object")
        .try_into()
        .expect("a tc classifier");
    prog.attach_with_options(
        dev,
        TcAttachType::Egress,
        TcAttachOptions::TcxOrder(LinkOrder::default()),
    )
    .map_err(|e| SysError::kernel(format!("attaching the empty program to {dev}"), e))?;
    Ok(ebpf)
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Runs the benchmark: `secs` per measurement, `repeat` interleaved repetitions. Needs
/// root; makes and removes two namespaces (first removing any that an earlier run, killed
/// halfway, left), and leaves the calling thread in the first of them.
pub fn veth_path(secs: f64, repeat: u32) -> Result<Vec<PathResult>, BenchError> {
    crate::sys::require("csfq dp bench")?;
    crate::lab::remove_abandoned("csfqbench", &["a", "b"]);
    let mut lab = Lab::new(format!("csfqbench{}", std::process::id()));
    lab.add("a")?;
    lab.add("b")?;
    lab.wire(
        ("a", "va", "10.98.0.1/24"),
        ("b", "vb", "10.98.0.2/24"),
        Offloads::Keep,
    )?;
    // The receiver's socket lives in b, the sender's in a; this thread stays in a.
    setns(&lab.ns("b"))?;
    let rx = UdpSocket::bind("10.98.0.2:9999");
    enter_netns(&lab.ns("a"))?;
    let io = |source| SysError::Io {
        what: "opening a benchmark socket in",
        path: "/run/netns".into(),
        source,
    };
    let rx = rx.map_err(io)?;
    rx.set_read_timeout(Some(Duration::from_millis(300)))
        .map_err(io)?;
    set_rcvbuf(&rx, 8 << 20);
    let tx = UdpSocket::bind("10.98.0.1:0").map_err(io)?;
    tx.connect("10.98.0.2:9999").map_err(io)?;
    // Resolve the neighbour before measuring.
    blast(&tx, &rx, 0.2);

    // (name, empty, edge, core, may, csfne, tuf); edge, core and MAY: 0 none, 1 fine clock,
    // 2 coarse clock; the edge 3: fine clock, TSW meter; 4: fine clock, TUF tags
    const CASES: usize = 15;
    let cases: [(&'static str, bool, u8, u8, u8, bool, bool); CASES] = [
        ("none", false, 0, 0, 0, false, false),
        ("empty", true, 0, 0, 0, false, false),
        ("edge", false, 1, 0, 0, false, false),
        ("edge, coarse clock", false, 2, 0, 0, false, false),
        ("edge, tsw meter", false, 3, 0, 0, false, false),
        ("edge, tuf tags", false, 4, 0, 0, false, false),
        ("core", false, 0, 1, 0, false, false),
        ("edge+core", false, 1, 1, 0, false, false),
        ("edge+core, coarse clocks", false, 2, 2, 0, false, false),
        ("may", false, 0, 0, 1, false, false),
        ("may, coarse clock", false, 0, 0, 2, false, false),
        ("csfne", false, 0, 0, 0, true, false),
        ("edge (tsw)+csfne", false, 3, 0, 0, true, false),
        ("tuf", false, 0, 0, 0, false, true),
        ("edge (tuf)+tuf", false, 4, 0, 0, false, true),
    ];
    // Run-time statistics stay on while this descriptor is open.
    let _stats = aya::sys::enable_stats(aya::sys::Stats::RunTime)
        .map_err(|e| SysError::kernel("turning on BPF run-time statistics", e))?;
    let mut pps = vec![Vec::new(); cases.len()];
    let mut ratios = vec![Vec::new(); cases.len()];
    let mut cost = [[ProgCost::default(); 6]; CASES];
    for _ in 0..repeat {
        let mut this = [0f64; CASES];
        for (i, &(_, empty, edge, core, may, csfne, tuf)) in cases.iter().enumerate() {
            let empty = if empty {
                Some(attach_empty("va")?)
            } else {
                None
            };
            if edge > 0 {
                attach_edge(
                    "va",
                    &EdgeSettings {
                        ingress: false,
                        clock: fine_or_coarse(edge == 2),
                        meter: if edge == 3 {
                            csfq_algo::fixed::Meter::Tsw
                        } else {
                            csfq_algo::fixed::Meter::Eq3
                        },
                        tuf: edge == 4,
                        ..Default::default()
                    },
                )?;
            }
            let edge = edge > 0;
            if core > 0 {
                attach_core("va", &bench_core(core == 2))?;
            }
            let core = core > 0;
            if may > 0 {
                attach_may(
                    "va",
                    &MaySettings {
                        clock: fine_or_coarse(may == 2),
                        ..MaySettings::new(100_000_000_000)
                    },
                )?;
            }
            let may = may > 0;
            if csfne {
                let c = bench_core(false);
                attach_csfne("va", &CsfneSettings::with_limit(c.rate_bps, c.limit_bytes))?;
            }
            if tuf {
                let c = bench_core(false);
                attach_tuf("va", &TufSettings::with_limit(c.rate_bps, c.limit_bytes))?;
            }
            this[i] = blast(&tx, &rx, secs);
            if empty.is_some() || edge || core || may || csfne || tuf {
                for (sum, add) in cost[i].iter_mut().zip(costs("va")?) {
                    sum.ns += add.ns;
                    sum.runs += add.runs;
                }
            }
            drop(empty);
            if edge || core || may || csfne || tuf {
                detach("va")?;
            }
        }
        for i in 0..cases.len() {
            pps[i].push(this[i]);
            ratios[i].push(this[i] / this[0]);
        }
    }

    // Two senders on two CPUs, to a port nobody listens on (the far end's counter counts
    // them; the kernel drops them there).
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // (name, edge, core, MAY, coarse clocks)
    const SCALING: usize = 6;
    let scaling: [(&'static str, bool, bool, bool, bool); SCALING] = [
        ("2 CPUs: none", false, false, false, false),
        ("2 CPUs: core", false, true, false, false),
        ("2 CPUs: edge", true, false, false, false),
        ("2 CPUs: edge+core", true, true, false, false),
        ("2 CPUs: edge+core, coarse clocks", true, true, false, true),
        ("2 CPUs: may, coarse clock", false, false, true, true),
    ];
    let mut sc_pps = vec![Vec::new(); scaling.len()];
    let mut sc_ratios = vec![Vec::new(); scaling.len()];
    let mut sc_cost = [[ProgCost::default(); 6]; SCALING];
    if cpus >= 2 {
        let txs = (0..2)
            .map(|_| {
                let tx = UdpSocket::bind("10.98.0.1:0").map_err(io)?;
                tx.connect("10.98.0.2:9998").map_err(io)?;
                Ok(tx)
            })
            .collect::<Result<Vec<_>, SysError>>()?;
        for _ in 0..repeat {
            let mut this = [0f64; SCALING];
            for (i, &(_, edge, core, may, coarse)) in scaling.iter().enumerate() {
                if edge {
                    attach_edge(
                        "va",
                        &EdgeSettings {
                            ingress: false,
                            clock: fine_or_coarse(coarse),
                            ..Default::default()
                        },
                    )?;
                }
                if core {
                    attach_core("va", &bench_core(coarse))?;
                }
                if may {
                    attach_may(
                        "va",
                        &MaySettings {
                            clock: fine_or_coarse(coarse),
                            ..MaySettings::new(100_000_000_000)
                        },
                    )?;
                }
                this[i] = blast_parallel(&txs, &lab.ns("b"), "vb", secs)?;
                if edge || core || may {
                    for (sum, add) in sc_cost[i].iter_mut().zip(costs("va")?) {
                        sum.ns += add.ns;
                        sum.runs += add.runs;
                    }
                    detach("va")?;
                }
            }
            for i in 0..scaling.len() {
                sc_pps[i].push(this[i]);
                sc_ratios[i].push(this[i] / this[0]);
            }
        }
    }
    drop(lab);
    let row = |case, pps: &mut Vec<f64>, r: &mut Vec<f64>, cost: [ProgCost; 6]| PathResult {
        case,
        pps: median(pps),
        ratio: median(r),
        ratio_min: r.iter().copied().fold(f64::INFINITY, f64::min),
        ratio_max: r.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        edge_ns: cost[0].per_run(),
        core_ns: cost[1].per_run(),
        empty_ns: cost[2].per_run(),
        may_ns: cost[3].per_run(),
        csfne_ns: cost[4].per_run(),
        tuf_ns: cost[5].per_run(),
    };
    let mut out: Vec<PathResult> = cases
        .iter()
        .enumerate()
        .map(|(i, &(case, ..))| row(case, &mut pps[i], &mut ratios[i], cost[i]))
        .collect();
    if cpus >= 2 {
        for (i, &(case, ..)) in scaling.iter().enumerate() {
            out.push(row(case, &mut sc_pps[i], &mut sc_ratios[i], sc_cost[i]));
        }
    }
    Ok(out)
}

/// The benchmark's core: uncongested (`C` = 100 Gbit/s), its limit 256 MiB, so that the
/// limit's drain time (21.5 ms) and its windows (`K_alpha` = `K_c` = twice that) are long
/// enough for the coarse clock (four ticks at 250 Hz; more where the tick is longer) and
/// the same for both clocks.
fn bench_core(coarse: bool) -> CoreSettings {
    let rate = 100_000_000_000u64;
    let four_ticks = 4 * crate::sys::tick_ns() * rate / 8_000_000_000 + 1;
    let limit = four_ticks.clamp(256 << 20, 1 << 30) as u32;
    CoreSettings {
        clock: fine_or_coarse(coarse),
        ..CoreSettings::with_limit(rate, limit)
    }
}

/// The clock a benchmark names: each case runs on one clock, never the default's choice.
fn fine_or_coarse(coarse: bool) -> Clock {
    if coarse {
        Clock::Coarse
    } else {
        Clock::Fine
    }
}
