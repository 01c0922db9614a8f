//! `csfq dp`: the eBPF dataplane on real interfaces.

use anyhow::Result;
use clap::{Args, Subcommand};
use csfq_dp::units::{parse_rate, parse_size, parse_time};
use csfq_dp::{
    AttachOutcome, CoreSettings, EdgeSettings, InterfaceStats, MaySettings, WeightClass,
};

use crate::dp_cores::bytes;

#[derive(Args)]
pub struct Dp {
    /// Act inside this named network namespace (`ip netns add NAME`).
    #[arg(long, global = true, value_name = "NAME")]
    netns: Option<String>,
    #[command(subcommand)]
    cmd: DpCommand,
}

#[derive(Subcommand)]
pub(crate) enum DpCommand {
    /// The edge: labels packets entering the island with their flow's rate.
    Edge {
        #[command(subcommand)]
        cmd: EdgeCommand,
    },
    /// The core: drops and relabels at a bottleneck, in front of its shaper.
    Core {
        #[command(subcommand)]
        cmd: CoreCommand,
    },
    /// MAY at a bottleneck: no edge, no labels; drops in proportion to each flow's past
    /// drops, in front of the link's shaper.
    May {
        #[command(subcommand)]
        cmd: MayCommand,
    },
    /// A CS-FNE core at a bottleneck, in front of its shaper: no per-flow state; the
    /// active flows estimated from the queue, drops above C / N_act. Its edges are
    /// `csfq dp edge attach --meter tsw`.
    Csfne {
        #[command(subcommand)]
        cmd: crate::dp_cores::CsfneCommand,
    },
    /// A TUF core at a bottleneck, in front of its shaper: drops tags above the threshold
    /// at which a window's arrivals fill the link. Its edges are `csfq dp edge attach
    /// --tuf`.
    Tuf {
        #[command(subcommand)]
        cmd: crate::dp_cores::TufCommand,
    },
    /// TUF's TCP tagger on a sending host's egress: each packet of a local TCP socket
    /// tagged with Padhye's throughput from the kernel's own round trip for the socket.
    /// Its edge keeps these tags with `csfq dp edge attach --tuf --keep-source-tags`.
    TufSource {
        #[command(subcommand)]
        cmd: crate::dp_cores::TufSourceCommand,
    },
    /// Edge-to-edge overlay loops: the interior stays a plain FIFO; each loop's traffic
    /// is shaped at its ingress edge by a closed loop with its egress edge (runs until
    /// stopped, and removes what it made).
    Loop {
        #[command(subcommand)]
        cmd: LoopCommand,
    },
    /// Attach what a file describes (edges, cores, MAY, CS-FNE and TUF cores, TUF source
    /// taggers, each as its `attach` takes it); again, update settings. Every entry is checked before any
    /// is applied. `--prune` detaches what the file does not name.
    Apply {
        /// The file (TOML: `[[edge]]`, `[[core]]`, `[[may]]`, `[[csfne]]`, `[[tuf]]`,
        /// `[[tuf-source]]` tables whose keys are the attach command's long options).
        file: std::path::PathBuf,
        /// Detach, in this namespace, every edge and core csfq attached that the file
        /// does not name (overlay loops are left alone).
        #[arg(long)]
        prune: bool,
    },
    /// Counters and state of every program csfq attached.
    Stats {
        /// As JSON (with --watch, one document per line).
        #[arg(long)]
        json: bool,
        /// Read again every SECS seconds (default 1) until interrupted, with each
        /// counter's rate since the last read; on a terminal the screen is redrawn.
        #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "1")]
        watch: Option<f64>,
        /// With --watch: stop after this many reads (at least 1).
        #[arg(long, value_name = "N", requires = "watch", value_parser = clap::value_parser!(u64).range(1..))]
        count: Option<u64>,
    },
    /// Per-packet cost: UDP packets per second through a veth pair with and without each
    /// program, as ratios (makes and removes two namespaces; those of a run killed halfway
    /// are removed by the next).
    Bench {
        /// Seconds per measurement.
        #[arg(long, default_value_t = 2.0)]
        secs: f64,
        /// Interleaved repetitions of every case (the median is shown, with the range).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
        repeat: u32,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Build namespaces (senders, a router shaped to 10 Mbit/s, a receiver), run four
    /// kernel TCP flows and a UDP flow at 5x its share through drop-tail, CSFQ, CS-FNE, TUF
    /// and MAY in turn, print each flow's goodput side by side, and remove everything (needs root,
    /// iperf3, ethtool).
    Demo {
        /// Seconds per scheme.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(2..=600))]
        secs: u32,
    },
    /// The simulator as the dataplane's twin: predict each flow's share in the setup the
    /// namespace tests run (kernel CUBIC TCPs and a UDP through an edge and a core in
    /// front of a shaper of RATE and LIMIT), the core set as attach derives it from that
    /// shaper; mean and range over seeds. Runs no packets, needs no root.
    Twin(crate::twin::TwinArgs),
    /// Serve the counters and the cores' A, F and alpha to Prometheus (until stopped).
    Exporter {
        /// Address and port to listen on (port 0: any free port, printed).
        #[arg(long, default_value = "127.0.0.1:9713", value_name = "ADDR:PORT")]
        listen: std::net::SocketAddr,
    },
    /// Remove what csfq attached to an interface (nothing else), or every stale attachment.
    Detach {
        /// The interface.
        #[arg(
            long,
            value_name = "IF",
            required_unless_present = "stale",
            conflicts_with = "stale"
        )]
        dev: Option<String>,
        /// Remove, in every namespace, the pins of what is attached nowhere: its interface
        /// or namespace was deleted without `csfq dp detach` (`csfq dp stats` marks them).
        #[arg(long)]
        stale: bool,
    },
}

