//! The published experiments: their scenarios (the files under `scenarios/`), the
//! variations each runs, and the numbers the papers report, so results can be printed
//! beside them.

use std::path::Path;

use csfq_algo::Nanos;

use csfq_sim::config::{DisciplineKind, FlowKind, ScenarioFile};

mod overlay;
mod unstated;
pub use overlay::*;
pub use unstated::{unstated, Unstated};

/// An experiment of the papers.
#[derive(Clone, Copy)]
pub struct Experiment {
    /// Identifier, as in EXPERIMENTS.md (`csfq-fig3a`).
    pub id: &'static str,
    /// One sentence on the setup.
    pub setup: &'static str,
    /// What the paper reports.
    pub published: &'static str,
    /// The scenario file's text (none for a model with no network, tuf-fig4).
    pub scenario_toml: Option<&'static str>,
    /// The disciplines it compares.
    pub disciplines: &'static [DisciplineKind],
    /// What varies between runs.
    pub sweep: Sweep,
    /// Its analysis: our numbers beside the source's, as verdicts, a table and figures.
    pub analyze: fn(&[crate::RunResult]) -> crate::Analysis,
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
    /// overlay-fig7: [`DUMBBELL_LOOPS`] x FIFO/FRED x [`DUMBBELL_FLOWS`].
    OverlayDumbbell,
    /// overlay-fig8/9: the scenario without loops, then with them.
    LoopsOffOn,
    /// overlay-fig10: the leased line's share over [`LEASED_SHARES`].
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

use DisciplineKind::*;

const ALL_SIX: &[DisciplineKind] = &[Fifo, Red, Fred1, Fred2, Drr, Csfq];
const CSFQ_ONLY: &[DisciplineKind] = &[Csfq];
const TUF_SET: &[DisciplineKind] = &[Csfq, Tuf, Drr];
const CSFNE_SET: &[DisciplineKind] = &[Csfne, Drr, Csfq, Red, Fred2];
/// The MAY paper's comparisons (adaptive RED as its RED, DRR, LAS) and CSFQ beside them.
const MAY_SET: &[DisciplineKind] = &[Ared, Drr, Las, May, Csfq];
/// may-fig8's CBR rates, Mbit/s: the paper sweeps 0.5..8 around the 2 Mbit/s fair share.
pub const MAY_CBR_RATES_MBPS: [f64; 9] = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0, 8.0];
const FIG3A: &str = include_str!("../../../scenarios/csfq-fig3a.toml");
const FIG3B: &str = include_str!("../../../scenarios/csfq-fig3b.toml");
const FIG4: &str = include_str!("../../../scenarios/csfq-fig4.toml");
const FIG6A: &str = include_str!("../../../scenarios/csfq-fig6a.toml");
const FIG6B: &str = include_str!("../../../scenarios/csfq-fig6b.toml");

