//! `csfq dp edge`: the edge router's program, which labels packets entering the island with
//! their flow's rate.

use anyhow::Result;
use clap::Subcommand;
use csfq_dp::units::{parse_rate, parse_size, parse_time};
use csfq_dp::{EdgeSettings, WeightClass};

use super::cores::bytes;
use super::outcome;

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
        /// The clock Eq. (3) reads: `fine` (bpf_ktime_get_ns), `coarse` (the kernel's tick
        /// counter: one tick's resolution, 1-4 ms, cheaper; its labels are within half a
        /// percent of the fine clock's) or `auto`, the coarse one wherever the kernel's tick
        /// can be read (`csfq dp stats` shows which runs; README "The programs' clock").
        #[arg(long, default_value = "auto", value_parser = super::clock_parser())]
        clock: csfq_dp::Clock,
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

/// Runs `csfq dp edge attach`.
pub(crate) fn run(cmd: EdgeCommand) -> Result<()> {
    let EdgeCommand::Attach {
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
    } = cmd;
    let unlabelable = match (unlabelable, unlabelable_burst) {
        (UnlabelablePolicy::Police(rate_bps), burst) => csfq_dp::Unlabelable::Police {
            rate_bps,
            burst_bytes: match burst {
                None => csfq_dp::Unlabelable::default_burst(rate_bps),
                Some(b) => bytes("unlabelable-burst", b)?,
            },
        },
        (_, Some(_)) => {
            anyhow::bail!("invalid --unlabelable-burst: only with --unlabelable RATE (policing)")
        }
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
        clock,
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
    Ok(())
}