#[derive(Subcommand)]
pub(crate) enum EdgeCommand {
    /// Attach the edge (again: update its settings, keeping its flow table).
    Attach {
        /// The interface where traffic enters the island.
        #[arg(long, value_name = "IF")]
        dev: String,
        /// Averaging constant K of Eq. (3), in tc's time units.
        #[arg(long, default_value = "100ms", value_parser = parse_time)]
        k: u64,
        /// A weight class, PREFIX/LEN=WEIGHT by source address (repeatable).
        #[arg(long = "weight", value_name = "PREFIX/LEN=W")]
        weights: Vec<WeightClass>,
        /// The weight of flows no class matches.
        #[arg(long, default_value_t = 1.0)]
        default_weight: f64,
        /// Flow-table size, entries, rounded up to a multiple of 4 (a flow may take an
        /// entry in two sets of four, evicting the least recently seen of their flows
        /// when all eight are taken: size it at twice the flows or more)
        /// [default: 65536 on a new attach; an attached edge keeps its table, which
        /// cannot be resized in place].
        #[arg(long)]
        flows: Option<u32>,
        /// Attach at the interface's egress instead of its ingress.
        #[arg(long)]
        egress: bool,
        /// What makes a flow: `5-tuple` (the paper's), `host-pair` (source and
        /// destination addresses) or `source` (one share per sending host).
        #[arg(
            long,
            default_value = "5-tuple",
            value_name = "5-tuple|host-pair|source"
        )]
        flow_key: csfq_dp::FlowKey,
        /// The clock Eq. (3) reads: `fine` (bpf_ktime_get_ns) or `coarse` (the kernel's
        /// tick counter: one tick's resolution, 1-4 ms, cheaper; its labels are within half
        /// a percent of the fine clock's; experimental, README "The programs' clock").
        #[arg(long, default_value = "fine", value_parser = ["fine", "coarse"])]
        clock: String,
        /// IPv4 that cannot carry a label (no DF, or a fragment): `pass` it (the cores
        /// judge all of it as one flow), `drop` it, or police all of it to a RATE in tc's
        /// units (e.g. 2mbit).
        #[arg(long, default_value = "pass", value_name = "pass|drop|RATE", value_parser = parse_unlabelable)]
        unlabelable: UnlabelablePolicy,
        /// The policer's bucket, in tc's size units [default: 10ms at the rate, at least
        /// 3000 bytes].
        #[arg(long, value_parser = parse_size, requires = "unlabelable")]
        unlabelable_burst: Option<u64>,
        /// Accept IP only from sources in PREFIX/LEN (repeatable, up to 1024): any other
        /// source is dropped and counted (`drop_source`), as ingress filtering (BCP 38)
        /// does; IPv6 link-local sources stay accepted. `--flow-key source` and the weight
        /// classes believe source addresses: filter them here where no router before does.
        #[arg(long = "allow-source", value_name = "PREFIX/LEN")]
        allow_sources: Vec<csfq_dp::Prefix>,
        /// How a flow's rate is measured: `eq3` (CSFQ's Eq. 3, averaging constant --k) or
        /// `tsw` (the Time Sliding Window of CS-FNE's edges, Kim's thesis Fig. 3-1, window
        /// --k), for the edges of a CS-FNE island (`csfq dp csfne attach`).
        #[arg(long, default_value = "eq3", value_parser = ["eq3", "tsw"])]
        meter: String,
        /// Write TUF tags T(R (1 - X) / w) instead of labels (R the flow's rate by Eq. 3, K
        /// --k; X a per-flow van der Corput sequence): the edges of a TUF island (`csfq dp
        /// tuf attach`). Every flow is tagged as unresponsive. Not with --meter tsw.
        #[arg(long)]
        tuf: bool,
        /// With --tuf: TCP packets that arrive tagged by their sender's TUF tagger (`csfq
        /// dp tuf-source attach` on the sending host) keep their tags; the rest is tagged
        /// here. The hosts behind this edge are then trusted with their TCPs' tags.
        #[arg(long, requires = "tuf")]
        keep_source_tags: bool,
    },
}

#[derive(Clone, Copy)]
pub(crate) enum UnlabelablePolicy {
    Pass,
    Drop,
    Police(u64),
}

fn parse_unlabelable(s: &str) -> Result<UnlabelablePolicy, String> {
    match s {
        "pass" => Ok(UnlabelablePolicy::Pass),
        "drop" => Ok(UnlabelablePolicy::Drop),
        _ => parse_rate(s).map(UnlabelablePolicy::Police).map_err(|e| {
            format!("{e} (expected `pass`, `drop`, or a policing rate such as 2mbit)")
        }),
    }
}

#[derive(Subcommand)]
pub(crate) enum CoreCommand {
    /// Attach the core to an interface's egress (again: update its settings).
    Attach {
        /// The bottleneck interface.
        #[arg(long, value_name = "IF")]
        dev: String,
        /// The link's rate C, in tc's units (e.g. 10mbit) [default: the rate of the
        /// shaper on IF, read from its root qdisc: tbf, or htb's default class].
        #[arg(long, value_parser = parse_rate)]
        rate: Option<u64>,
        /// The virtual queue's size, in tc's size units [default: the limit of the
        /// shaper's queue on IF, read from its root qdisc: tbf, htb's default class's
        /// FIFO, bfifo or pfifo]. The core models the real queue with it: a smaller one
        /// tail-drops before the real queue is full, as drop-tail would.
        #[arg(long, value_parser = parse_size)]
        limit: Option<u64>,
        /// Queue below which alpha = 0 is kept [default: half the limit].
        #[arg(long, value_parser = parse_size)]
        threshold: Option<u64>,
        /// K_alpha, in tc's time units [default: twice the limit's drain time at the
        /// rate, within 1ms and 1s].
        #[arg(long, value_parser = parse_time)]
        k_alpha: Option<u64>,
        /// K_c, in tc's time units [default: as --k-alpha].
        #[arg(long, value_parser = parse_time)]
        k_c: Option<u64>,
        /// How alpha is estimated: `histogram` (solved from the labels of each window)
        /// or `paper` (alpha *= C/F per congested window, the paper's).
        #[arg(long, default_value = "histogram", value_parser = ["histogram", "paper"])]
        estimator: String,
        #[command(flatten)]
        trust: crate::dp_cores::TrustArgs,
        /// The clock the core reads: `fine` (bpf_ktime_get_ns) or `coarse` (the kernel's
        /// tick counter, cheaper; the virtual queue then drains once a tick, so a tick must
        /// be at most a quarter of the limit's drain time, K_alpha and K_c; experimental,
        /// README "The programs' clock").
        #[arg(long, default_value = "fine", value_parser = ["fine", "coarse"])]
        clock: String,
        /// Stay in the foreground and follow the shaper: read IF's root qdisc every
        /// --follow-interval and, when its rate or limit changes, update the core with
        /// them (and the K_alpha, K_c and threshold that follow, where not given), saying
        /// so. Values given on the command line stay. A trusted interface deleted and made
        /// again (another index) is trusted again. Stops on Ctrl-C or SIGTERM, leaving the
        /// core attached, or when the core is detached.
        #[arg(long)]
        follow: bool,
        /// How often --follow reads the shaper, in tc's time units.
        #[arg(long, default_value = "1s", value_parser = parse_time, requires = "follow")]
        follow_interval: u64,
    },
}