/// Every experiment reproduced so far.
pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        id: "csfq-fig3a",
        setup: "32 UDP flows on one 10 Mbps link; flow i sends (i+1) x its 0.3125 Mbps fair share",
        published: "FIFO, RED, FRED-1: share proportional to rate; DRR fair; CSFQ every flow within -11%..+5% of 0.3125 Mbps; FRED-2 less precise than DRR",
        scenario_toml: Some(include_str!("../../../scenarios/csfq-fig3a.toml")),
        disciplines: ALL_SIX,
        sweep: Sweep::None,
        analyze: crate::csfq_paper::fig3a,
    },
    Experiment {
        id: "csfq-fig3b",
        setup: "one UDP flow at 10 Mbps against 31 TCP flows on one 10 Mbps link",
        published: "UDP throughput: FIFO > 8, RED > 8, FRED ~1.8, DRR 0.396, CSFQ 0.361 Mbps",
        scenario_toml: Some(include_str!("../../../scenarios/csfq-fig3b.toml")),
        disciplines: ALL_SIX,
        sweep: Sweep::None,
        analyze: crate::csfq_paper::fig3b,
    },
    Experiment {
        id: "csfq-fig4",
        setup: "one TCP flow against N-1 UDP flows each sending twice the 10/N Mbps fair share, N = 2..32",
        published: "DRR good up to N ~ 22 then falls; CSFQ beats DRR for large N and is >= FRED throughout; CSFQ keeps 55-90% of the fair share (TUF paper)",
        scenario_toml: Some(include_str!("../../../scenarios/csfq-fig4.toml")),
        disciplines: ALL_SIX,
        sweep: Sweep::Fig4Flows,
        analyze: crate::csfq_paper::fig4,
    },
    Experiment {
        id: "csfq-fig6a",
        setup: "a UDP flow at its 0.909 Mbps fair share crosses K = 1..10 congested 10 Mbps links, each also carrying 10 one-hop UDP flows at 2 Mbps",
        published: "fraction of the UDP's traffic delivered: DRR best, CSFQ and FRED reasonably well. CS-FNE thesis (mean over K): DRR 0.986, CSFQ 0.936, RED 0.732, FRED 0.233",
        scenario_toml: Some(include_str!("../../../scenarios/csfq-fig6a.toml")),
        disciplines: ALL_SIX,
        sweep: Sweep::ChainLinks { max: 10 },
        analyze: crate::csfq_paper::fig6a,
    },
    Experiment {
        id: "csfq-fig6b",
        setup: "as csfq-fig6a with the main flow a TCP: its throughput over its 0.909 Mbps fair share against K",
        published: "DRR and CSFQ effective; FRED much worse; RED and FIFO worst. CS-FNE thesis (mean over K): DRR 0.859, CSFQ 0.651, RED 0.143, FRED 0.013",
        scenario_toml: Some(include_str!("../../../scenarios/csfq-fig6b.toml")),
        disciplines: ALL_SIX,
        sweep: Sweep::ChainLinks { max: 10 },
        analyze: crate::csfq_paper::fig6b,
    },
    Experiment {
        id: "csfq-fig7",
        setup: "1 TCP and 3 RLM sessions (7 layers, layer i at 2^(i+4) Kbps) on a 4 Mbps link, K = 250 ms, 200 s",
        published: "DRR and CSFQ give each flow about its 1 Mbps share (RLM: five layers); FRED does not",
        scenario_toml: Some(include_str!("../../../scenarios/csfq-fig7.toml")),
        disciplines: ALL_SIX,
        sweep: Sweep::None,
        analyze: crate::csfq_paper::fig7,
    },
    Experiment {
        id: "csfq-table1",
        setup: "an ON-OFF source (exponential ON 100 ms / OFF 1900 ms, 10 Mbps while ON) against 19 TCP flows on a 10 Mbps link, 100 s",
        published: "ON-OFF packets delivered / dropped of 6758 sent: DRR 601 / 6157, CSFQ 1680 / 5078, FRED close to CSFQ, RED 5322 / 1436 (?), FIFO 5452 / 1306 (?)",
        scenario_toml: Some(include_str!("../../../scenarios/csfq-table1.toml")),
        disciplines: ALL_SIX,
        sweep: Sweep::None,
        analyze: crate::csfq_paper::table1,
    },
    Experiment {
        id: "csfq-table2",
        setup: "60 short TCP transfers (Pareto sizes, mean 20 packets, shape 1.06; exponential start gaps, mean 0.05 ms) against a 10 Mbps UDP flow on a 10 Mbps link",
        published: "mean transfer time: DRR best, FRED better than CSFQ (CSFQ keeps a larger queue), CSFQ almost an order of magnitude better than FIFO and RED",
        scenario_toml: Some(include_str!("../../../scenarios/csfq-table2.toml")),
        disciplines: ALL_SIX,
        sweep: Sweep::None,
        analyze: crate::csfq_paper::table2,
    },
    Experiment {
        id: "csfq-table3",
        setup: "1 UDP at 10 Mbps and 19 TCP flows on a 10 Mbps link with 100 ms delay, 256 KB buffer, K = 400 ms, 100 s",
        published: "mean (std) packets delivered per TCP: DRR 6080 (64), CSFQ 5761 (220), FRED 4974 (190), RED 628 (80), FIFO 378 (69)",
        scenario_toml: Some(include_str!("../../../scenarios/csfq-table3.toml")),
        disciplines: ALL_SIX,
        sweep: Sweep::Table3Thresholds,
        analyze: crate::csfq_paper::table3,
    },
    Experiment {
        id: "csfq-table4",
        setup: "flows 1, 2 share link 1, flow 3 joins them on link 2, every source at 10 Mbps; throughput on link 2",
        published: "UDP 3.36, 3.32, 3.28 Mbps; TCP 3.43, 3.13, 3.43 Mbps (fair share 3.33)",
        scenario_toml: Some(include_str!("../../../scenarios/csfq-table4.toml")),
        disciplines: CSFQ_ONLY,
        sweep: Sweep::Table4Variants,
        analyze: crate::csfq_paper::table4,
    },
    Experiment {
        id: "tuf-fig4",
        setup: "the TUF queue against its bufferless filter model: M/D/1/64, Poisson 2000 packets/s, 1 ms service, tags uniform on 0..2047, 1000 s",
        published: "loss probability per tag follows the filter model: ~0 below the equivalent threshold, ~1 above",
        scenario_toml: None,
        disciplines: &[],
        sweep: Sweep::TufFilterModel,
        analyze: crate::tuf_report::fig4,
    },
    Experiment {
        id: "tuf-fig9a",
        setup: "csfq-fig3a (32 UDP flows, flow i at (i+1) x fair share) under CSFQ, TUF and DRR",
        published: "TUF, CSFQ and DRR comparable",
        scenario_toml: Some(FIG3A),
        disciplines: TUF_SET,
        sweep: Sweep::None,
        analyze: crate::tuf_report::fig9a,
    },
    Experiment {
        id: "tuf-fig9b",
        setup: "csfq-fig3b (1 UDP at 10 Mbps against 31 TCP) under CSFQ, TUF and DRR",
        published: "TUF, CSFQ and DRR comparable",
        scenario_toml: Some(FIG3B),
        disciplines: TUF_SET,
        sweep: Sweep::None,
        analyze: crate::tuf_report::fig9b,
    },
    Experiment {
        id: "tuf-fig10",
        setup: "csfq-fig4 (1 TCP against N-1 UDP at twice their share, N = 2..32) under CSFQ, TUF and DRR",
        published: "TCP gets 70-100% of its fair share under TUF, 55-90% under CSFQ",
        scenario_toml: Some(FIG4),
        disciplines: TUF_SET,
        sweep: Sweep::Fig4Flows,
        analyze: crate::tuf_report::fig10,
    },
    Experiment {
        id: "tuf-fig12a",
        setup: "a TCP across K = 1..9 congested links, 10 CBR cross flows at 2 Mbps per link",
        published: "TUF >= CSFQ as links are added; DRR slightly better",
        scenario_toml: Some(FIG6B),
        disciplines: TUF_SET,
        sweep: Sweep::ChainLinks { max: 9 },
        analyze: crate::tuf_report::fig12a,
    },
    Experiment {
        id: "tuf-fig12b",
        setup: "a UDP at 909 Kbps across K = 1..9 congested links, 10 CBR cross flows at 2 Mbps per link",
        published: "the UDP is perfectly served by DRR, CSFQ and TUF",
        scenario_toml: Some(FIG6A),
        disciplines: TUF_SET,
        sweep: Sweep::ChainLinks { max: 9 },
        analyze: crate::tuf_report::fig12b,
    },
    Experiment {
        id: "tuf-fig13-3links",
        setup: "a TCP across 3 congested links; the 10 cross flows per link are ON/OFF (4 Mbps while ON, exponential ON and OFF of equal mean 5 ms..1 s)",
        published: "CSFQ degrades sharply near 100 ms periods (bursts of losses hit the TCP); TUF does not",
        scenario_toml: Some(FIG6B),
        disciplines: TUF_SET,
        sweep: Sweep::OnOffPeriods { links: 3 },
        analyze: crate::tuf_report::fig13_3links,
    },
    Experiment {
        id: "tuf-fig13-5links",
        setup: "as tuf-fig13-3links across 5 congested links",
        published: "CSFQ degrades sharply near 100 ms periods; TUF does not",
        scenario_toml: Some(FIG6B),
        disciplines: TUF_SET,
        sweep: Sweep::OnOffPeriods { links: 5 },
        analyze: crate::tuf_report::fig13_5links,
    },
    Experiment {
        id: "csfne-table1",
        setup: "csfq-fig3a under CS-FNE, DRR, CSFQ, RED, FRED: per-flow throughput (Mbps), average / max-min / std",
        published: "CS-FNE 0.312 / 0.162 / 0.046; DRR 0.312 / 0.176 / 0.056; CSFQ 0.310 / 0.050 / 0.015; RED 0.312 / 0.438 / 0.132; FRED 0.312 / 0.582 / 0.176",
        scenario_toml: Some(FIG3A),
        disciplines: CSFNE_SET,
        sweep: Sweep::None,
        analyze: crate::csfne_thesis::table1,
    },
    Experiment {
        id: "csfne-table2",
        setup: "csfq-fig4 under CS-FNE, DRR, CSFQ, RED, FRED: the TCP's normalized throughput over N = 2..32, average / max-min / std",
        published: "CS-FNE 0.643 / 0.690 / 0.171; DRR 0.850 / 0.704 / 0.248; CSFQ 0.703 / 0.432 / 0.093; RED 0.339 / 0.920 / 0.331; FRED 0.101 / 0.078 / 0.042",
        scenario_toml: Some(FIG4),
        disciplines: CSFNE_SET,
        sweep: Sweep::Fig4Flows,
        analyze: crate::csfne_thesis::table2,
    },
    Experiment {
        id: "csfne-table5",
        setup: "csfq-fig6a under CS-FNE, DRR, CSFQ, RED, FRED: the UDP's delivered fraction over K = 1..10, average / max-min / std",
        published: "CS-FNE 0.889 / 0.088 / 0.038; DRR 0.986 / 0.008 / 0.003; CSFQ 0.936 / 0.058 / 0.023; RED 0.732 / 0.192 / 0.078; FRED 0.233 / 0.476 / 0.195",
        scenario_toml: Some(FIG6A),
        disciplines: CSFNE_SET,
        sweep: Sweep::ChainLinks { max: 10 },
        analyze: crate::csfne_thesis::table5,
    },
    Experiment {
        id: "csfne-table6",
        setup: "csfq-fig6b under CS-FNE, DRR, CSFQ, RED, FRED: the TCP's normalized throughput over K = 1..10, average / max-min / std",
        published: "CS-FNE 0.621 / 0.241 / 0.104; DRR 0.859 / 0.165 / 0.062; CSFQ 0.651 / 0.099 / 0.038; RED 0.143 / 0.689 / 0.306; FRED 0.013 / 0.048 / 0.023",
        scenario_toml: Some(FIG6B),
        disciplines: CSFNE_SET,
        sweep: Sweep::ChainLinks { max: 10 },
        analyze: crate::csfne_thesis::table6,
    },
    Experiment {
        id: "may-fig2",
        setup: "MAY's sampling alone: flows with Pareto sizes (shape 1.1..2, mean 10 packets) cross a MAY queue with S0 = 500, 1000, 2000; the table entries per flow and the share of short flows (< S0 packets) never sampled",
        published: "about 1 bit of table memory per flow (10-byte entries); more than 98% of short flows lossless for S0 > 500, more than 99% for S0 > 1000 (Figs. 2 and 3)",
        scenario_toml: None,
        disciplines: &[May],
        sweep: Sweep::MayMemoryModel,
        analyze: crate::may_paper::fig2_model,
    },
    Experiment {
        id: "may-fig5",
        setup: "100 long-lived TCP flows (SACK, delayed ACKs, RTT 40..440 ms) on one 80 Mbps link with a 100-packet buffer, 2 minutes",
        published: "Jain's index of the flows' throughputs: RED 0.606, DRR 0.997, MAY 0.993",
        scenario_toml: Some(include_str!("../../../scenarios/may-fig5.toml")),
        disciplines: MAY_SET,
        sweep: Sweep::None,
        analyze: crate::may_paper::fig5,
    },
    Experiment {
        id: "may-fig7",
        setup: "30 TCP flows across the 24-node topology of the MAY paper's Fig. 6 (10 Mbps links, 100-packet queues, access delays 40 i + 1 ms), 2 minutes",
        published: "max-min shares 0.5 Mbps (20 flows across c2-c3) and 1 Mbps (10 others); Jain's index of throughput over max-min share: RED 0.731, DRR 0.987, MAY 0.985",
        scenario_toml: Some(include_str!("../../../scenarios/may-fig7.toml")),
        disciplines: MAY_SET,
        sweep: Sweep::None,
        analyze: crate::may_paper::fig7,
    },
    Experiment {
        id: "may-fig8",
        setup: "19 TCP flows (RTT 20..220 ms) and one CBR flow at 0.5..8 Mbps on a 40 Mbps link, 5 minutes, the first discarded; the fair share is 2 Mbps",
        published: "MAY: the CBR below the fair share is lossless; above it, its throughput is about 0 (Theorem 3.2)",
        scenario_toml: Some(include_str!("../../../scenarios/may-fig8.toml")),
        disciplines: MAY_SET,
        sweep: Sweep::CbrRates,
        analyze: crate::may_paper::fig8,
    },
    Experiment {
        id: "may-fig9",
        setup: "250 short TCP transfers (uniform 1..1000 packets, one per second, RTT 100 ms) among 50 long-lived TCP flows (RTT 20..200 ms) on a 40 Mbps link; no window caps",
        published: "mean flow completion time: RED 8.14 s, DRR 10.34 s, LAS 1.26 s, MAY 1.72 s",
        scenario_toml: Some(include_str!("../../../scenarios/may-fig9.toml")),
        disciplines: MAY_SET,
        sweep: Sweep::None,
        analyze: crate::may_paper::fig9,
    },
    Experiment {
        id: "overlay-fig6",
        setup: "linear network: M = 1..6 bottlenecks of 100 Mbps, 4 one-hop loops on each and one loop across all, each carrying a greedy source; FIFO inside",
        published: "the long flow's throughput between the proportional-fair C/(1+MK) and the min-potential-delay C/(1+K sqrt M) values, closer to the former; utilization ~100%; every queue < 40 packets; no packet lost",
        scenario_toml: None,
        disciplines: &[Fifo],
        sweep: Sweep::OverlayLinear { max: 6 },
        analyze: crate::overlay_paper::fig6,
    },
    Experiment {
        id: "overlay-fig7",
        setup: "dumbbell: N = 10..500 TCP flows over E = 0, 2, 5, 10 edge-to-edge loops, 10 Mbps bottleneck, 50-packet buffers; FIFO or FRED in the loops' queues (at the bottleneck for E = 0)",
        published: "CoV of per-TCP goodput at 500 flows: up to 4 with no loops, 2.5 with 2 loops (FIFO) and with FRED at the bottleneck, 1.2 with 10 loops (FIFO), 0.7 with 10 loops and FRED at the edges; mean goodput close to 100%",
        scenario_toml: None,
        disciplines: &[Fifo],
        sweep: Sweep::OverlayDumbbell,
        analyze: crate::overlay_paper::fig7,
    },
    Experiment {
        id: "overlay-fig8",
        setup: "one 20 Mbps FIFO bottleneck, a UDP at 20 Mbps and a TCP, each in an edge-to-edge loop; and the same without loops",
        published: "the UDP's excess stays at its own ingress; the TCP gets its fair share",
        scenario_toml: Some(include_str!("../../../scenarios/overlay-fig8.toml")),
        disciplines: &[Fifo],
        sweep: Sweep::LoopsOffOn,
        analyze: crate::overlay_paper::fig8,
    },
    Experiment {
        id: "overlay-fig9",
        setup: "as overlay-fig8 with a 10 Mbps bottleneck; the TCP loop has a 4 Mbps assured rate, the UDP loop none",
        published: "the TCP gets its 4 Mbps plus half the remaining 6: about 7 Mbps",
        scenario_toml: Some(include_str!("../../../scenarios/overlay-fig9.toml")),
        disciplines: &[Fifo],
        sweep: Sweep::LoopsOffOn,
        analyze: crate::overlay_paper::fig9,
    },
    Experiment {
        id: "overlay-fig10",
        setup: "a best-effort loop with a greedy source on a 100 Mbps bottleneck; at t = 2 s a quasi-leased line of b x 100 Mbps starts at its rate, b = 0.2..0.8",
        published: "best effort backs off fast and the leased line gets its rate with no loss; the transient queue matches the single-bottleneck bound b/(1-b) (in units of C tau)",
        scenario_toml: None,
        disciplines: &[Fifo],
        sweep: Sweep::LeasedShares,
        analyze: crate::overlay_paper::fig10,
    },
    Experiment {
        id: "weighted-1link",
        setup: "weighted CSFQ: UDP flows of weights 1, 2, 3, each offering 10 Mbps on a 10 Mbps link",
        published: "weighted max-min (Section 2.3): 1.67, 3.33, 5.00 Mbps",
        scenario_toml: Some(include_str!("../../../scenarios/weighted-1link.toml")),
        disciplines: CSFQ_ONLY,
        sweep: Sweep::None,
        analyze: crate::csfq_paper::weighted_1link,
    },
    Experiment {
        id: "weighted-2links",
        setup: "weighted CSFQ across two links: the weight-2 flow is labeled at its edge and judged by that label at the next core",
        published: "weighted max-min: 10, 4, 6 Mbps",
        scenario_toml: Some(include_str!("../../../scenarios/weighted-2links.toml")),
        disciplines: CSFQ_ONLY,
        sweep: Sweep::None,
        analyze: crate::csfq_paper::weighted_2links,
    },
];

