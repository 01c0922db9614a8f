//! `csfq dp csfne`, `csfq dp tuf` and `csfq dp tuf-source`: the CS-FNE and TUF cores on a
//! real interface, and TUF's TCP tagger on a sending host.

use anyhow::Result;
use clap::Subcommand;
use csfq_dp::units::{parse_rate, parse_size, parse_time};
use csfq_dp::{
    CoreTrust, CsfneSettings, CsfneStats, TufSettings, TufSourceSettings, TufSourceStats, TufStats,
};

use crate::dp::{core_outcome, link_of, mbps};

#[derive(Subcommand)]
pub(crate) enum CsfneCommand {
    /// Attach the CS-FNE core to an interface's egress (again: update its settings,
    /// keeping its rates, virtual queue and ring).
    Attach {
        #[command(flatten)]
        at: BottleneckArgs,
        /// The target queue: below it nothing is dropped by Eq. (2) [default: 16000 bytes or half
        /// the limit, the smaller; the thesis gives no value, 16 KB is RED's first
        /// threshold in its simulations].
        #[arg(long, value_parser = parse_size)]
        target: Option<u64>,
        /// K of r_hit, r_miss and the unlabeled traffic's price, in tc's time units.
        #[arg(long, default_value = "100ms", value_parser = parse_time)]
        k: u64,
        /// Ring entries: the most queued packets an arrival may be compared with (the
        /// queue's newest when it holds more); a power of two up to 4096 [default: 4096 on
        /// a new attach; an attached core keeps its ring, which cannot change in place].
        #[arg(long)]
        ring: Option<u32>,
        #[command(flatten)]
        trust: TrustArgs,
        /// The clock the core reads: `fine`, `coarse` (the kernel's tick counter; a tick
        /// must then be at most a quarter of the limit's drain time and of K) or `auto`
        /// (the coarse one where it may run, else the fine one).
        #[arg(long, default_value = "fine", value_parser = super::clock_parser())]
        clock: csfq_dp::Clock,
    },
}

#[derive(Subcommand)]
pub(crate) enum TufCommand {
    /// Attach the TUF core to an interface's egress (again: update its settings, keeping
    /// its threshold and virtual queue).
    Attach {
        #[command(flatten)]
        at: BottleneckArgs,
        /// The window over which arrivals are counted by tag, in tc's time units [default:
        /// twice the limit's drain time at the rate, within 1ms and 1s, as the CSFQ core's
        /// K_c].
        #[arg(long, value_parser = parse_time)]
        window: Option<u64>,
        /// K of the untagged traffic's rate, in tc's time units.
        #[arg(long, default_value = "100ms", value_parser = parse_time)]
        k: u64,
        #[command(flatten)]
        trust: TrustArgs,
        /// The clock the core reads: `fine`, `coarse` (the kernel's tick counter; a tick
        /// must then be at most a quarter of the limit's drain time and the window) or
        /// `auto` (the coarse one where it may run, else the fine one).
        #[arg(long, default_value = "fine", value_parser = super::clock_parser())]
        clock: csfq_dp::Clock,
    },
}

#[derive(Subcommand)]
pub(crate) enum TufSourceCommand {
    /// Attach the TUF source tagger to a sending host's interface, at its egress (again:
    /// update its settings, keeping each socket's counter). A GSO super-packet leaves
    /// untagged: set `ip link set dev IF gso_max_segs 1` (Linux's TCP builds them
    /// whatever the offloads; attaching warns).
    Attach {
        /// The host's interface its TCPs send through.
        #[arg(long, value_name = "IF")]
        dev: String,
        /// Padhye's b: segments acknowledged per ACK (a Linux receiver: 2, delayed ACKs).
        #[arg(long, default_value_t = 2)]
        per_ack: u32,
        /// Padhye's W_max, segments, up to 16777216 [default: no cap; a Linux receiver's
        /// window is megabytes].
        #[arg(long, value_name = "SEGMENTS")]
        max_window: Option<u32>,
        /// Linux's minimum RTO, in tc's time units: t0 = RTT + rto-min (the kernel's RTO
        /// while the round trip varies less than this, Padhye's t0 as the TUF report has
        /// it; 1ms prices a timeout at about a round trip, which kernel TCPs under TUF's
        /// evenly spaced drops come nearer: README, "TUF's tagger at the source").
        #[arg(long, default_value = "200ms", value_parser = parse_time)]
        rto_min: u64,
        /// The flows' weight w: tags T(B / w).
        #[arg(long, default_value_t = 1.0)]
        weight: f64,
    },
}