#[derive(Subcommand)]
pub(crate) enum MayCommand {
    /// Attach MAY to an interface's egress (again: update its settings, keeping its table
    /// and v). The defaults are the MAY paper's (Section IV).
    Attach {
        /// The bottleneck interface.
        #[arg(long, value_name = "IF")]
        dev: String,
        /// The link's rate C, in tc's units (e.g. 10mbit): the utilization is a rate over
        /// it [default: the rate of the shaper on IF, read from its root qdisc: tbf, or
        /// htb's default class].
        #[arg(long, value_parser = parse_rate)]
        rate: Option<u64>,
        /// Table size, entries: flows that lost a packet, rounded up to a multiple of 4 (a
        /// flow may take an entry in two sets of four, evicting the flow of the eight whose
        /// last drop is the oldest when all are taken: size it at twice the lossy flows or
        /// more) [default: 65536 on a new attach; an attached MAY keeps its table, which
        /// cannot be resized in place].
        #[arg(long)]
        table: Option<u32>,
        /// Delta: how often v is updated and the table's drops averaged, in tc's time
        /// units.
        #[arg(long, default_value = "1s", value_parser = parse_time)]
        interval: u64,
        /// u0: the utilization v's controller holds the link at.
        #[arg(long, default_value_t = 0.98)]
        target_utilization: f64,
        /// kappa: the controller's gain (v += kappa (utilization - u0) per interval).
        #[arg(long, default_value_t = 0.1)]
        gain: f64,
        /// q_w: the weight of each interval's drops in a flow's average delta.
        #[arg(long, default_value_t = 0.05)]
        q_w: f64,
        /// T0: an entry that has not lost a packet for this long leaves the table, in tc's
        /// time units.
        #[arg(long, default_value = "64s", value_parser = parse_time)]
        timeout: u64,
        /// S0: a packet of a flow not in the table is sampled into it with probability
        /// 1/S0 (dropped if the utilization is above u0).
        #[arg(long, default_value_t = 1000.0)]
        s0: f64,
        /// What the utilization counts: `passed`, the bytes MAY passes on to the queue
        /// (Eq. 3's rate after MAY's own drops), or `arrivals`, every byte that reaches
        /// MAY, its own drops included (a flow MAY has shut off then holds v up, and with
        /// an unresponsive flow above u0 C alone v grows until every flow in the table is
        /// dropped; README, "MAY on a real router").
        #[arg(long, default_value = "passed", value_parser = ["passed", "arrivals"])]
        utilization: String,
        /// The clock MAY reads: `fine` (bpf_ktime_get_ns) or `coarse` (the kernel's tick
        /// counter: one tick's resolution, 1-4 ms, cheaper; Delta and T0 must then be at
        /// least a hundred ticks; README "The programs' clock").
        #[arg(long, default_value = "fine", value_parser = ["fine", "coarse"])]
        clock: String,
    },
}

#[derive(Subcommand)]
pub(crate) enum LoopCommand {
    /// The ingress edge: an htb class per loop on IF (towards the interior) at the rate
    /// lambda the loop's controller sets every tau, and a control message per loop every
    /// tau, in band. IF must have no root qdisc of its own. The defaults are the overlay
    /// paper's (Section 7), with a full-size frame as its packet.
    Ingress {
        /// The interface towards the interior.
        #[arg(long, value_name = "IF")]
        dev: String,
        /// The egress daemon's address.
        #[arg(long, value_name = "ADDR:PORT")]
        egress: std::net::SocketAddr,
        /// A loop: the destinations it carries, and its service:
        /// PREFIX/LEN[,assured=RATE[,gamma=G]] or PREFIX/LEN,leased=RATE. Repeat for more
        /// loops, in the same order as at the egress.
        #[arg(long = "loop", value_name = "SPEC", required = true)]
        loops: Vec<csfq_dp::loops::LoopSpec>,
        /// The rate of IF, the most a loop may get, in tc's units (e.g. 100mbit).
        #[arg(long, value_parser = parse_rate)]
        rate: u64,
        /// tau: how often the ingress sends a control message and measures its rate, in
        /// tc's time units.
        #[arg(long, default_value = "10ms", value_parser = parse_time)]
        tau: u64,
        /// sigma, the packet the thresholds and the increase are counted in, bytes.
        #[arg(long, default_value_t = 1514)]
        packet_bytes: u32,
        /// Each loop's ingress queue, packets.
        #[arg(long, default_value_t = 1000)]
        queue: u32,
        /// Stop after this long, in tc's time units (default: until Ctrl-C or SIGTERM).
        #[arg(long, value_parser = parse_time)]
        duration: Option<u64>,
    },
    /// The egress edge: counts each loop's bytes arriving on IF (from the interior) and
    /// answers the ingress every interval T with the loop's output rate mu and its
    /// accumulation.
    Egress {
        /// The interface from the interior.
        #[arg(long, value_name = "IF")]
        dev: String,
        /// Where control messages come to.
        #[arg(long, value_name = "ADDR:PORT")]
        listen: std::net::SocketAddr,
        /// A loop's destination prefix (PREFIX/LEN, options ignored), in the same order
        /// as at the ingress.
        #[arg(long = "loop", value_name = "SPEC", required = true)]
        loops: Vec<csfq_dp::loops::LoopSpec>,
        /// T: the measurement interval (the ingress's tau), in tc's time units.
        #[arg(long, default_value = "10ms", value_parser = parse_time)]
        interval: u64,
        /// Stop after this long, in tc's time units (default: until Ctrl-C or SIGTERM).
        #[arg(long, value_parser = parse_time)]
        duration: Option<u64>,
    },
}

