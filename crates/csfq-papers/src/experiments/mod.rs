//! The published experiments: their scenarios (the files under `scenarios/`), the
//! variations each runs, and the numbers the papers report, so results can be printed
//! beside them.

use csfq_sim::config::DisciplineKind;

mod runs;
mod unstated;
pub use crate::scenarios::models::*;
pub use crate::scenarios::overlay::*;
pub use crate::scenarios::{
    chain, fig4_with, Cross, Run, Sweep, MAY_CBR_RATES_MBPS, ONOFF_PERIODS_MS,
    TABLE3_DEFAULT_THRESHOLDS,
};
pub use unstated::{inert, unstated, Inert, Unstated, INERT};

use crate::scenarios;

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

use DisciplineKind::*;

const ALL_SIX: &[DisciplineKind] = &[Fifo, Red, Fred1, Fred2, Drr, Csfq];
const CSFQ_ONLY: &[DisciplineKind] = &[Csfq];
const TUF_SET: &[DisciplineKind] = &[Csfq, Tuf, Drr];
/// The thesis names one FRED and not which; both of ours are judged.
const CSFNE_SET: &[DisciplineKind] = &[Csfne, Drr, Csfq, Red, Fred1, Fred2];
/// The MAY paper's comparisons (adaptive RED as its RED, DRR, LAS) and CSFQ beside them.
const MAY_SET: &[DisciplineKind] = &[Ared, Drr, Las, May, Csfq];

