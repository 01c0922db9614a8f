//! `csfq dp twin`: the simulator as the dataplane's twin. It builds, as a scenario, the
//! namespace setup the dataplane's rate tests run (README "CSFQ at the rates operators
//! run"): four kernel TCPs and a UDP at the link's rate from one sender, an edge, a core in
//! front of a shaper of rate `C` and limit `L`, a receiver. The core runs the dataplane's
//! integer arithmetic (`csfq-fixed`) with the settings `csfq dp core attach` derives from
//! that shaper (`CoreSettings::with_limit`: `K_alpha`, `K_c`, the threshold) and the edge's
//! defaults; the senders run CUBIC, as the kernel's do. It predicts each flow's share over
//! the same window of the run the tests judge, as the mean and range over seeds.
//!
//! What the twin does not model, stated where it prints: the hosts' CPUs (at 1 Gbit/s the
//! namespaces' UDP sender cannot send its rate here), the shaper's burst (the bottleneck
//! is a link of rate `C` whose buffer is `L`), the kernel's TCP beyond CUBIC's window
//! (pacing, TSO, autotuned buffers, HyStart), and the round trip: the namespaces' is tens
//! of microseconds plus queueing, the twin's 40 us plus queueing.

use anyhow::{bail, Result};
use csfq_dp::{CoreSettings, EdgeSettings};
use csfq_sim::config::{CongestionControl, FlowSpec, LinkSpec, Scenario, ScenarioBuilder};
use csfq_sim::{DisciplineKind, Simulation};
use serde::Serialize;

/// Propagation delay of every link and access link, ms: a veth hop's order of magnitude.
const HOP_DELAY_MS: f64 = 0.01;

/// The setup to predict.
#[derive(Debug, Clone, PartialEq)]
pub struct TwinSetup {
    /// The shaper's rate `C`, bit/s.
    pub rate_bps: u64,
    /// The shaper's limit, bytes (the core's limit, as attach reads it).
    pub limit_bytes: u32,
    /// Kernel TCP flows.
    pub tcps: u32,
    /// The UDP's rate, bit/s.
    pub udp_bps: u64,
    /// Run length, s.
    pub duration_s: u32,
    /// The window judged, seconds from the start: `[from, to)`.
    pub window_s: (u32, u32),
    /// Seeds 1..=seeds.
    pub seeds: u32,
}

impl TwinSetup {
    /// The namespace suite's setup at `rate_bps`: the shaper's limit 20 ms at the rate,
    /// at least 64 KiB; four TCPs and a UDP at the rate; 10 s judged over seconds 2-8;
    /// eight seeds.
    pub fn suite(rate_bps: u64) -> Self {
        TwinSetup {
            rate_bps,
            limit_bytes: suite_limit(rate_bps),
            tcps: 4,
            udp_bps: rate_bps,
            duration_s: 10,
            window_s: (2, 8),
            seeds: 8,
        }
    }

    /// The core's settings, as `csfq dp core attach` derives them from this shaper.
    pub fn core(&self) -> CoreSettings {
        CoreSettings::with_limit(self.rate_bps, self.limit_bytes)
    }