/// The link's rate C and the bytes its queue holds, for a program in front of the shaper
/// on `dev`: each as given, else read from the shaper (csfq_dp::shaper). A value given
/// that differs from the shaper's is kept, with a warning; one neither given nor readable
/// is an error that says what was found. Without `need_limit` (MAY) the limit is 0.
pub(crate) fn link_of(
    dev: &str,
    rate: Option<u64>,
    limit: Option<u64>,
    need_limit: bool,
) -> Result<(u64, u64)> {
    let shaper = match csfq_dp::read_shaper(dev) {
        Ok(s) => Some(s),
        Err(e @ csfq_dp::DpError::NoSuchInterface(_)) => return Err(e.into()),
        Err(e) if rate.is_none() || (need_limit && limit.is_none()) => {
            return Err(anyhow::Error::new(e).context(format!(
                "reading the shaper on {dev} (give {} to attach without it)",
                if need_limit {
                    "--rate and --limit"
                } else {
                    "--rate"
                }
            )))
        }
        Err(_) => None,
    };
    let what = shaper.as_ref().map_or("?".to_string(), |s| s.what.clone());
    let pick = |given: Option<u64>,
                found: Option<u64>,
                flag: &str,
                show: fn(u64) -> String|
     -> Result<u64> {
        match (given, found) {
            (Some(g), Some(f)) if g != f => {
                eprintln!(
                    "warning: --{flag} {} on {dev}, whose root qdisc ({what}) has {}: the \
                     core models a link that is not there (leave out --{flag} to use the \
                     qdisc's)",
                    show(g),
                    show(f)
                );
                Ok(g)
            }
            (Some(g), _) => Ok(g),
            (None, Some(f)) => Ok(f),
            (None, None) => anyhow::bail!(
                "the root qdisc on {dev} ({what}) gives no {}: give --{flag} (csfq reads \
                 tbf, htb with a default class, bfifo and pfifo)",
                if flag == "rate" { "rate" } else { "byte limit" }
            ),
        }
    };
    let rate = pick(
        rate,
        shaper.as_ref().and_then(|s| s.rate_bps),
        "rate",
        |v| format!("{} Mbit/s", v as f64 / 1e6),
    )?;
    if !need_limit {
        return Ok((rate, 0));
    }
    let limit = pick(
        limit,
        shaper.as_ref().and_then(|s| s.limit_bytes),
        "limit",
        |v| format!("{v} bytes"),
    )?;
    Ok((rate, limit))
}

/// `csfq dp core attach --follow`: every `interval_ns`, reads the shaper on `dev` and
/// the indexes of the trusted interfaces' names; when either changes, updates the core
/// with `settings()` (which reads the shaper and resolves the names again, as the attach
/// did). Returns on Ctrl-C or SIGTERM, or once the core is no longer attached.
fn follow_shaper(
    dev: &str,
    mut current: CoreSettings,
    interval_ns: u64,
    settings: impl Fn() -> Result<CoreSettings>,
) -> Result<()> {
    use std::sync::atomic::{AtomicBool, Ordering};
    static STOP: AtomicBool = AtomicBool::new(false);
    let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::Relaxed));
    let names: Vec<String> = match &current.trust {
        csfq_dp::CoreTrust::Interfaces(n) => n.clone(),
        csfq_dp::CoreTrust::Any => Vec::new(),
    };
    // What the core depends on: the shaper's rate and limit, each trusted name's index.
    let read = || {
        let shaper = csfq_dp::read_shaper(dev)
            .ok()
            .map(|s| (s.rate_bps, s.limit_bytes));
        let trusted: Vec<Option<u32>> = names.iter().map(|n| csfq_dp::ifindex(n).ok()).collect();
        (shaper, trusted)
    };
    let mut seen = read();
    eprintln!(
        "following the shaper on {dev}{} every {} ms (Ctrl-C stops; the core stays)",
        if names.is_empty() {
            ""
        } else {
            " and the trusted interfaces"
        },
        interval_ns / 1_000_000
    );
    let step = std::time::Duration::from_millis(50);
    loop {
        let wake = std::time::Instant::now() + std::time::Duration::from_nanos(interval_ns);
        while std::time::Instant::now() < wake {
            if STOP.load(Ordering::Relaxed) {
                eprintln!("stopped following; the core stays on {dev}");
                return Ok(());
            }
            std::thread::sleep(step);
        }
        if !csfq_dp::is_attached(dev, csfq_dp::Role::Core) {
            eprintln!("the core on {dev} was detached: no longer following");
            return Ok(());
        }
        let now = read();
        if now == seen {
            continue;
        }
        let (shaper_changed, trust_changed) = (now.0 != seen.0, now.1 != seen.1);
        seen = now.clone();
        if now.0.is_none() {
            eprintln!("warning: no shaper to read on {dev}: the core keeps its settings");
            continue;
        }
        let gone: Vec<&str> = names
            .iter()
            .zip(&now.1)
            .filter(|(_, i)| i.is_none())
            .map(|(n, _)| n.as_str())
            .collect();
        if !gone.is_empty() {
            eprintln!(
                "warning: trusted interface(s) {} gone: their labels are not believed until \
                 they are back; the core keeps its settings",
                gone.join(", ")
            );
            continue;
        }
        let s = match settings() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("warning: the core keeps its settings: {e:#}");
                continue;
            }
        };
        if s == current && !trust_changed {
            continue;
        }
        csfq_dp::attach_core(dev, &s)?;
        if shaper_changed {
            eprintln!(
                "the shaper on {dev} changed: the core now has C = {} Mbit/s, limit {} \
                 bytes, K_alpha {:.1} ms, K_c {:.1} ms",
                s.rate_bps as f64 / 1e6,
                s.limit_bytes,
                s.k_alpha_ns as f64 / 1e6,
                s.k_c_ns as f64 / 1e6
            );
        }
        if trust_changed {
            let now: Vec<String> = names
                .iter()
                .zip(&now.1)
                .map(|(n, i)| format!("{n} = ifindex {}", i.unwrap_or(0)))
                .collect();
            eprintln!("the trusted interfaces are now {}", now.join(", "));
        }
        current = s;
    }
}

pub(crate) fn outcome(o: AttachOutcome, what: &str, dev: &str) {
    match o {
        AttachOutcome::Attached => println!("csfq {what} attached to {dev}"),
        AttachOutcome::Updated => println!("csfq {what} on {dev} was attached: settings updated"),
    }
}

/// A core attached ([`outcome`]), then a warning for each trusted interface whose other
/// end, where this host can see it, labels nothing it sends
/// (`csfq_dp::unguarded_trusted`).
pub(crate) fn core_outcome(o: AttachOutcome, what: &str, dev: &str, trust: &csfq_dp::CoreTrust) {
    outcome(o, what, dev);
    if let csfq_dp::CoreTrust::Interfaces(names) = trust {
        for u in csfq_dp::unguarded_trusted(names) {
            eprintln!("{}", crate::paragraph("warning: ", &u.to_string()));
        }
    }
}

pub fn dp(args: Dp) -> Result<()> {
    if let Some(ns) = &args.netns {
        csfq_dp::enter_netns(ns)?;
    } else {
        csfq_dp::adopt_current_netns()?;
    }
    run(args.cmd)
}

