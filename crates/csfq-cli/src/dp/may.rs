//! `csfq dp may`: MAY at a bottleneck, in front of its shaper, with no edge and no labels.

use anyhow::Result;
use clap::Subcommand;
use csfq_dp::units::{parse_rate, parse_time};
use csfq_dp::MaySettings;

use super::core::link_of;
use super::outcome;

#[derive(Subcommand)]
pub(crate) enum MayCommand {
    /// Attach MAY to an interface's egress (again: update its settings, keeping its table
    /// and v). The defaults are the MAY paper's (Section IV) but for --ceiling.
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
        /// v's ceiling: `heaviest`, v kept at or below the v that drops every packet of
        /// the flow with the largest delta (past drops) the interval's packets found, or
        /// `none`, the paper's controller, which a flow at several times the link winds up
        /// until every flow in the table is dropped for some fifteen intervals (README,
        /// "MAY on a real router").
        #[arg(long, default_value = "heaviest", value_parser = ["heaviest", "none"])]
        ceiling: String,
        /// The clock MAY reads: `fine` (bpf_ktime_get_ns), `coarse` (the kernel's tick
        /// counter: one tick's resolution, 1-4 ms, cheaper; Delta and T0 must then be at
        /// least a hundred ticks) or `auto` (the coarse one where they are; README "The
        /// programs' clock").
        #[arg(long, default_value = "fine", value_parser = super::clock_parser())]
        clock: csfq_dp::Clock,
    },
}

/// Runs `csfq dp may attach`.
pub(crate) fn run(cmd: MayCommand) -> Result<()> {
    let MayCommand::Attach {
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
        ceiling,
        clock,
    } = cmd;
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
        ceiling: ceiling == "heaviest",
        clock,
    };
    outcome(csfq_dp::attach_may(&dev, &s)?, "MAY", &dev);
    Ok(())
}
