//! The scenarios the experiments run, below both the catalogue and the analyses: the
//! shipped scenario files, what varies between an experiment's runs ([`Sweep`], [`Run`]),
//! the scenarios made in code (the CSFQ paper's chains, the overlay paper's networks), and
//! the models without a network some figures compare against.

use std::path::Path;

use csfq_sim::config::{FlowKind, FlowSpec, LinkSpec, ScenarioBuilder, ScenarioFile};
use csfq_sim::DisciplineKind;

pub mod models;
pub mod overlay;

pub use models::ONOFF_PERIODS_MS;

/// `scenarios/csfq-fig3a.toml`.
pub const CSFQ_FIG3A: &str = include_str!("../../../../scenarios/csfq-fig3a.toml");
/// csfq-fig3a as the CS-FNE thesis's Table 1 runs it: ns-2's DRR hashes flows into
/// buckets (`buckets_`, queue/drr.cc); the thesis states none, so one per flow (32).
pub const CSFNE_TABLE1: &str = concat!(
    include_str!("../../../../scenarios/csfq-fig3a.toml"),
    "\n# CS-FNE thesis, Table 1: ns-2's DRR hashes flows into buckets; one per flow.\n[drr]\nbuckets = 32\n"
);
/// `scenarios/csfq-fig3b.toml`.
pub const CSFQ_FIG3B: &str = include_str!("../../../../scenarios/csfq-fig3b.toml");
/// `scenarios/csfq-fig4.toml`.
pub const CSFQ_FIG4: &str = include_str!("../../../../scenarios/csfq-fig4.toml");
/// `scenarios/csfq-fig6a.toml`.
pub const CSFQ_FIG6A: &str = include_str!("../../../../scenarios/csfq-fig6a.toml");
/// `scenarios/csfq-fig6b.toml`.
pub const CSFQ_FIG6B: &str = include_str!("../../../../scenarios/csfq-fig6b.toml");
/// `scenarios/csfq-fig7.toml`.
pub const CSFQ_FIG7: &str = include_str!("../../../../scenarios/csfq-fig7.toml");
/// `scenarios/csfq-table1.toml`.
pub const CSFQ_TABLE1: &str = include_str!("../../../../scenarios/csfq-table1.toml");
/// `scenarios/csfq-table2.toml`.
pub const CSFQ_TABLE2: &str = include_str!("../../../../scenarios/csfq-table2.toml");
/// `scenarios/csfq-table3.toml`.
pub const CSFQ_TABLE3: &str = include_str!("../../../../scenarios/csfq-table3.toml");
/// `scenarios/csfq-table4.toml`.
pub const CSFQ_TABLE4: &str = include_str!("../../../../scenarios/csfq-table4.toml");
/// `scenarios/may-fig5.toml`.
pub const MAY_FIG5: &str = include_str!("../../../../scenarios/may-fig5.toml");
/// `scenarios/may-fig7.toml`.
pub const MAY_FIG7: &str = include_str!("../../../../scenarios/may-fig7.toml");
/// `scenarios/may-fig8.toml`.
pub const MAY_FIG8: &str = include_str!("../../../../scenarios/may-fig8.toml");
/// `scenarios/may-fig9.toml`.
pub const MAY_FIG9: &str = include_str!("../../../../scenarios/may-fig9.toml");
/// `scenarios/overlay-fig8.toml`.
pub const OVERLAY_FIG8: &str = include_str!("../../../../scenarios/overlay-fig8.toml");
/// `scenarios/overlay-fig9.toml`.
pub const OVERLAY_FIG9: &str = include_str!("../../../../scenarios/overlay-fig9.toml");
/// `scenarios/weighted-1link.toml`.
pub const WEIGHTED_1LINK: &str = include_str!("../../../../scenarios/weighted-1link.toml");
/// `scenarios/weighted-2links.toml`.
pub const WEIGHTED_2LINKS: &str = include_str!("../../../../scenarios/weighted-2links.toml");

/// A shipped scenario file as the experiments run it: CSFQ in it is the paper's (its
/// estimator, and 100 ms where the scenario states no constants), and so is MAY (its
/// controller, without `v`'s ceiling).
pub fn shipped(id: &str, text: &str) -> ScenarioFile {
    let mut s = ScenarioFile::parse(text, Path::new(&format!("scenarios/{id}.toml")))
        .expect("shipped scenarios are valid")
        .into_file();
    s.csfq = s.csfq.paper();
    s.may = s.may.paper();
    s
}