/// Runs one `csfq dp` command in the namespace already entered.
pub(crate) fn run(cmd: DpCommand) -> Result<()> {
    match cmd {
        DpCommand::Edge {
            cmd:
                EdgeCommand::Attach {
                    dev,
                    k,
                    weights,
                    default_weight,
                    flows,
                    egress,
                    unlabelable,
                    unlabelable_burst,
                    flow_key,
                    clock,
                    allow_sources,
                    meter,
                    tuf,
                    keep_source_tags,
                },
        } => {
            let unlabelable = match (unlabelable, unlabelable_burst) {
                (UnlabelablePolicy::Police(rate_bps), burst) => csfq_dp::Unlabelable::Police {
                    rate_bps,
                    burst_bytes: match burst {
                        None => csfq_dp::Unlabelable::default_burst(rate_bps),
                        Some(b) => bytes("unlabelable-burst", b)?,
                    },
                },
                (_, Some(_)) => anyhow::bail!(
                    "invalid --unlabelable-burst: only with --unlabelable RATE (policing)"
                ),
                (UnlabelablePolicy::Pass, None) => csfq_dp::Unlabelable::Pass,
                (UnlabelablePolicy::Drop, None) => csfq_dp::Unlabelable::Drop,
            };
            let s = EdgeSettings {
                k_ns: k,
                default_weight,
                weights,
                flows,
                ingress: !egress,
                unlabelable,
                flow_key,
                coarse_clock: clock == "coarse",
                allow_sources,
                meter: if meter == "tsw" {
                    csfq_dp::Meter::Tsw
                } else {
                    csfq_dp::Meter::Eq3
                },
                tuf,
                keep_source_tags,
            };
            outcome(csfq_dp::attach_edge(&dev, &s)?, "edge", &dev);
        }
        DpCommand::Core {
            cmd:
                CoreCommand::Attach {
                    dev,
                    rate,
                    limit,
                    threshold,
                    k_alpha,
                    k_c,
                    estimator,
                    trust,
                    clock,
                    follow,
                    follow_interval,
                },
        } => {
            let settings = || -> Result<CoreSettings> {
                let (rate, limit) = link_of(&dev, rate, limit, true)?;
                let mut s = CoreSettings::with_limit(rate, bytes("limit", limit)?);
                s.threshold_bytes = threshold.map(|t| bytes("threshold", t)).transpose()?;
                s.k_alpha_ns = k_alpha.unwrap_or(s.k_alpha_ns);
                s.k_c_ns = k_c.or(k_alpha).unwrap_or(s.k_c_ns);
                s.estimator = if estimator == "paper" {
                    csfq_algo::csfq::Estimator::Paper
                } else {
                    csfq_algo::csfq::Estimator::Histogram
                };
                s.trust = trust.trust();
                s.drop_unparsed = trust.drop_unparsed();
                s.coarse_clock = clock == "coarse";
                Ok(s)
            };
            let s = settings()?;
            core_outcome(csfq_dp::attach_core(&dev, &s)?, "core", &dev, &s.trust);
            if follow {
                follow_shaper(&dev, s, follow_interval, settings)?;
            }
        }
        DpCommand::May {
            cmd:
                MayCommand::Attach {
                    dev,
                    rate,
                    table,
                    interval,
                    target_utilization,
                    gain,
                    q_w,
                    timeout,
                    s0,
                    utilization,
                    clock,
                },
        } => {
            let rate = match rate {
                Some(r) => r,
                None => link_of(&dev, None, None, false)?.0,
            };
            let s = MaySettings {
                rate_bps: rate,
                table,
                interval_ns: interval,
                target_utilization,
                gain,
                q_w,
                timeout_ns: timeout,
                s0,
                passed_only: utilization == "passed",
                coarse_clock: clock == "coarse",
            };
            outcome(csfq_dp::attach_may(&dev, &s)?, "MAY", &dev);
        }
        DpCommand::Csfne { cmd } => crate::dp_cores::run(cmd)?,
        DpCommand::Tuf { cmd } => crate::dp_cores::run_tuf(cmd)?,
        DpCommand::TufSource { cmd } => crate::dp_cores::run_tuf_source(cmd)?,
        DpCommand::Loop { cmd } => {
            static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
            let _ = ctrlc::set_handler(|| STOP.store(true, std::sync::atomic::Ordering::Relaxed));
            let ns = std::time::Duration::from_nanos;
            let say = |line: &str| eprintln!("{line}");
            match cmd {
                LoopCommand::Ingress {
                    dev,
                    egress,
                    loops,
                    rate,
                    tau,
                    packet_bytes,
                    queue,
                    duration,
                } => {
                    let s = csfq_dp::loops::IngressSettings {
                        dev: dev.clone(),
                        egress,
                        loops,
                        tau: ns(tau),
                        max_rate_bps: rate,
                        packet_bytes,
                        queue_packets: queue,
                        duration: duration.map(ns),
                    };
                    eprintln!(
                        "csfq loop ingress on {dev}: {} loop(s) to {egress}",
                        s.loops.len()
                    );
                    csfq_dp::loops::run_ingress(&s, &STOP, say)?;
                    println!("csfq loop ingress on {dev} stopped; its htb and program removed");
                }
                LoopCommand::Egress {
                    dev,
                    listen,
                    loops,
                    interval,
                    duration,
                } => {
                    let s = csfq_dp::loops::EgressSettings {
                        dev: dev.clone(),
                        listen,
                        loops,
                        interval: ns(interval),
                        duration: duration.map(ns),
                    };
                    eprintln!(
                        "csfq loop egress on {dev}: {} loop(s), listening on {listen}",
                        s.loops.len()
                    );
                    csfq_dp::loops::run_egress(&s, &STOP, say)?;
                    println!("csfq loop egress on {dev} stopped; its program removed");
                }
            }
        }
        DpCommand::Stats {
            json, watch: None, ..
        } => {
            let st = csfq_dp::stats()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&st)?);
            } else {
                print_stats(&st);
            }
        }
        DpCommand::Stats {
            json,
            watch: Some(secs),
            count,
        } => watch_stats(secs, count, json)?,
        DpCommand::Bench { secs, repeat, json } => {
            if !(0.1..=60.0).contains(&secs) {
                anyhow::bail!("--secs must be from 0.1 to 60");
            }
            let r = csfq_dp::bench::veth_path(secs, repeat)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                let mut t = crate::table(vec![
                    "programs on the path",
                    "packets/s",
                    "vs none",
                    "spread",
                    "ns/packet (BPF statistics)",
                ]);
                let ns = |name: &str, v: Option<f64>| v.map(|v| format!("{name} {v:.0}"));
                for c in &r {
                    let cost: Vec<String> = [
                        ns("empty", c.empty_ns),
                        ns("edge", c.edge_ns),
                        ns("core", c.core_ns),
                        ns("may", c.may_ns),
                        ns("csfne", c.csfne_ns),
                        ns("tuf", c.tuf_ns),
                    ]
                    .into_iter()
                    .flatten()
                    .collect();
                    t.add_row(vec![
                        c.case.to_string(),
                        format!("{:.0}", c.pps),
                        format!("{:.3}", c.ratio),
                        format!("{:.3}-{:.3}", c.ratio_min, c.ratio_max),
                        if cost.is_empty() {
                            "-".into()
                        } else {
                            cost.join(", ")
                        },
                    ]);
                }
                println!(
                    "64-byte UDP through a veth pair, one sender thread, {repeat} interleaved \
                     repetition{} x {secs} s: median packets/s, median ratio to none in the \
                     same repetition and its range; ns/packet from the kernel's BPF run-time \
                     statistics (run_time_ns / run_cnt)",
                    if repeat == 1 { "" } else { "s" }
                );
                println!("{t}");
                let alone = |case: &str| r.iter().find(|c| c.case == case);
                if let (Some(floor), Some(edge), Some(core)) = (
                    alone("empty").and_then(|c| c.empty_ns),
                    alone("edge").and_then(|c| c.edge_ns),
                    alone("core").and_then(|c| c.core_ns),
                ) {
                    println!(
                        "An empty program costs {floor:.0} ns/packet by the same measure (the \
                         statistics' clock reads and the call): beyond it, the edge's own work \
                         is {:.0} ns ({} with the coarse clock) and the core's {:.0} ns per \
                         packet{}.",
                        edge - floor,
                        alone("edge, coarse clock")
                            .and_then(|c| c.edge_ns)
                            .map(|e| format!("{:.0} ns", e - floor))
                            .unwrap_or_else(|| "not measured".into()),
                        core - floor,
                        alone("may")
                            .and_then(|c| c.may_ns)
                            .map(|m| {
                                format!(
                                    ", MAY's {:.0} ns{}",
                                    m - floor,
                                    alone("may, coarse clock")
                                        .and_then(|c| c.may_ns)
                                        .map(|c| format!(
                                            " ({:.0} with the coarse clock)",
                                            c - floor
                                        ))
                                        .unwrap_or_default()
                                )
                            })
                            .unwrap_or_default()
                    );
                    if let (Some(tsw), Some(csfne)) = (
                        alone("edge, tsw meter").and_then(|c| c.edge_ns),
                        alone("csfne").and_then(|c| c.csfne_ns),
                    ) {
                        println!(
                            "CS-FNE, beyond the empty program: the edge with the TSW meter {:.0} \
                             ns, the CS-FNE core {:.0} ns per packet (its lock and a \
                             fingerprint; uncongested here: no ring search, no draw).",
                            tsw - floor,
                            csfne - floor
                        );
                    }
                    if let (Some(tags), Some(untagged), Some(tagged)) = (
                        alone("edge, tuf tags").and_then(|c| c.edge_ns),
                        alone("tuf").and_then(|c| c.tuf_ns),
                        alone("edge (tuf)+tuf").and_then(|c| c.tuf_ns),
                    ) {
                        println!(
                            "TUF, beyond the empty program: the edge writing tags {:.0} ns, \
                             the TUF core {:.0} ns per tagged packet (no lock) and {:.0} per \
                             untagged one (tagged there, under its lock).",
                            tags - floor,
                            tagged - floor,
                            untagged - floor
                        );
                    }
                    if let (Some(fine), Some(coarse)) =
                        (alone("edge+core"), alone("edge+core, coarse clocks"))
                    {
                        let beyond =
                            |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.0}", v - floor));
                        println!(
                            "Edge and core together, beyond the empty program: the edge {} ns \
                             and the core {} ns per labeled packet on the fine clock, {} and {} \
                             on the coarse clock.",
                            beyond(fine.edge_ns),
                            beyond(fine.core_ns),
                            beyond(coarse.edge_ns),
                            beyond(coarse.core_ns),
                        );
                    }
                }
                if let (Some(c), Some(l)) = (alone("2 CPUs: core"), alone("2 CPUs: edge+core")) {
                    println!(
                        "Two senders, each pinned to its own CPU, through one core: {:.3} of \
                         the rate with no program on the same two CPUs ({:.3}-{:.3}) with \
                         unlabeled packets, {:.3} ({:.3}-{:.3}) with the edge before it; \
                         counted at the far end. The core costs {} ns per labeled packet on \
                         two CPUs against {} on one.",
                        c.ratio,
                        c.ratio_min,
                        c.ratio_max,
                        l.ratio,
                        l.ratio_min,
                        l.ratio_max,
                        l.core_ns.map_or("-".into(), |n| format!("{n:.0}")),
                        alone("edge+core")
                            .and_then(|c| c.core_ns)
                            .map_or("-".into(), |n| format!("{n:.0}")),
                    );
                }
                if let Some(m) = alone("2 CPUs: may, coarse clock") {
                    println!(
                        "Two senders through MAY on the coarse clock: {:.3} ({:.3}-{:.3}) of \
                         the rate with no program on the same two CPUs; MAY costs {} ns per \
                         packet on two CPUs against {} on one.",
                        m.ratio,
                        m.ratio_min,
                        m.ratio_max,
                        m.may_ns.map_or("-".into(), |n| format!("{n:.0}")),
                        alone("may, coarse clock")
                            .and_then(|c| c.may_ns)
                            .map_or("-".into(), |n| format!("{n:.0}")),
                    );
                }
            }
        }
        DpCommand::Demo { secs } => {
            if let Err(e) = crate::demo::demo(secs) {
                if crate::demo::interrupted() {
                    eprintln!("interrupted: the demo's namespaces are removed");
                    std::process::exit(130);
                }
                return Err(e);
            }
        }
        DpCommand::Twin(a) => crate::twin::run(a)?,
        DpCommand::Exporter { listen } => crate::exporter::serve(listen)?,
        DpCommand::Detach { dev: Some(dev), .. } => {
            let removed = csfq_dp::detach(&dev)?;
            let names: Vec<_> = removed.iter().map(|r| r.name()).collect();
            println!("csfq {} detached from {dev}", names.join(" and "));
        }
        DpCommand::Apply { file, prune } => crate::dp_apply::apply(&file, prune)?,
        DpCommand::Detach { dev: None, .. } => {
            let removed = csfq_dp::detach_stale()?;
            if removed.is_empty() {
                println!("csfq has no stale attachment");
            }
            for (scope, dev, role) in removed {
                println!("removed the stale {} of {dev} ({scope})", role.name());
            }
        }
    }
    Ok(())
}