/// Runs a `csfq dp tuf-source` command.
pub(crate) fn run_tuf_source(cmd: TufSourceCommand) -> Result<()> {
    let TufSourceCommand::Attach {
        dev,
        per_ack,
        max_window,
        rto_min,
        weight,
    } = cmd;
    let s = TufSourceSettings {
        per_ack,
        max_window,
        rto_min_ns: rto_min,
        weight,
    };
    crate::dp::outcome(
        csfq_dp::attach_tuf_source(&dev, &s)?,
        "TUF source tagger",
        &dev,
    );
    let fix = format!(
        "`ip link set dev {dev} gso_max_segs 1` makes every packet one segment, for the \
         connections opened after it"
    );
    match csfq_dp::segments_per_packet(&dev) {
        Some(n) if n > 1 => eprintln!(
            "warning: {dev} lets TCP send super-packets of up to {n} segments (gso_max_segs), \
             which leave untagged (pass_super_packet): Linux's TCP builds them whatever the \
             offloads. {fix}."
        ),
        Some(_) => {}
        None => eprintln!(
            "warning: could not read {dev}'s gso_max_segs (`ip -d link show dev {dev}`): \
             super-packets leave untagged; {fix}."
        ),
    }
    Ok(())
}

/// The state lines of `csfq dp stats` for a TUF source tagger: its settings, then the
/// sockets with the most packets tagged.
pub(crate) fn print_tuf_source(c: &TufSourceStats) {
    println!(
        "  b {}   W_max {}   rto_min {} ms   weight {}   {} sockets",
        c.per_ack,
        c.max_window
            .map_or("none".to_string(), |w| format!("{w} segments")),
        f64::from(c.rto_min_us) / 1e3,
        c.weight,
        c.sockets_total
    );
    for s in c.sockets.iter().take(8) {
        println!(
            "  socket {:x}: {} packets   srtt {:.3} ms   mss {}   last tag {} ({} Mbit/s)",
            s.cookie,
            s.packets,
            s.srtt_us / 1e3,
            s.mss,
            s.tag,
            mbps(s.tag_bps as u64)
        );
    }
}

/// The bottleneck a core sits at: its interface, and the link's rate and the queue the
/// core models, each read from the shaper on it unless given (`link_of`).
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct BottleneckArgs {
    /// The bottleneck interface.
    #[arg(long, value_name = "IF")]
    pub(crate) dev: String,
    /// The link's rate C, in tc's units (e.g. 10mbit) [default: the rate of the shaper on
    /// IF, read from its root qdisc: tbf, or htb's default class].
    #[arg(long, value_parser = parse_rate)]
    rate: Option<u64>,
    /// The virtual queue's size, in tc's size units [default: the limit of the shaper's
    /// queue on IF, read from its root qdisc: tbf, htb's default class's FIFO, bfifo or
    /// pfifo]. The core models the real queue with it: a smaller one tail-drops before the
    /// real queue is full, as drop-tail would.
    #[arg(long, value_parser = parse_size)]
    limit: Option<u64>,
}

impl BottleneckArgs {
    /// The link's rate, bit/s, and the virtual queue's limit, bytes.
    pub(crate) fn link(&self) -> Result<(u64, u32)> {
        let (rate, limit) = link_of(&self.dev, self.rate, self.limit, true)?;
        Ok((rate, bytes("limit", limit)?))
    }
}

/// Whose labels (TUF: tags) a core believes, and what it does with frames it cannot
/// parse: the flags every core takes.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct TrustArgs {
    /// An interface whose packets' labels (TUF: tags) count: one facing the island's edges
    /// or other cores (repeatable, up to 16). Packets from any other interface are judged
    /// as unlabeled (untagged) traffic and leave without the label they came with, so a
    /// host that bypasses the edges cannot forge one. Where the interface's other end is
    /// visible here (a veth), attaching warns if it carries neither an edge at its egress
    /// nor a core.
    #[arg(
        long = "trusted-from",
        value_name = "IF",
        required_unless_present = "trust_any_label"
    )]
    pub(crate) trusted_from: Vec<String>,
    /// Believe labels (tags) from every interface. Anyone who can reach this router
    /// without crossing an edge can then forge one and take as much of the link as they
    /// like.
    #[arg(long, conflicts_with = "trusted_from")]
    pub(crate) trust_any_label: bool,
    /// What the core does with frames it cannot parse (non-IP but ARP, VLAN or QinQ on a
    /// bridged bottleneck, truncated headers): `price` them as unlabeled (untagged)
    /// traffic, judged with the rest of it, or `drop` them all (counted as
    /// drop_unparsed). ARP is spared, but only untagged: on a VLAN trunk whose tags are in
    /// the frames, `drop` drops everything, its ARP and control frames (STP, LACP) too.
    #[arg(long, default_value = "price", value_parser = ["price", "drop"])]
    pub(crate) unparsed: String,
}