/// Every experiment reproduced so far.
pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        id: "csfq-fig3a",
        setup: "32 UDP flows on one 10 Mbps link; flow i sends (i+1) x its 0.3125 Mbps fair share",
        published: "FIFO, RED, FRED-1: share proportional to rate; DRR fair; CSFQ every flow within -11%..+5% of 0.3125 Mbps; FRED-2 less precise than DRR",
        scenario_toml: Some(scenarios::CSFQ_FIG3A),
        disciplines: ALL_SIX,
        sweep: Sweep::None,
        analyze: crate::csfq_paper::fig3a,
    },
    Experiment {
        id: "csfq-fig3b",
        setup: "one UDP flow at 10 Mbps against 31 TCP flows on one 10 Mbps link",
        published: "UDP throughput: FIFO > 8, RED > 8, FRED ~1.8, DRR 0.396, CSFQ 0.361 Mbps",
        scenario_toml: Some(scenarios::CSFQ_FIG3B),
        disciplines: ALL_SIX,
        sweep: Sweep::None,
        analyze: crate::csfq_paper::fig3b,
    },
    Experiment {
        id: "csfq-fig4",
        setup: "one TCP flow against N-1 UDP flows each sending twice the 10/N Mbps fair share, N = 2..32",
        published: "DRR good up to N ~ 22 then falls; CSFQ beats DRR for large N and is >= FRED throughout; CSFQ keeps 55-90% of the fair share (TUF paper)",
        scenario_toml: Some(scenarios::CSFQ_FIG4),
        disciplines: ALL_SIX,
        sweep: Sweep::Fig4Flows,
        analyze: crate::csfq_paper::fig4,
    },
    Experiment {
        id: "csfq-fig6a",
        setup: "a UDP flow at its 0.909 Mbps fair share crosses K = 1..10 congested 10 Mbps links, each also carrying 10 one-hop UDP flows at 2 Mbps",
        published: "fraction of the UDP's traffic delivered: DRR best, CSFQ and FRED reasonably well. CS-FNE thesis (mean over K): DRR 0.986, CSFQ 0.936, RED 0.732, FRED 0.233",
        scenario_toml: Some(scenarios::CSFQ_FIG6A),
        disciplines: ALL_SIX,
        sweep: Sweep::ChainLinks { max: 10 },
        analyze: crate::csfq_paper::fig6a,
    },
    Experiment {
        id: "csfq-fig6b",
        setup: "as csfq-fig6a with the main flow a TCP: its throughput over its 0.909 Mbps fair share against K",
        published: "DRR and CSFQ effective; FRED much worse; RED and FIFO worst. CS-FNE thesis (mean over K): DRR 0.859, CSFQ 0.651, RED 0.143, FRED 0.013",
        scenario_toml: Some(scenarios::CSFQ_FIG6B),
        disciplines: ALL_SIX,
        sweep: Sweep::ChainLinks { max: 10 },
        analyze: crate::csfq_paper::fig6b,
    },
    Experiment {
        id: "csfq-fig7",
        setup: "1 TCP and 3 RLM sessions (7 layers, layer i at 2^(i+4) Kbps) on a 4 Mbps link, K = 250 ms, 200 s",
        published: "DRR and CSFQ give each flow about its 1 Mbps share (RLM: five layers); FRED does not",
        scenario_toml: Some(scenarios::CSFQ_FIG7),
        disciplines: ALL_SIX,
        sweep: Sweep::None,
        analyze: crate::csfq_paper::fig7,
    },
    Experiment {
        id: "csfq-table1",
        setup: "an ON-OFF source (exponential ON 100 ms / OFF 1900 ms, 10 Mbps while ON) against 19 TCP flows on a 10 Mbps link, 100 s",
        published: "ON-OFF packets delivered / dropped of 6758 sent: DRR 601 / 6157, CSFQ 1680 / 5078, FRED close to CSFQ, RED 5322 / 1436 (?), FIFO 5452 / 1306 (?)",
        scenario_toml: Some(scenarios::CSFQ_TABLE1),
        disciplines: ALL_SIX,
        sweep: Sweep::None,
        analyze: crate::csfq_paper::table1,
    },
    Experiment {
        id: "csfq-table2",
        setup: "60 short TCP transfers (Pareto sizes, mean 20 packets, shape 1.06; exponential start gaps, mean 0.05 ms) against a 10 Mbps UDP flow on a 10 Mbps link",
        published: "mean transfer time: DRR best, FRED better than CSFQ (CSFQ keeps a larger queue), CSFQ almost an order of magnitude better than FIFO and RED",
        scenario_toml: Some(scenarios::CSFQ_TABLE2),
        disciplines: ALL_SIX,
        sweep: Sweep::None,
        analyze: crate::csfq_paper::table2,
    },
    Experiment {
        id: "csfq-table3",
        setup: "1 UDP at 10 Mbps and 19 TCP flows on a 10 Mbps link with 100 ms delay, 256 KB buffer, K = 400 ms, 100 s",
        published: "mean (std) packets delivered per TCP: DRR 6080 (64), CSFQ 5761 (220), FRED 4974 (190), RED 628 (80), FIFO 378 (69)",
        scenario_toml: Some(scenarios::CSFQ_TABLE3),
        disciplines: ALL_SIX,
        sweep: Sweep::Table3Thresholds,
        analyze: crate::csfq_paper::table3,
    },
    Experiment {
        id: "csfq-table4",
        setup: "flows 1, 2 share link 1, flow 3 joins them on link 2, every source at 10 Mbps; throughput on link 2",
        published: "UDP 3.36, 3.32, 3.28 Mbps; TCP 3.43, 3.13, 3.43 Mbps (fair share 3.33)",
        scenario_toml: Some(scenarios::CSFQ_TABLE4),
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
        scenario_toml: Some(scenarios::CSFQ_FIG3A),
        disciplines: TUF_SET,
        sweep: Sweep::None,
        analyze: crate::tuf_report::fig9a,
    },
    Experiment {
        id: "tuf-fig9b",
        setup: "csfq-fig3b (1 UDP at 10 Mbps against 31 TCP) under CSFQ, TUF and DRR",
        published: "TUF, CSFQ and DRR comparable",
        scenario_toml: Some(scenarios::CSFQ_FIG3B),
        disciplines: TUF_SET,
        sweep: Sweep::None,
        analyze: crate::tuf_report::fig9b,
    },
    Experiment {
        id: "tuf-fig10",
        setup: "csfq-fig4 (1 TCP against N-1 UDP at twice their share, N = 2..32) under CSFQ, TUF and DRR",
        published: "TCP gets 70-100% of its fair share under TUF, 55-90% under CSFQ",
        scenario_toml: Some(scenarios::CSFQ_FIG4),
        disciplines: TUF_SET,
        sweep: Sweep::Fig4Flows,
        analyze: crate::tuf_report::fig10,
    },
    Experiment {
        id: "tuf-fig12a",
        setup: "a TCP across K = 1..9 congested links, 10 CBR cross flows at 2 Mbps per link",
        published: "TUF >= CSFQ as links are added; DRR slightly better",
        scenario_toml: Some(scenarios::CSFQ_FIG6B),
        disciplines: TUF_SET,
        sweep: Sweep::ChainLinks { max: 9 },
        analyze: crate::tuf_report::fig12a,
    },
    Experiment {
        id: "tuf-fig12b",
        setup: "a UDP at 909 Kbps across K = 1..9 congested links, 10 CBR cross flows at 2 Mbps per link",
        published: "the UDP is perfectly served by DRR, CSFQ and TUF",
        scenario_toml: Some(scenarios::CSFQ_FIG6A),
        disciplines: TUF_SET,
        sweep: Sweep::ChainLinks { max: 9 },
        analyze: crate::tuf_report::fig12b,
    },
    Experiment {
        id: "tuf-fig13-3links",
        setup: "a TCP across 3 congested links; the 10 cross flows per link are ON/OFF (4 Mbps while ON, exponential ON and OFF of equal mean 5 ms..1 s)",
        published: "CSFQ degrades sharply near 100 ms periods (bursts of losses hit the TCP); TUF does not",
        scenario_toml: Some(scenarios::CSFQ_FIG6B),
        disciplines: TUF_SET,
        sweep: Sweep::OnOffPeriods { links: 3 },
        analyze: crate::tuf_report::fig13_3links,
    },
    Experiment {
        id: "tuf-fig13-5links",
        setup: "as tuf-fig13-3links across 5 congested links",
        published: "CSFQ degrades sharply near 100 ms periods; TUF does not",
        scenario_toml: Some(scenarios::CSFQ_FIG6B),
        disciplines: TUF_SET,
        sweep: Sweep::OnOffPeriods { links: 5 },
        analyze: crate::tuf_report::fig13_5links,
    },
    Experiment {
        id: "csfne-table1",
        setup: "csfq-fig3a under CS-FNE, DRR, CSFQ, RED, FRED: per-flow throughput (Mbps), average / max-min / std",
        published: "CS-FNE 0.312 / 0.162 / 0.046; DRR 0.312 / 0.176 / 0.056; CSFQ 0.310 / 0.050 / 0.015; RED 0.312 / 0.438 / 0.132; FRED 0.312 / 0.582 / 0.176",
        scenario_toml: Some(scenarios::CSFNE_TABLE1),
        disciplines: CSFNE_SET,
        sweep: Sweep::None,
        analyze: crate::csfne_thesis::table1,
    },
    Experiment {
        id: "csfne-table2",
        setup: "csfq-fig4 under CS-FNE, DRR, CSFQ, RED, FRED: the TCP's normalized throughput over N = 2..32, average / max-min / std",
        published: "CS-FNE 0.643 / 0.690 / 0.171; DRR 0.850 / 0.704 / 0.248; CSFQ 0.703 / 0.432 / 0.093; RED 0.339 / 0.920 / 0.331; FRED 0.101 / 0.078 / 0.042",
        scenario_toml: Some(scenarios::CSFQ_FIG4),
        disciplines: CSFNE_SET,
        sweep: Sweep::Fig4Flows,
        analyze: crate::csfne_thesis::table2,
    },
    Experiment {
        id: "csfne-table5",
        setup: "csfq-fig6a under CS-FNE, DRR, CSFQ, RED, FRED: the UDP's delivered fraction over K = 1..10, average / max-min / std",
        published: "CS-FNE 0.889 / 0.088 / 0.038; DRR 0.986 / 0.008 / 0.003; CSFQ 0.936 / 0.058 / 0.023; RED 0.732 / 0.192 / 0.078; FRED 0.233 / 0.476 / 0.195",
        scenario_toml: Some(scenarios::CSFQ_FIG6A),
        disciplines: CSFNE_SET,
        sweep: Sweep::ChainLinks { max: 10 },
        analyze: crate::csfne_thesis::table5,
    },
    Experiment {
        id: "csfne-table6",
        setup: "csfq-fig6b under CS-FNE, DRR, CSFQ, RED, FRED: the TCP's normalized throughput over K = 1..10, average / max-min / std",
        published: "CS-FNE 0.621 / 0.241 / 0.104; DRR 0.859 / 0.165 / 0.062; CSFQ 0.651 / 0.099 / 0.038; RED 0.143 / 0.689 / 0.306; FRED 0.013 / 0.048 / 0.023",
        scenario_toml: Some(scenarios::CSFQ_FIG6B),
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
        scenario_toml: Some(scenarios::MAY_FIG5),
        disciplines: MAY_SET,
        sweep: Sweep::None,
        analyze: crate::may_paper::fig5,
    },
    Experiment {
        id: "may-fig7",
        setup: "30 TCP flows across the 24-node topology of the MAY paper's Fig. 6 (10 Mbps links, 100-packet queues, access delays 40 i + 1 ms), 2 minutes",
        published: "max-min shares 0.5 Mbps (20 flows across c2-c3) and 1 Mbps (10 others); Jain's index of throughput over max-min share: RED 0.731, DRR 0.987, MAY 0.985",
        scenario_toml: Some(scenarios::MAY_FIG7),
        disciplines: MAY_SET,
        sweep: Sweep::None,
        analyze: crate::may_paper::fig7,
    },
    Experiment {
        id: "may-fig8",
        setup: "19 TCP flows (RTT 20..220 ms) and one CBR flow at 0.5..8 Mbps on a 40 Mbps link, 5 minutes, the first discarded; the fair share is 2 Mbps",
        published: "MAY: the CBR below the fair share is lossless; above it, its throughput is about 0 (Theorem 3.2)",
        scenario_toml: Some(scenarios::MAY_FIG8),
        disciplines: MAY_SET,
        sweep: Sweep::CbrRates,
        analyze: crate::may_paper::fig8,
    },
    Experiment {
        id: "may-fig9",
        setup: "250 short TCP transfers (uniform 1..1000 packets, one per second, RTT 100 ms) among 50 long-lived TCP flows (RTT 20..200 ms) on a 40 Mbps link; no window caps",
        published: "mean flow completion time: RED 8.14 s, DRR 10.34 s, LAS 1.26 s, MAY 1.72 s",
        scenario_toml: Some(scenarios::MAY_FIG9),
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
        scenario_toml: Some(scenarios::OVERLAY_FIG8),
        disciplines: &[Fifo],
        sweep: Sweep::LoopsOffOn,
        analyze: crate::overlay_paper::fig8,
    },
    Experiment {
        id: "overlay-fig9",
        setup: "as overlay-fig8 with a 10 Mbps bottleneck; the TCP loop has a 4 Mbps assured rate, the UDP loop none",
        published: "the TCP gets its 4 Mbps plus half the remaining 6: about 7 Mbps",
        scenario_toml: Some(scenarios::OVERLAY_FIG9),
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
        scenario_toml: Some(scenarios::WEIGHTED_1LINK),
        disciplines: CSFQ_ONLY,
        sweep: Sweep::None,
        analyze: crate::csfq_paper::weighted_1link,
    },
    Experiment {
        id: "weighted-2links",
        setup: "weighted CSFQ across two links: the weight-2 flow is labeled at its edge and judged by that label at the next core",
        published: "weighted max-min: 10, 4, 6 Mbps",
        scenario_toml: Some(scenarios::WEIGHTED_2LINKS),
        disciplines: CSFQ_ONLY,
        sweep: Sweep::None,
        analyze: crate::csfq_paper::weighted_2links,
    },
];

/// Looks an experiment up by id.
pub fn find(id: &str) -> Option<&'static Experiment> {
    EXPERIMENTS.iter().find(|e| e.id == id)
}