/// The CSFQ paper's default RED and FRED thresholds, bytes (Section 3: "the first threshold
/// is set to 16 KB, while the second one is set to 32 KB", with a 64 KB buffer).
/// csfq-table3's file scales them with its 256 KB buffer; these run beside it.
pub const TABLE3_DEFAULT_THRESHOLDS: (u32, u32) = (16_000, 32_000);

/// tuf-fig13's reference share for the main flow, Mbit/s: the max-min share it would get
/// at each instant, averaged over the ON/OFF states. On each of `links` 10 Mbit/s links, 10
/// cross flows are each ON (4 Mbit/s) half the time, independently; with `n` of them ON a
/// greedy main flow's share there is `10 - 4n` if that is at least 4, else `10 / (n + 1)`;
/// across the links it gets the smallest. Exact, by enumerating `n ~ Binomial(10, 1/2)` per
/// link: 1.827 Mbit/s for 1 link, 1.404 for 3, 1.304 for 5 (the 0.909 of the constant 2
/// Mbit/s cross traffic is the share at the mean load, which a flow only gets when it
/// cannot follow the ON/OFF changes).
pub fn onoff_reference_share_mbps(links: u32) -> f64 {
    const CROSS: u32 = 10;
    let share = |n: u32| {
        let left = 10.0 - 4.0 * n as f64;
        if left >= 4.0 {
            left
        } else {
            10.0 / (n as f64 + 1.0)
        }
    };
    let binom = |n: u32| (1..=n).fold(1.0, |c, i| c * (CROSS - i + 1) as f64 / i as f64);
    let p = |n: u32| binom(n) / 2f64.powi(CROSS as i32);
    // E[min] = sum over the distinct share values v (ascending) of (v - v_prev) P(share >= v)^links.
    let mut values: Vec<f64> = (0..=CROSS).map(share).collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    let mut prev = 0.0;
    let mut e = 0.0;
    for v in values {
        let tail: f64 = (0..=CROSS).filter(|&n| share(n) >= v).map(p).sum();
        e += (v - prev) * tail.powi(links as i32);
        prev = v;
    }
    e
}

