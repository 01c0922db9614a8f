//! Sections 3.5 and 3.6: large latency (Table 3) and packet relabeling (Table 4).

use csfq_sim::DisciplineKind;
use serde_json::json;

use super::*;
use crate::chart::{Chart, Series};
use crate::common::*;
use crate::{Analysis, Check, Prefer, Read, RunResult};

pub(crate) fn table3(results: &[RunResult]) -> Analysis {
    let mut rows = Vec::new();
    let mut json = Vec::new();
    let mut checks = Vec::new();
    for r in results {
        let pkts: Vec<f64> = r.report.flows[1..]
            .iter()
            .map(|f| f.delivered_pkts as f64)
            .collect();
        let (m, sd) = (mean(&pkts), std_dev(&pkts));
        let published = table3_published(r.discipline);
        // The runs with the paper's default thresholds (x = 1) are shown, not judged.
        let judged = r.x == 0.0;
        rows.push(vec![
            if judged {
                r.discipline.to_string()
            } else {
                format!("{} ({})", r.discipline, r.label)
            },
            format!("{m:.0} ({sd:.0})"),
            published.map_or(s("-"), |(pm, psd)| format!("{pm:.0} ({psd:.0})")),
            published.map_or(s("-"), |(pm, _)| format!("{:+.0}%", (m / pm - 1.0) * 100.0)),
            format!("{:.3}", r.report.flows[0].throughput_mbps),
        ]);
        let (pm, psd) = published.unwrap_or((f64::NAN, f64::NAN));
        json.push(json!({"discipline": r.discipline.name(), "variant": r.label, "mean_pkts": m, "std_pkts": sd, "paper_mean": pm, "paper_std": psd}));
        let fred = matches!(r.discipline, DisciplineKind::Fred1 | DisciplineKind::Fred2);
        if fred && judged {
            // One FRED row in the paper, "the version of FRED which performed better"
            // (Section 3): the variant whose TCPs get more over the seeds.
            checks.push(
                Check::noise(
                    format!("{}: packets delivered per TCP, mean", r.discipline),
                    "CSFQ paper, Table 3 and Section 3 ('the version of FRED which performed better')",
                    m,
                    pm,
                    Read::Printed(1.0),
                )
                .note_if_departs("FRED's result rests on its thresholds, which the paper does not give for this table: see the rows with its default 16/32 KB")
                .alternative(
                    "FRED, the better of FRED-1 and FRED-2 (the one whose TCPs get more): packets delivered per TCP, mean",
                    Prefer::Higher,
                ),
            );
        }
        if published.is_some() && judged && !fred {
            let c = Check::noise(
                format!("{}: packets delivered per TCP, mean", r.discipline),
                "CSFQ paper, Table 3",
                m,
                pm,
                Read::Printed(1.0),
            );
            // The TCPs' total, ours and the paper's, in Mbit/s of the 10 Mbit/s link: 1000-byte
            // packets over the run.
            let tcps = pkts.len() as f64;
            let mbps = |per_tcp: f64| tcps * per_tcp * 8000.0 / r.report.duration_s / 1e6;
            let timeouts =
                r.report.flows[1..].iter().map(|f| f.timeouts).sum::<u64>() as f64 / tcps;
            // Only RED's and FIFO's departures carry it.
            let residual = || {
                format!(
                "the TCPs live on what the UDP leaves them: {:.2} Mbps in all against the {:.2} the paper's {pm:.0} packets each imply ({tcps:.0} x packets x 8 kbit / {:.0} s), a difference of {:.1}% of the 10 Mbps link, which the band of 10% of so small a number cannot absorb; what is left to them depends on how long they sit in retransmission timeouts ({timeouts:.0} per TCP in the run at seed {}; sensitivity section: the TCP timer)",
                mbps(m),
                mbps(pm),
                r.report.duration_s,
                (mbps(m) - mbps(pm)).abs() * 10.0,
                r.seed,
            )
            };
            let c = match r.discipline {
                DisciplineKind::Red => c.note_if_departs(format!("{}. RED gives them more than published with either reading of the thresholds (see the 16/32 KB row) and every max_p from 0.02 to 0.2; its w_q and max_p are not given in the paper (ours: 0.002 and 0.1, ns-2's defaults)", residual())),
                DisciplineKind::Fifo => c.note_if_departs(residual()),
                _ => c,
            };
            checks.push(c);
        }
    }
    let fred_default = results
        .iter()
        .filter(|r| {
            r.x == 1.0 && matches!(r.discipline, DisciplineKind::Fred1 | DisciplineKind::Fred2)
        })
        .map(|r| {
            format!(
                "{} {:.0}",
                r.discipline,
                mean(
                    &r.report.flows[1..]
                        .iter()
                        .map(|f| f.delivered_pkts as f64)
                        .collect::<Vec<_>>()
                )
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let notes = vec![format!(
        "RED's and FRED's thresholds: the paper gives none for this table, only its defaults (16 KB and 32 KB beside a 64 KB buffer) and, for this table, its rule of scaling the averaging constants with the buffer (K = 400 ms, twice the maximum queueing delay). We apply that rule to the thresholds too, for RED and FRED alike: 64/128 KB on the 256 KB buffer. With the defaults kept (rows marked 16/32 KB, not judged) FRED gives the TCPs {fred_default} packets each against the paper's 4974: the departure the report showed before came from the thresholds, not from FRED's internals"
    ), s(
        "the TCP timer matters here: with RTO = SRTT + 4 RTTVAR alone (no clock granularity G), the 256 KB queue adds delay faster than RTTVAR follows, TCPs time out spuriously (~30 times each) and CSFQ's get 4075 packets (-29%); with ns-2's 100 ms tick as G (our default) they get the numbers above",
    )];
    Analysis {
        header: [
            "discipline",
            "packets per TCP, mean (std)",
            "paper",
            "vs paper",
            "UDP Mbps",
        ]
        .map(s)
        .to_vec(),
        rows,
        checks,
        notes,
        chart: per_flow_chart(
            results,
            "csfq-table3: 100 ms links, UDP (flow 0) at 10 Mbps vs 19 TCP",
            true,
            Some(0.5),
        ),
        extra_charts: Vec::new(),
        json: json!(json),
    }
}

pub(crate) fn table4(results: &[RunResult]) -> Analysis {
    let mut rows = Vec::new();
    let mut checks = Vec::new();
    for r in results {
        let got: Vec<f64> = r.report.flows.iter().map(|f| f.throughput_mbps).collect();
        let paper = TABLE4_PUBLISHED.get(r.x as usize);
        rows.push(vec![
            r.label.clone(),
            format!("{:.2}", got[0]),
            format!("{:.2}", got[1]),
            format!("{:.2}", got[2]),
            paper.map_or(s("(no relabeling: 2.5, 2.5, 5 expected)"), |p| {
                format!("{:.2}, {:.2}, {:.2}", p[0], p[1], p[2])
            }),
        ]);
        // Without relabeling, flows 1 and 2 reach link 2 at 5 Mbps still labeled 10, like
        // flow 3: all three lose the same fraction there, so they get 1 : 1 : 2 of it.
        let (source, expected): (&'static str, [f64; 3]) = match paper {
            Some(p) => ("CSFQ paper, Table 4", *p),
            None => (
                "analysis: equal drop probability on equal stale labels",
                [2.5, 2.5, 5.0],
            ),
        };
        for (i, (&ours, &e)) in got.iter().zip(&expected).enumerate() {
            let what = format!("{}: flow {} on link 2, Mbps", r.label, i + 1);
            checks.push(if paper.is_some() {
                // The claim is "close to 3.33 Mbps" / "close to its fair share"; the paper's
                // own flows, one 10 s run, lie in 3.13 .. 3.43, which it calls close: that
                // stated range is the band for each flow.
                Check::stated(
                    what,
                    "CSFQ paper, Section 3.6 and Table 4",
                    ours,
                    format!(
                        "{e}; the paper's flows 3.13 .. 3.43, \"close to\" the fair share 3.33"
                    ),
                    (3.13, 3.43),
                )
            } else {
                // An analysis of ours (the paper runs no such case): the stale labels'
                // shares, against our seeds' spread.
                Check::noise(what, source, ours, e, Read::Exact)
                    .analytic()
                    .analysis()
            });
        }
    }
    Analysis {
        header: ["variant", "flow 1 Mbps", "flow 2 Mbps", "flow 3 Mbps", "paper"].map(s).to_vec(),
        rows,
        checks,
        notes: Vec::new(),
        chart: Chart {
            title: s("csfq-table4: throughput on link 2 (flows 1, 2 relabeled at link 1)"),
            x_label: s("flow number"),
            y_label: s("throughput (Mbps)"),
            series: results
                .iter()
                .map(|r| Series { name: r.label.clone(), points: r.report.flows.iter().map(|f| (f.flow as f64 + 1.0, f.throughput_mbps)).collect(), markers: true, line: true })
                .collect(),
            reference: Some((10.0 / 3.0, s("fair share 3.33 Mbps"))),
            log_y: false,
            per_flow: true,
        },
        extra_charts: Vec::new(),
        json: json!(results.iter().map(|r| json!({"variant": r.label, "mbps": r.report.flows.iter().map(|f| f.throughput_mbps).collect::<Vec<_>>()})).collect::<Vec<_>>()),
    }
}