    /// The scenario of seed `seed`.
    pub fn scenario(&self, seed: u64) -> Result<Scenario> {
        let (core, edge) = (self.core(), EdgeSettings::default());
        let mbps = self.rate_bps as f64 / 1e6;
        // The hosts' side of the routers: veth, far faster than the shaper.
        let access = (mbps * 100.0).max(10_000.0);
        let s = ScenarioBuilder::new(
            "dp-twin",
            f64::from(self.duration_s),
            DisciplineKind::CsfqFixed,
        )
        .seed(seed)
        .routers(["edge", "core"])
        .link(
            LinkSpec::new("edge", "core", mbps)
                .delay_ms(HOP_DELAY_MS)
                .buffer_bytes(self.limit_bytes),
        )
        // iperf3's datagrams: 1448 bytes of payload (the control connection's MSS),
        // 1490 with UDP, IP and Ethernet headers, as the shaper counts them.
        .flow(
            FlowSpec::udp("edge", "core", self.udp_bps as f64 / 1e6)
                .packet_bytes(1490)
                .access(access, HOP_DELAY_MS),
        )
        .flow(
            FlowSpec::tcp("edge", "core")
                .count(self.tcps)
                .access(access, HOP_DELAY_MS),
        )
        .with(|f| {
            f.sample_interval = Some(1000.0);
            f.csfq.k_ms = edge.k_ns as f64 / 1e6;
            f.csfq.k_alpha_ms = Some(core.k_alpha_ns as f64 / 1e6);
            f.csfq.k_c_ms = Some(core.k_c_ns as f64 / 1e6);
            f.csfq.estimator = match core.estimator {
                csfq_algo::csfq::Estimator::Histogram => csfq_sim::config::EstimatorKind::Histogram,
                csfq_algo::csfq::Estimator::Paper => csfq_sim::config::EstimatorKind::Paper,
            };
            // Linux's TCP: 1448-byte segments with timestamps (1514 on the wire), an
            // initial window of 10, SACK, delayed ACKs of at least 40 ms, a 200 ms
            // minimum RTO, windows as large as its autotuned buffers (6 MB) allow.
            f.tcp.segment_bytes = 1514;
            f.tcp.ack_bytes = 66;
            f.tcp.initial_window_segments = 10;
            f.tcp.max_window_segments = 4096;
            f.tcp.sack = true;
            f.tcp.delayed_ack = true;
            f.tcp.delayed_ack_ms = 40.0;
            f.tcp.min_rto_ms = 200.0;
            f.tcp.congestion_control = CongestionControl::Cubic;
        })
        .build()?;
        Ok(s)
    }
}

/// The namespace suite's shaper limit at `rate_bps`: 20 ms at the rate, at least 64 KiB.
pub fn suite_limit(rate_bps: u64) -> u32 {
    u32::try_from((rate_bps / 8 * 20 / 1000).max(64 * 1024)).unwrap_or(u32::MAX)
}

/// A quantity over seeds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Mean over seeds.
    pub mean: f64,
    /// Lowest.
    pub min: f64,
    /// Highest.
    pub max: f64,
    /// Standard deviation of one seed's value (0 for one seed): how far one run, of the
    /// twin or of the namespaces it models, strays from the mean.
    pub sd: f64,
}