/// The mean ON (= OFF) periods of tuf-fig13, ms.
pub const ONOFF_PERIODS_MS: [f64; 8] = [5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0];

/// tuf-fig4: per-tag loss probability of the TUF queue (M/D/1/64 at 2000 packets/s, 1 ms
/// service, tags uniform on 0..2047) over `secs`, and the bufferless filter model's
/// threshold: it admits the lowest tags up to the service rate, 1000 of the 2000 packets/s,
/// so tags below 1024 pass and the rest are lost.
pub fn tuf_filter_model(seed: u64, secs: f64) -> (Vec<f64>, u16) {
    use csfq_algo::tuf::{TufParams, TufQueue, TAGS};
    use csfq_algo::QueueDisc;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    use csfq_sim::packet::SimPacket;

    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut q: TufQueue<SimPacket> = TufQueue::new(TufParams::new(64 * 1000));
    let (mut arrivals, mut losses) = (vec![0u64; TAGS], vec![0u64; TAGS]);
    let service = Nanos::from_millis(1);
    let end = Nanos::from_secs_f64(secs);
    let mut next_arrival = Nanos::ZERO;
    let mut busy_until: Option<Nanos> = None;
    loop {
        // Serve departures due before the next arrival.
        while let Some(t) = busy_until.filter(|&t| t <= next_arrival) {
            busy_until = q.dequeue(t).map(|_| t + service);
        }
        if next_arrival >= end {
            break;
        }
        let now = next_arrival;
        let tag = rng.random_range(0..TAGS as u16);
        arrivals[tag as usize] += 1;
        let mut p = SimPacket::data(csfq_algo::FlowId(0), 1000, 0, now);
        p.tag = tag;
        if let Some(d) = q.enqueue(p, now, &mut rng) {
            losses[d.packet.tag as usize] += 1;
        }
        if busy_until.is_none() {
            busy_until = q.dequeue(now).map(|_| now + service);
        }
        let u = 1.0 - rng.random::<f64>();
        next_arrival = now + Nanos::from_secs_f64(-u.ln() / 2000.0);
    }
    let loss = arrivals
        .iter()
        .zip(&losses)
        .map(|(&a, &l)| if a > 0 { l as f64 / a as f64 } else { 0.0 })
        .collect();
    (loss, 1024)
}