impl TrustArgs {
    /// Whose labels count.
    pub(crate) fn trust(&self) -> CoreTrust {
        if self.trust_any_label {
            CoreTrust::Any
        } else {
            CoreTrust::Interfaces(self.trusted_from.clone())
        }
    }

    /// `--unparsed drop`.
    pub(crate) fn drop_unparsed(&self) -> bool {
        self.unparsed == "drop"
    }
}

/// A byte count the command line read as `u64`, as the settings' `u32`, or the range error
/// naming `what`.
pub(crate) fn bytes(what: &'static str, v: u64) -> Result<u32, csfq_dp::InvalidSetting> {
    u32::try_from(v).map_err(|_| csfq_dp::BYTES.error(what, v))
}

/// Runs a `csfq dp tuf` command.
pub(crate) fn run_tuf(cmd: TufCommand) -> Result<()> {
    let TufCommand::Attach {
        at,
        window,
        k,
        trust,
        clock,
    } = cmd;
    let (rate, limit) = at.link()?;
    let mut s = TufSettings::with_limit(rate, limit);
    s.window_ns = window.unwrap_or(s.window_ns);
    s.k_ns = k;
    s.trust = trust.trust();
    s.drop_unparsed = trust.drop_unparsed();
    s.clock = clock;
    core_outcome(
        csfq_dp::attach_tuf(&at.dev, &s)?,
        "TUF core",
        &at.dev,
        &s.trust,
    );
    Ok(())
}

/// The state line of `csfq dp stats` for a TUF core.
pub(crate) fn print_tuf(c: &TufStats) {
    println!(
        "  C {} Mbit/s   threshold tag {} ({} Mbit/s; 2047: every tag passes)   window {} ms, {} ended   untagged {} Mbit/s   virtual queue {} of {} B   {} clock",
        mbps(c.capacity_bps),
        c.threshold,
        mbps(c.threshold_bps as u64),
        c.window_ns as f64 / 1e6,
        c.windows,
        mbps(c.untagged_bps),
        c.queue_bytes,
        c.limit_bytes,
        c.clock
    );
}

/// Runs a `csfq dp csfne` command.
pub(crate) fn run(cmd: CsfneCommand) -> Result<()> {
    let CsfneCommand::Attach {
        at,
        target,
        k,
        ring,
        trust,
        clock,
    } = cmd;
    let (rate, limit) = at.link()?;
    let mut s = CsfneSettings::with_limit(rate, limit);
    s.target_bytes = target.map(|t| bytes("target", t)).transpose()?;
    s.k_ns = k;
    s.ring = ring;
    s.trust = trust.trust();
    s.drop_unparsed = trust.drop_unparsed();
    s.clock = clock;
    core_outcome(
        csfq_dp::attach_csfne(&at.dev, &s)?,
        "CS-FNE core",
        &at.dev,
        &s.trust,
    );
    Ok(())
}

/// The state line of `csfq dp stats` for a CS-FNE core.
pub(crate) fn print_csfne(c: &CsfneStats) {
    println!(
        "  C {} Mbit/s   r_hit {} Mbit/s   r_miss {} Mbit/s   N_act {:.2}   CL {} Mbit/s   K {} ms   {} clock",
        mbps(c.capacity_bps),
        mbps(c.hit_bps),
        mbps(c.miss_bps),
        c.active_flows,
        mbps(c.cl_bps),
        c.k_ns as f64 / 1e6,
        c.clock
    );
    println!(
        "  virtual queue {} of {} B (target {} B)   ring {} of {} entries queued   {} packets admitted",
        c.queue_bytes, c.limit_bytes, c.target_bytes, c.ring_queued, c.ring, c.admitted
    );
}
