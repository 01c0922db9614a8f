//! `csfq dp`: the eBPF dataplane on real interfaces. One module per command: `edge`,
//! `core` (with the shaper it reads), `may`, `cores` (CS-FNE, TUF, TUF's source tagger),
//! `loops`, `stats`, `bench`, `apply`; this one parses and dispatches.

mod apply;
mod bench;
mod core;
mod cores;
mod edge;
mod loops;
mod may;
mod stats;

use anyhow::Result;
use clap::{Args, Subcommand};
use csfq_dp::AttachOutcome;

pub(crate) use self::core::link_of;

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
        cmd: edge::EdgeCommand,
    },
    /// The core: drops and relabels at a bottleneck, in front of its shaper.
    Core {
        #[command(subcommand)]
        cmd: self::core::CoreCommand,
    },
    /// MAY at a bottleneck: no edge, no labels; drops in proportion to each flow's past
    /// drops, in front of the link's shaper.
    May {
        #[command(subcommand)]
        cmd: may::MayCommand,
    },
    /// A CS-FNE core at a bottleneck, in front of its shaper: no per-flow state; the
    /// active flows estimated from the queue, drops above C / N_act. Its edges are
    /// `csfq dp edge attach --meter tsw`.
    Csfne {
        #[command(subcommand)]
        cmd: cores::CsfneCommand,
    },
    /// A TUF core at a bottleneck, in front of its shaper: drops tags above the threshold
    /// at which a window's arrivals fill the link. Its edges are `csfq dp edge attach
    /// --tuf`.
    Tuf {
        #[command(subcommand)]
        cmd: cores::TufCommand,
    },
    /// TUF's TCP tagger on a sending host's egress: each packet of a local TCP socket
    /// tagged with Padhye's throughput from the kernel's own round trip for the socket.
    /// Its edge keeps these tags with `csfq dp edge attach --tuf --keep-source-tags`.
    TufSource {
        #[command(subcommand)]
        cmd: cores::TufSourceCommand,
    },
    /// Edge-to-edge overlay loops: the interior stays a plain FIFO; each loop's traffic
    /// is shaped at its ingress edge by a closed loop with its egress edge (runs until
    /// stopped, and removes what it made).
    Loop {
        #[command(subcommand)]
        cmd: loops::LoopCommand,
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

/// Says whether a program was attached or, already there, had its settings updated.
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

/// `--clock`: `fine`, `coarse` or `auto`, as [`csfq_dp::Clock`].
pub(crate) fn clock_parser() -> impl clap::builder::TypedValueParser<Value = csfq_dp::Clock> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(["fine", "coarse", "auto"])
        .try_map(|s| s.parse::<csfq_dp::Clock>())
}

/// `csfq dp`: enters `--netns` (or adopts this process's namespace), then runs the command.
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
        DpCommand::Edge { cmd } => edge::run(cmd)?,
        DpCommand::Core { cmd } => core::run(cmd)?,
        DpCommand::May { cmd } => may::run(cmd)?,
        DpCommand::Csfne { cmd } => cores::run(cmd)?,
        DpCommand::Tuf { cmd } => cores::run_tuf(cmd)?,
        DpCommand::TufSource { cmd } => cores::run_tuf_source(cmd)?,
        DpCommand::Loop { cmd } => loops::run(cmd)?,
        DpCommand::Stats { json, watch, count } => stats::run(json, watch, count)?,
        DpCommand::Bench { secs, repeat, json } => bench::run(secs, repeat, json)?,
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
        DpCommand::Apply { file, prune } => apply::apply(&file, prune)?,
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

/// Bits per second as Mbit/s with three decimals.
pub(crate) fn mbps(bps: u64) -> String {
    format!("{:.3}", bps as f64 / 1e6)
}