/// Looks an experiment up by id.
pub fn find(id: &str) -> Option<&'static Experiment> {
    EXPERIMENTS.iter().find(|e| e.id == id)
}

impl Experiment {
    /// The experiment's base scenario (panics for tuf-fig4, which has none). CSFQ in it is
    /// the paper's: its estimator, and 100 ms where the scenario states no constants.
    pub fn scenario(&self) -> ScenarioFile {
        let text = self.scenario_toml.expect("a network experiment");
        let mut s = ScenarioFile::parse(text, Path::new(&format!("scenarios/{}.toml", self.id)))
            .expect("shipped scenarios are valid");
        s.csfq = s.csfq.paper();
        s
    }

    /// Every run with discipline `d`, with the paper's CSFQ (as [`Experiment::scenario`]).
    pub fn runs(&self, d: DisciplineKind) -> Vec<Run> {
        let mut runs = self.generated_runs(d);
        for r in &mut runs {
            r.scenario.csfq = r.scenario.csfq.paper();
        }
        runs
    }

    fn generated_runs(&self, d: DisciplineKind) -> Vec<Run> {
        if matches!(self.sweep, Sweep::TufFilterModel | Sweep::MayMemoryModel) {
            return Vec::new();
        }
        let run = |x: f64, label: String, scenario| Run { x, label, scenario };
        match self.sweep {
            Sweep::OverlayLinear { max } => {
                return (1..=max)
                    .map(|m| run(m as f64, format!("M = {m}"), linear(m)))
                    .collect()
            }
            Sweep::OverlayDumbbell => {
                let mut runs = Vec::new();
                for fred in [false, true] {
                    for e in DUMBBELL_LOOPS {
                        for n in DUMBBELL_FLOWS {
                            let q = if fred { "fred" } else { "fifo" };
                            runs.push(run(
                                runs.len() as f64,
                                format!("E = {e}, {q}, N = {n}"),
                                dumbbell(e, n, fred),
                            ));
                        }
                    }
                }
                return runs;
            }
            Sweep::LeasedShares => {
                return LEASED_SHARES
                    .iter()
                    .map(|&b| run(b, format!("b = {b}"), leased(b)))
                    .collect()
            }
            _ => {}
        }
        let base = self.scenario().with_discipline(d);
        match self.sweep {
            Sweep::OverlayLinear { .. } | Sweep::OverlayDumbbell | Sweep::LeasedShares => {
                Vec::new()
            }
            Sweep::LoopsOffOn => vec![
                run(0.0, "no loops".into(), without_loops(&base)),
                run(1.0, "loops".into(), base),
            ],
            Sweep::None => vec![run(0.0, String::new(), base)],
            Sweep::Table3Thresholds => {
                let mut runs = vec![run(0.0, String::new(), base.clone())];
                if matches!(d, Red | Fred1 | Fred2) {
                    let mut s = base;
                    (s.red.min_th_bytes, s.red.max_th_bytes) = TABLE3_DEFAULT_THRESHOLDS;
                    runs.push(run(1.0, "16/32 KB thresholds".into(), s));
                }
                runs
            }
            Sweep::Fig4Flows => (2..=32)
                .map(|n| run(n as f64, format!("N = {n}"), fig4_with(&base, n)))
                .collect(),
            Sweep::ChainLinks { max } => {
                let kind = base.flows[0].get_ref().kind;
                (1..=max)
                    .map(|k| {
                        let mut s = chain(k, kind, Cross::Cbr);
                        s.seed = base.seed;
                        run(k as f64, format!("K = {k}"), s.with_discipline(d))
                    })
                    .collect()
            }
            Sweep::OnOffPeriods { links } => {
                let kind = base.flows[0].get_ref().kind;
                ONOFF_PERIODS_MS
                    .iter()
                    .map(|&period_ms| {
                        let mut s = chain(links, kind, Cross::OnOff { period_ms });
                        s.seed = base.seed;
                        run(
                            period_ms,
                            format!("period {period_ms} ms"),
                            s.with_discipline(d),
                        )
                    })
                    .collect()
            }
            Sweep::TufFilterModel | Sweep::MayMemoryModel => Vec::new(),
            Sweep::CbrRates => MAY_CBR_RATES_MBPS
                .iter()
                .map(|&x| {
                    let mut s = base.clone();
                    s.flows[0].get_mut().rate_mbps = Some(x);
                    run(x, format!("CBR {x} Mbps"), s)
                })
                .collect(),
            Sweep::Table4Variants => {
                let mut tcp = base.clone();
                for f in &mut tcp.flows {
                    let f = f.get_mut();
                    f.kind = FlowKind::Tcp;
                    f.rate_mbps = None;
                }
                let mut no_relabel = base.clone();
                no_relabel.csfq.relabel = false;
                vec![
                    run(0.0, "UDP".into(), base),
                    run(1.0, "TCP".into(), tcp),
                    run(2.0, "UDP, relabeling off".into(), no_relabel),
                ]
            }
        }
    }
}

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
    let routers: Vec<String> = (0..=k).map(|i| format!("\"r{i}\"")).collect();
    let access = "access = { rate_mbps = 100, delay_ms = 1 }";
    let main_flow = match main {
        FlowKind::Tcp => String::from("kind = \"tcp\""),
        _ => String::from("kind = \"udp\"\nrate_mbps = 0.909"),
    };
    let mut t = format!(
        "name = \"csfq-fig6{v}\"\ndescription = \"{m} flow across {k} congested links, 10 UDP cross flows at 2 Mbps on each\"\n\
         duration_s = 10.0\nseed = 1\ndiscipline = \"csfq\"\nrouters = [{r}]\n",
        v = if main == FlowKind::Tcp { "b" } else { "a" },
        m = main.name(),
        r = routers.join(", ")
    );
    for i in 1..=k {
        t += &format!("\n[[link]]\nbetween = [\"r{}\", \"r{i}\"]\nrate_mbps = 10\ndelay_ms = 1\nbuffer_bytes = 64000\n", i - 1);
    }
    t += &format!("\n[[flow]]\n{main_flow}\nfrom = \"r0\"\nto = \"r{k}\"\n{access}\n");
    for i in 1..=k {
        let cross_flow = match cross {
            Cross::Cbr => String::from("kind = \"udp\"\nrate_mbps = 2"),
            Cross::OnOff { period_ms } => {
                format!(
                    "kind = \"onoff\"\nrate_mbps = 4\non_ms = {period_ms}\noff_ms = {period_ms}"
                )
            }
        };
        t += &format!(
            "\n[[flow]]\n{cross_flow}\nfrom = \"r{}\"\nto = \"r{i}\"\ncount = 10\n{access}\n",
            i - 1
        );
    }
    let mut s = ScenarioFile::parse(&t, Path::new("chain")).expect("generated chain is valid");
    s.csfq = s.csfq.paper(); // the papers' experiments
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_scenarios_parse_and_build() {
        for e in EXPERIMENTS {
            for d in e.disciplines {
                for r in e.runs(*d) {
                    csfq_sim::Topology::build(&r.scenario).unwrap();
                }
            }
        }
    }

    /// The shipped fig6 files are the generator's K = 10 chains (kept in step).
    #[test]
    fn shipped_chains_match_the_generator() {
        for (id, kind) in [("csfq-fig6a", FlowKind::Udp), ("csfq-fig6b", FlowKind::Tcp)] {
            let shipped = find(id).unwrap().scenario();
            let generated = chain(10, kind, Cross::Cbr);
            assert_eq!(shipped.to_toml(), generated.to_toml(), "{id}");
        }
    }

    #[test]
    fn chain_oracle_gives_every_flow_a_share_of_10_over_11() {
        for k in [1, 4, 10] {
            let fair = csfq_sim::Topology::build(&chain(k, FlowKind::Udp, Cross::Cbr))
                .unwrap()
                .max_min_allocation();
            for a in fair {
                // UDP-0 sends 0.909 Mbps, just under 10/11: the cross flows share the rest.
                assert!((a - 10e6 / 11.0).abs() < 100.0, "{a}");
            }
        }
    }

    /// The ON/OFF reference share against a brute-force average over every on/off
    /// pattern of 3 links (2^30 patterns reduced to counts per link) and hand values.
    #[test]
    fn onoff_reference_share_is_the_mean_instantaneous_share() {
        // One link, by hand: n = 0: 10, n = 1: 6, n >= 2: 10/(n+1).
        let mut e1 = 10.0 / 1024.0 + 6.0 * 10.0 / 1024.0;
        let mut c = 10.0;
        for n in 2..=10u32 {
            c = c * (10 - n + 1) as f64 / n as f64;
            e1 += 10.0 / (n as f64 + 1.0) * c / 1024.0;
        }
        assert!((onoff_reference_share_mbps(1) - e1).abs() < 1e-12);
        // Three links: sum over (n1, n2, n3) of P * min share.
        let share = |n: u32| {
            if n <= 1 {
                10.0 - 4.0 * n as f64
            } else {
                10.0 / (n as f64 + 1.0)
            }
        };
        let p: Vec<f64> = (0..=10u32)
            .map(|n| (1..=n).fold(1.0, |c, i| c * (10 - i + 1) as f64 / i as f64) / 1024.0)
            .collect();
        let mut e3 = 0.0;
        for a in 0..=10u32 {
            for b in 0..=10u32 {
                for d in 0..=10u32 {
                    let m = share(a).min(share(b)).min(share(d));
                    e3 += p[a as usize] * p[b as usize] * p[d as usize] * m;
                }
            }
        }
        assert!((onoff_reference_share_mbps(3) - e3).abs() < 1e-12);
        assert!((onoff_reference_share_mbps(3) - 1.404).abs() < 1e-3);
    }
}