impl Spread {
    fn of(v: &[f64]) -> Spread {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        Spread {
            mean,
            sd: var.sqrt(),
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// What the twin predicts; shares are of the fair share `C / (tcps + 1)` on the wire.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    /// `C`, bit/s.
    pub rate_bps: u64,
    /// The core's limit, bytes.
    pub limit_bytes: u32,
    /// `K_alpha` derived from the shaper, ns.
    pub k_alpha_ns: u64,
    /// `K_c`, ns.
    pub k_c_ns: u64,
    /// The edge's `K`, ns.
    pub k_ns: u64,
    /// Seeds run (1..=seeds).
    pub seeds: u32,
    /// The window judged, s.
    pub window_s: (u32, u32),
    /// The UDP's share.
    pub udp_share: Spread,
    /// The TCPs' mean share.
    pub tcp_share: Spread,
    /// The lowest TCP's share.
    pub tcp_min_share: Spread,
    /// What the link carried, over `C`.
    pub link_use: Spread,
    /// The core's `alpha` over the fair share.
    pub alpha_share: Spread,
}

/// Runs the twin over its seeds.
pub fn predict(setup: &TwinSetup) -> Result<Prediction> {
    let (from, to) = setup.window_s;
    if setup.tcps == 0 || setup.seeds == 0 || from >= to || to > setup.duration_s {
        bail!("the twin needs a TCP, a seed and a window within the run");
    }
    let share = setup.rate_bps as f64 / 1e6 / f64::from(setup.tcps + 1);
    let mean = |v: &[f64]| {
        let w = &v[from as usize..(to as usize).min(v.len())];
        w.iter().sum::<f64>() / w.len().max(1) as f64
    };
    let (mut udp, mut tcp, mut tcp_min, mut used, mut alpha) =
        (vec![], vec![], vec![], vec![], vec![]);
    for seed in 1..=u64::from(setup.seeds) {
        let s = setup.scenario(seed)?;
        let r = Simulation::new(&s)?.run();
        let shares: Vec<f64> = r
            .flows
            .iter()
            .map(|f| mean(&f.series_mbps) / share)
            .collect();
        let tcps = &shares[1..];
        udp.push(shares[0]);
        tcp.push(tcps.iter().sum::<f64>() / tcps.len() as f64);
        tcp_min.push(tcps.iter().copied().fold(f64::INFINITY, f64::min));
        used.push(shares.iter().sum::<f64>() / f64::from(setup.tcps + 1));
        let link = r
            .links
            .iter()
            .find(|l| l.from == "edge" && l.to == "core")
            .expect("the bottleneck's report");
        alpha.push(mean(&link.alpha_mbps) / share);
    }
    let core = setup.core();
    Ok(Prediction {
        rate_bps: setup.rate_bps,
        limit_bytes: setup.limit_bytes,
        k_alpha_ns: core.k_alpha_ns,
        k_c_ns: core.k_c_ns,
        k_ns: EdgeSettings::default().k_ns,
        seeds: setup.seeds,
        window_s: setup.window_s,
        udp_share: Spread::of(&udp),
        tcp_share: Spread::of(&tcp),
        tcp_min_share: Spread::of(&tcp_min),
        link_use: Spread::of(&used),
        alpha_share: Spread::of(&alpha),
    })
}

/// `csfq dp twin`'s arguments.
#[derive(Debug, clap::Args)]
pub struct TwinArgs {
    /// The shaper's rate C, in tc's units (e.g. 100mbit).
    #[arg(long, value_parser = csfq_dp::units::parse_rate)]
    rate: u64,
    /// The shaper's limit, in tc's size units [default: 20 ms at the rate, at least 64kb:
    /// the namespace tests' tbf].
    #[arg(long, value_parser = csfq_dp::units::parse_size)]
    limit: Option<u64>,
    /// Kernel TCP flows beside the UDP.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1000))]
    tcps: u32,
    /// The UDP's rate, in tc's units [default: the link's rate].
    #[arg(long, value_parser = csfq_dp::units::parse_rate)]
    udp_rate: Option<u64>,
    /// Seconds simulated.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(2..=600))]
    secs: u32,
    /// Seeds run (1 to N); the mean and range are shown.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    seeds: u32,
    /// Also write the scenario of seed 1 as a file `csfq run` takes.
    #[arg(long, value_name = "FILE")]
    scenario: Option<std::path::PathBuf>,
    /// As JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `csfq dp twin`.
pub fn run(a: TwinArgs) -> Result<()> {
    use csfq_sim::config::{MAX_RATE_MBPS, MIN_RATE_MBPS};
    for (flag, v) in [("rate", Some(a.rate)), ("udp-rate", a.udp_rate)] {
        let Some(v) = v else { continue };
        csfq_dp::RATE.check(flag, v)?;
        if !(MIN_RATE_MBPS..=MAX_RATE_MBPS).contains(&(v as f64 / 1e6)) {
            bail!("--{flag}: the simulator's rates run from 1kbit to 1tbit, not {v} bit/s");
        }
    }
    let mut t = TwinSetup::suite(a.rate);
    if let Some(l) = a.limit {
        csfq_dp::BYTES.check("limit", l)?;
        t.limit_bytes = u32::try_from(l)?;
    }
    t.tcps = a.tcps;
    t.udp_bps = a.udp_rate.unwrap_or(a.rate);
    t.duration_s = a.secs;
    // The tests' window: the run less its first 2 s and last 2 s (iperf3's start and end).
    t.window_s = (2.min(a.secs - 1), (a.secs - 2).max(3).min(a.secs));
    t.seeds = a.seeds;
    if let Some(path) = &a.scenario {
        crate::write_atomic(path, t.scenario(1)?.to_toml())?;
    }
    let p = predict(&t)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&p)?);
        return Ok(());
    }
    println!(
        "twin of an edge and a core in front of a shaper of {} Mbit/s, limit {} bytes: \
         K_alpha = K_c = {:.1} ms, threshold {} bytes, edge K {} ms; {} CUBIC TCPs and a UDP \
         at {} Mbit/s; seconds {}-{} of {}, seeds 1-{}",
        t.rate_bps as f64 / 1e6,
        t.limit_bytes,
        p.k_alpha_ns as f64 / 1e6,
        t.limit_bytes / 2,
        p.k_ns / 1_000_000,
        t.tcps,
        t.udp_bps as f64 / 1e6,
        p.window_s.0,
        p.window_s.1,
        t.duration_s,
        t.seeds
    );
    let mut table = crate::table(vec!["share of C/(n+1)", "mean", "sd", "min", "max"]);
    for (name, s) in [
        ("UDP", p.udp_share),
        ("TCPs (mean)", p.tcp_share),
        ("lowest TCP", p.tcp_min_share),
        ("alpha", p.alpha_share),
        ("link used (of C)", p.link_use),
    ] {
        table.add_row(vec![
            name.to_string(),
            format!("{:.3}", s.mean),
            format!("{:.3}", s.sd),
            format!("{:.3}", s.min),
            format!("{:.3}", s.max),
        ]);
    }
    println!("{table}");
    println!(
        "{}",
        crate::paragraph(
            "not modelled: ",
            "the hosts' CPUs, the shaper's burst, the kernel's TCP beyond CUBIC's window \
             (pacing, TSO, HyStart), and the hosts' own delays: the twin's round trip is \
             40 us plus queueing. Shares are on the wire; iperf3 reports payload (about 0.95 \
             of it)."
        )
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The twin's core is the dataplane's: the simulator derives K_alpha, K_c, the
    /// threshold and the overflow budget from the link's rate and buffer as `csfq dp core
    /// attach` derives them from the shaper's rate and limit.
    #[test]
    fn the_twins_core_is_the_one_attach_derives() {
        for rate in [10_000_000u64, 100_000_000, 1_000_000_000] {
            let t = TwinSetup::suite(rate);
            let s = t.scenario(1).unwrap();
            let sim = s.csfq.core_params(rate as f64, t.limit_bytes);
            let dp = t.core();
            assert_eq!(sim.k_alpha.0, dp.k_alpha_ns, "{rate}");
            assert_eq!(sim.k_c.0, dp.k_c_ns, "{rate}");
            assert_eq!(sim.threshold_bytes, dp.limit_bytes / 2, "{rate}");
            assert_eq!(sim.overflow_budget, dp.overflow_budget, "{rate}");
            assert_eq!(sim.estimator, dp.estimator, "{rate}");
            assert_eq!(s.links[0].get_ref().buffer_bytes, dp.limit_bytes);
        }
        assert_eq!(suite_limit(10_000_000), 65_536);
        assert_eq!(suite_limit(100_000_000), 250_000);
    }

    /// Without CSFQ the same setup is drop-tail, and the UDP takes the link: the twin's
    /// fairness comes from the core, not from the setup.
    #[test]
    fn the_twin_predicts_a_hog_held_near_its_share() {
        let mut t = TwinSetup::suite(10_000_000);
        t.seeds = 2;
        let p = predict(&t).unwrap();
        // Max-min: each flow's share is 1; a hog held within 1.5x and TCPs above half.
        assert!(p.udp_share.max < 1.5, "{p:?}");
        assert!(p.tcp_min_share.min > 0.5, "{p:?}");
        assert!(p.link_use.mean > 0.9, "{p:?}");
        let fifo = t.scenario(1).unwrap().with_discipline(DisciplineKind::Fifo);
        let r = Simulation::new(&fifo).unwrap().run();
        assert!(
            r.flows[0].throughput_mbps > 1.5 * 2.0,
            "drop-tail: {:?}",
            r.flows[0]
        );
    }
}