/// The runs of an experiment besides the discipline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// One run per discipline.
    None,
    /// csfq-fig4: N = 2..=32 flows, one TCP and N-1 UDP at twice 10/N Mbps.
    Fig4Flows,
    /// csfq-fig6a/b, tuf-fig12: the main flow crosses K = 1..=max congested links.
    ChainLinks {
        /// The largest K.
        max: u32,
    },
    /// tuf-fig13: `links` congested links whose cross traffic is ON/OFF (4 Mbps while ON,
    /// exponential ON and OFF of equal mean), the mean swept from 5 ms to 1 s.
    OnOffPeriods {
        /// Congested links.
        links: u32,
    },
    /// tuf-fig4: the TUF queue against the bufferless filter model; no network.
    TufFilterModel,
    /// csfq-table4: UDP, TCP, and UDP with relabeling off.
    Table4Variants,
    /// csfq-table3: RED and FRED also run with the paper's default thresholds
    /// ([`TABLE3_DEFAULT_THRESHOLDS`]) beside the file's, scaled to the 256 KB buffer.
    Table3Thresholds,
    /// may-fig2/3: the memory and lossless-share model of MAY's sampling; no network.
    MayMemoryModel,
    /// may-fig8: the CBR flow's rate over [`MAY_CBR_RATES_MBPS`].
    CbrRates,
    /// overlay-fig6: the linear network with M = 1..=max bottlenecks.
    OverlayLinear {
        /// The largest M.
        max: u32,
    },
    /// overlay-fig7: [`overlay::DUMBBELL_LOOPS`] x FIFO/FRED x [`overlay::DUMBBELL_FLOWS`].
    OverlayDumbbell,
    /// overlay-fig8/9: the scenario without loops, then with them.
    LoopsOffOn,
    /// overlay-fig10: the leased line's share over [`overlay::LEASED_SHARES`].
    LeasedShares,
}

/// One run of an experiment.
#[derive(Debug, Clone)]
pub struct Run {
    /// The swept value (N, K; the variant's index), 0 when nothing is swept.
    pub x: f64,
    /// What distinguishes this run, for tables ("K = 3", "TCP").
    pub label: String,
    /// The scenario.
    pub scenario: ScenarioFile,
}

/// may-fig8's CBR rates, Mbit/s: the paper sweeps 0.5..8 around the 2 Mbit/s fair share.
pub const MAY_CBR_RATES_MBPS: [f64; 9] = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0, 8.0];

/// The CSFQ paper's default RED and FRED thresholds, bytes (Section 3: "the first threshold
/// is set to 16 KB, while the second one is set to 32 KB", with a 64 KB buffer).
/// csfq-table3's file scales them with its 256 KB buffer; these run beside it.
pub const TABLE3_DEFAULT_THRESHOLDS: (u32, u32) = (16_000, 32_000);

/// csfq-fig4 with `n` flows: one TCP and `n - 1` UDP flows at `2 * 10 / n` Mbps.
pub fn fig4_with(base: &ScenarioFile, n: u32) -> ScenarioFile {
    let mut s = base.clone();
    let udp = s.flows[1].get_mut();
    udp.count = n - 1;
    udp.rate_mbps = Some(2.0 * 10.0 / n as f64);
    s
}

/// The CSFQ paper's Figure 5: routers r0..rK in a chain of 10 Mbps links; the main flow
/// (UDP at its 0.909 Mbps fair share, or TCP) goes r0 -> rK; every link also carries 10
/// UDP flows at 2 Mbps that enter at one router and leave at the next.
/// Cross traffic of a chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cross {
    /// UDP at 2 Mbps (csfq-fig6, tuf-fig12).
    Cbr,
    /// ON/OFF at 4 Mbps while ON, ON and OFF exponential with this mean (tuf-fig13).
    OnOff {
        /// Mean ON (and OFF) period, ms.
        period_ms: f64,
    },
}

pub fn chain(k: u32, main: FlowKind, cross: Cross) -> ScenarioFile {
    let variant = if main == FlowKind::Tcp { "b" } else { "a" };
    let mut b = ScenarioBuilder::new(&format!("csfq-fig6{variant}"), 10.0, DisciplineKind::Csfq)
        .description(format!(
            "{} flow across {k} congested links, 10 UDP cross flows at 2 Mbps on each",
            main.name()
        ))
        .routers((0..=k).map(|i| format!("r{i}")));
    for i in 1..=k {
        b = b.link(LinkSpec::new(
            &format!("r{}", i - 1),
            &format!("r{i}"),
            10.0,
        ));
    }
    let last = format!("r{k}");
    b = b.flow(
        match main {
            FlowKind::Tcp => FlowSpec::tcp("r0", &last),
            _ => FlowSpec::udp("r0", &last, 0.909),
        }
        .access(100.0, 1.0),
    );
    for i in 1..=k {
        let (from, to) = (format!("r{}", i - 1), format!("r{i}"));
        let flow = match cross {
            Cross::Cbr => FlowSpec::udp(&from, &to, 2.0),
            Cross::OnOff { period_ms } => FlowSpec::onoff(&from, &to, 4.0, period_ms, period_ms),
        };
        b = b.flow(flow.count(10).access(100.0, 1.0));
    }
    let mut s = b.build().expect("generated chain is valid").into_file();
    // the papers' experiments
    s.csfq = s.csfq.paper();
    s.may = s.may.paper();
    s
}