/// may-fig2/3's Pareto shapes and `S0` values.
pub const MAY_MODEL_SHAPES: [f64; 5] = [1.1, 1.25, 1.5, 1.75, 2.0];
/// may-fig2/3's `S0` values.
pub const MAY_MODEL_S0: [f64; 3] = [500.0, 1000.0, 2000.0];

/// What the MAY algorithm's sampling does to a population of flows, measured by running
/// them through the real [`csfq_algo::may::May`] queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaySampling {
    /// Flows that entered the table, over all flows (`E(z(f))`).
    pub hashed_share: f64,
    /// Short flows (fewer than `S0` packets) that never entered it, over short flows.
    pub lossless_short_share: f64,
}

/// may-fig2/3 by simulation: `flows` flows with Pareto sizes (`shape`, mean `mean_pkts`,
/// whole packets) cross a MAY queue with `S0 = s0`, one after another; a flow counts as
/// hashed if the table gained an entry while its packets went through. Nothing is
/// dropped here (the link is never above `u0`): what is measured is which flows would be
/// exposed to MAY's drops.
pub fn may_sampling(seed: u64, shape: f64, mean_pkts: f64, s0: f64, flows: u32) -> MaySampling {
    use csfq_algo::may::{May, MayParams};
    use csfq_algo::{FlowId, QueueDisc};
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    use csfq_sim::packet::SimPacket;

    let mut sizes = Pcg64Mcg::seed_from_u64(seed);
    let mut draws = Pcg64Mcg::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
    let params = MayParams {
        s0,
        table_capacity: usize::MAX,
        ..MayParams::new(1e9, 1 << 20)
    };
    let mut q: May<SimPacket> = May::new(params).expect("valid parameters");
    let (mut hashed, mut short, mut short_lossless) = (0u64, 0u64, 0u64);
    for f in 0..flows {
        let n = csfq_sim::net::pareto(mean_pkts, shape, &mut sizes);
        let before = q.stats().inserts;
        for seq in 0..n {
            let p = SimPacket::data(FlowId(f), 1000, seq, Nanos::ZERO);
            if q.enqueue(p, Nanos::ZERO, &mut draws).is_none() {
                q.dequeue(Nanos::ZERO);
            }
        }
        let was_hashed = q.stats().inserts > before;
        hashed += was_hashed as u64;
        if (n as f64) < s0 {
            short += 1;
            short_lossless += !was_hashed as u64;
        }
    }
    MaySampling {
        hashed_share: hashed as f64 / flows as f64,
        lossless_short_share: short_lossless as f64 / short.max(1) as f64,
    }
}