pub(crate) fn mbps(bps: u64) -> String {
    format!("{:.3}", bps as f64 / 1e6)
}

/// What a core (CSFQ's, CS-FNE's or TUF's: `role`) on `dev` believes of its shaper,
/// `(rate, limit)`, against the shaper now, and whose labels it trusts.
pub(crate) fn print_shaper_and_trust(
    role: &str,
    dev: &str,
    (rate_bps, limit_bytes): (u64, u64),
    shaper_now: Option<&csfq_dp::ShaperNow>,
    trusted: Option<&[u32]>,
    trusted_now: &[(u32, Option<String>)],
    drop_unparsed: bool,
) {
    if drop_unparsed {
        println!("  frames it cannot parse are dropped (--unparsed drop; ARP spared)");
    }
    if let Some(now) = shaper_now {
        let rate_differs = now.rate_bps.is_some_and(|r| r != rate_bps);
        let limit_differs = now.limit_bytes.is_some_and(|l| l != limit_bytes);
        if rate_differs || limit_differs {
            println!(
                "  MISMATCH: the shaper ({}) now has {} and a limit of {}, not the {role}'s: \
                 csfq dp {role} attach --dev {dev} again to follow it",
                now.what,
                now.rate_bps
                    .map_or("no rate".into(), |r| format!("{} Mbit/s", mbps(r))),
                now.limit_bytes.map_or("none".into(), |l| format!("{l} B")),
            );
        }
    }
    match trusted {
        None => println!("  labels trusted from every interface"),
        Some(ix) => println!(
            "  labels trusted only from ifindex {}",
            ix.iter()
                .map(|i| match trusted_now.iter().find(|t| t.0 == *i) {
                    Some((_, Some(name))) => format!("{i} ({name})"),
                    _ => i.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
    for (i, _) in trusted_now.iter().filter(|t| t.1.is_none()) {
        println!(
            "  MISSING: trusted ifindex {i} is no interface now (deleted: one made again under its name has another index, and its labels are not believed); csfq dp {role} attach --dev {dev} again to trust it"
        );
    }
}

/// One counter's rate between two reads of `csfq dp stats --watch`.
#[derive(serde::Serialize)]
struct Rate<'a> {
    scope: &'a str,
    interface: &'a str,
    role: &'static str,
    counter: &'static str,
    packets_per_s: f64,
    bits_per_s: f64,
}

/// Each counter's rate from `before` to `now`, `dt` seconds apart: counters of programs
/// present in both reads (one attached between them has none yet; a counter that went
/// back, as a program detached and attached again usually shows, has none either; one
/// attached again whose counters already passed their old values is not told apart).
fn rates<'a>(before: &[InterfaceStats], now: &'a [InterfaceStats], dt: f64) -> Vec<Rate<'a>> {
    let mut out = Vec::new();
    for s in now {
        let Some(b) = before
            .iter()
            .find(|b| b.scope == s.scope && b.interface == s.interface && b.role == s.role)
        else {
            continue;
        };
        for (name, c) in &s.counters {
            let Some(p) = b.counters.get(name) else {
                continue;
            };
            if c.packets < p.packets || c.bytes < p.bytes {
                continue;
            }
            out.push(Rate {
                scope: &s.scope,
                interface: &s.interface,
                role: s.role.name(),
                counter: name,
                packets_per_s: (c.packets - p.packets) as f64 / dt,
                bits_per_s: (c.bytes - p.bytes) as f64 * 8.0 / dt,
            });
        }
    }
    out
}

/// `csfq dp stats --watch SECS`: reads every `secs` seconds (at most `count` times), and
/// prints the stats with each counter's rate since the last read; JSON Lines under `json`.
fn watch_stats(secs: f64, count: Option<u64>, json: bool) -> Result<()> {
    use std::io::{IsTerminal as _, Write as _};
    if !(0.1..=3600.0).contains(&secs) {
        anyhow::bail!("--watch takes from 0.1 to 3600 seconds, not {secs}");
    }
    let redraw = !json && std::io::stdout().is_terminal();
    let start = std::time::Instant::now();
    let mut last: Option<(std::time::Instant, Vec<InterfaceStats>)> = None;
    let mut n = 0;
    loop {
        let st = csfq_dp::stats()?;
        let at = std::time::Instant::now();
        let r = last.as_ref().map_or_else(Vec::new, |(t, b)| {
            rates(b, &st, at.duration_since(*t).as_secs_f64())
        });
        let mut out = std::io::stdout().lock();
        if json {
            let doc = serde_json::json!({
                "time_s": at.duration_since(start).as_secs_f64(),
                "stats": &st,
                "rates": &r,
            });
            writeln!(out, "{doc}")?;
        } else {
            if redraw {
                write!(out, "\x1b[H\x1b[2J")?;
            }
            writeln!(out, "every {secs} s, read {} (Ctrl-C to stop)", n + 1)?;
            drop(out);
            print_stats(&st);
            if !r.is_empty() {
                let mut t =
                    crate::table(vec!["interface", "role", "counter", "packets/s", "Mbit/s"]);
                for x in r.iter().filter(|x| x.packets_per_s > 0.0) {
                    t.add_row(vec![
                        if x.scope == "host" {
                            x.interface.to_string()
                        } else {
                            format!("{} ({})", x.interface, x.scope)
                        },
                        x.role.to_string(),
                        x.counter.to_string(),
                        format!("{:.0}", x.packets_per_s),
                        format!("{:.3}", x.bits_per_s / 1e6),
                    ]);
                }
                println!("since the last read:\n{t}");
            }
        }
        std::io::stdout().flush()?;
        n += 1;
        if count.is_some_and(|c| n >= c) {
            return Ok(());
        }
        last = Some((at, st));
        std::thread::sleep(std::time::Duration::from_secs_f64(secs));
    }
}

fn print_stats(st: &[InterfaceStats]) {
    if st.is_empty() {
        println!(
            "csfq has nothing attached (see `csfq dp edge attach`, `csfq dp core attach`, \
             `csfq dp may attach`, `csfq dp csfne attach`, `csfq dp tuf attach`, \
             `csfq dp loop`)"
        );
        return;
    }
    for s in st {
        let scope = if s.scope == "host" {
            String::new()
        } else {
            format!(" ({})", s.scope)
        };
        let stale = if s.stale {
            "   STALE: attached nowhere, its interface or namespace is gone (csfq dp detach --stale)"
        } else {
            ""
        };
        println!("{} {}{scope}{stale}", s.role.name(), s.interface);
        if let Some(c) = &s.core {
            // A second or more without a packet queued is worth saying: the estimates
            // shown are decayed over it.
            let idle = if c.idle_ns >= 1_000_000_000 {
                format!("   idle {:.1} s", c.idle_ns as f64 / 1e9)
            } else {
                String::new()
            };
            println!(
                "  C {} Mbit/s   A {} Mbit/s   F {} Mbit/s   alpha {} Mbit/s   {}   virtual queue {} of {} B   {} clock{idle}",
                mbps(c.capacity_bps),
                mbps(c.arrival_bps),
                mbps(c.accepted_bps),
                mbps(c.alpha_bps),
                if c.congested { "congested" } else { "uncongested" },
                c.queue_bytes,
                c.limit_bytes,
                c.clock
            );
            print_shaper_and_trust(
                "core",
                &s.interface,
                (c.capacity_bps, c.limit_bytes),
                c.shaper_now.as_ref(),
                c.trusted_ifindexes.as_deref(),
                &c.trusted_now,
                c.drop_unparsed,
            );
        }
        if let Some(c) = &s.tuf {
            crate::dp_cores::print_tuf(c);
            print_shaper_and_trust(
                "tuf",
                &s.interface,
                (c.capacity_bps, c.limit_bytes),
                c.shaper_now.as_ref(),
                c.trusted_ifindexes.as_deref(),
                &c.trusted_now,
                c.drop_unparsed,
            );
        }
        if let Some(c) = &s.tuf_source {
            crate::dp_cores::print_tuf_source(c);
        }
        if let Some(c) = &s.csfne {
            crate::dp_cores::print_csfne(c);
            print_shaper_and_trust(
                "csfne",
                &s.interface,
                (c.capacity_bps, c.limit_bytes),
                c.shaper_now.as_ref(),
                c.trusted_ifindexes.as_deref(),
                &c.trusted_now,
                c.drop_unparsed,
            );
        }
        if let Some(m) = &s.may {
            println!(
                "  C {} Mbit/s   v {:.6}   utilization {:.3} (u0 {:.3}; {}) over the last {} ms   intervals {}   {} clock",
                mbps(m.capacity_bps),
                m.v,
                m.utilization,
                m.target_utilization,
                m.utilization_counts,
                m.interval_ns as f64 / 1e6,
                m.intervals,
                m.clock
            );
            println!(
                "  table: {} entries of {} ({} lost a packet within T0)",
                m.table_entries, m.table_size, m.table_live
            );
        }
        for l in s.loops.iter().flatten() {
            let daemon = if l.daemon_running {
                format!("daemon pid {}", l.pid)
            } else {
                format!(
                    "daemon pid {} NOT RUNNING (csfq dp detach --dev {})",
                    l.pid, s.interface
                )
            };
            println!(
                "  loop {}: lambda {} Mbit/s   mu {} Mbit/s   accumulation {} B   epochs {}{}   controls {}   feedbacks {}   lost {} B   counted {} pkts {} B   {daemon}",
                l.index,
                mbps(l.lambda_bps),
                mbps(l.mu_bps),
                l.accumulation_bytes,
                l.epochs,
                if l.in_epoch { " (in one)" } else { "" },
                l.controls,
                l.feedbacks,
                l.lost_bytes,
                l.packets,
                l.bytes
            );
        }
        if let Some(e) = &s.edge {
            let unlabelable = match e.unlabelable {
                "police" => format!(
                    "policed to {} Mbit/s, bucket {} B",
                    mbps(e.police_rate_bps),
                    e.police_burst_bytes
                ),
                other => other.to_string(),
            };
            println!(
                "  flows ({}) in table {}   {} {} ms   {} clock   unlabelable IPv4: {unlabelable}",
                e.flow_key,
                e.flows,
                match (e.tuf, e.meter == "tsw") {
                    (true, _) if e.keep_source_tags => "TUF tags (TCP's kept from sources), K",
                    (true, _) => "TUF tags, K",
                    (false, true) => "TSW window",
                    (false, false) => "K",
                },
                e.k_ns as f64 / 1e6,
                e.clock
            );
            if e.source_filter {
                println!("  sources: only the accepted prefixes (others: drop_source)");
            }
        }
        if s.counters.is_empty() {
            continue;
        }
        let mut t = crate::table(vec!["counter", "packets", "bytes"]);
        for (name, c) in &s.counters {
            if c.packets > 0 {
                t.add_row(vec![
                    name.to_string(),
                    c.packets.to_string(),
                    c.bytes.to_string(),
                ]);
            }
        }
        println!("{t}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use csfq_dp::{CountJson, Role};
    use std::collections::BTreeMap;

    fn one(role: Role, counters: &[(&'static str, u64, u64)]) -> InterfaceStats {
        InterfaceStats {
            counters: counters
                .iter()
                .map(|&(n, packets, bytes)| (n, CountJson { packets, bytes }))
                .collect::<BTreeMap<_, _>>(),
            ..InterfaceStats::empty("netns-c", "c1", role)
        }
    }

    /// By hand: 500 packets and 750 000 bytes more over 0.5 s are 1000 packets/s and
    /// 12 Mbit/s; a counter that went back (the program attached again) and a program
    /// that was not there at the last read have no rate.
    #[test]
    fn rates_are_differences_over_the_interval() {
        let before = [
            one(
                Role::Core,
                &[("forwarded", 1000, 1_500_000), ("drop_csfq_prob", 90, 9)],
            ),
            one(Role::Edge, &[("labeled", 10, 10)]),
        ];
        let now = [
            one(
                Role::Core,
                &[("forwarded", 1500, 2_250_000), ("drop_csfq_prob", 3, 3)],
            ),
            one(Role::May, &[("forwarded", 7, 7)]),
        ];
        let r = rates(&before, &now, 0.5);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].role, r[0].counter), ("core", "forwarded"));
        assert_eq!((r[0].packets_per_s, r[0].bits_per_s), (1000.0, 12e6));
    }
}