/// The MAY paper's fluid model (Eqs. 1-4, [`csfq_algo::may::FluidModel`]) of a one-link
/// scenario's long-lived TCP flows, with each flow's round-trip propagation time (its two
/// access links, each way, and the link) and the scenario's `[may]` parameters; `None`
/// for a scenario of more than one link or with flows of other kinds or without access
/// links.
pub fn may_fluid_model(s: &ScenarioFile) -> Option<csfq_algo::may::FluidModel> {
    use csfq_algo::may::FluidModel;
    let [link] = s.links.as_slice() else {
        return None;
    };
    let link = link.get_ref();
    let mut rtts = Vec::new();
    for f in &s.flows {
        let f = f.get_ref();
        let access = f.access?;
        if f.kind != FlowKind::Tcp || f.size_pkts.is_some() {
            return None;
        }
        for j in 0..f.count {
            let one_way =
                2.0 * (access.delay_ms + f64::from(j) * access.delay_step_ms) + link.delay_ms;
            rtts.push(2.0 * one_way / 1e3);
        }
    }
    Some(FluidModel::from_rtts(&rtts, &may_params(s)?))
}

/// MAY's parameters on a one-link scenario's link, from its `[may]` table; `None` for a
/// scenario of more than one link.
pub fn may_params(s: &ScenarioFile) -> Option<csfq_algo::may::MayParams> {
    use csfq_algo::may::MayParams;
    let [link] = s.links.as_slice() else {
        return None;
    };
    let link = link.get_ref();
    let m = &s.may;
    Some(MayParams {
        update_interval: Nanos::from_secs_f64(m.update_interval_ms / 1e3),
        target_utilization: m.target_utilization,
        gain: m.gain,
        q_w: m.q_w,
        packet_bytes: s.tcp.segment_bytes,
        ..MayParams::new(link.rate_mbps * 1e6, link.buffer_bytes)
    })
}
