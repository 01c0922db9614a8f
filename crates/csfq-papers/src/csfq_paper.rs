//! Analyses of the CSFQ paper's experiments (Stoica, Shenker and Zhang, SIGCOMM 1998,
//! Section 3) and of weighted CSFQ.

use std::collections::BTreeMap;

use crate::csfne_thesis::fig6_published_mean;
use csfq_sim::DisciplineKind;
use serde_json::json;

use super::common::*;
use super::{Analysis, Check, Prefer, RunResult};
use crate::chart::{Chart, Series};

pub(crate) fn fig3a(results: &[RunResult]) -> Analysis {
    let mut rows = Vec::new();
    let mut json = Vec::new();
    for r in results {
        let (lo, hi) = deviation_range(r);
        let paper = match r.discipline {
            DisciplineKind::Fifo | DisciplineKind::Red | DisciplineKind::Fred1 => {
                "proportional to rate"
            }
            DisciplineKind::Drr => "fair",
            DisciplineKind::Fred2 => "less precise than DRR",
            DisciplineKind::Csfq => "-11% .. +5%",
            // The paper has no row for the others.
            _ => "-",
        };
        rows.push(vec![
            r.discipline.to_string(),
            format!("{lo:+.1}%"),
            format!("{hi:+.1}%"),
            format!("{:.4}", r.report.jain_index),
            s(paper),
        ]);
        json.push(json!({"discipline": r.discipline.name(), "min_dev_pct": lo, "max_dev_pct": hi, "jain": r.report.jain_index, "paper": paper}));
    }
    const SRC: &str = "CSFQ paper, Fig. 3(a)";
    let mut checks = Vec::new();
    let get = |d| results.iter().find(|r| r.discipline == d);
    if let Some(c) = get(DisciplineKind::Csfq) {
        checks.extend(fig3a_band_checks("CSFQ", SRC, c));
    }
    if let Some(d) = get(DisciplineKind::Drr) {
        checks.push(Check::at_least(
            "DRR: Jain's index of throughput / fair share",
            SRC,
            d.report.jain_index,
            "fair",
            0.995,
            "'fair' read as Jain's index >= 0.995, what CSFQ's published -11% .. +5% spread gives",
        ));
        if let Some(f) = get(DisciplineKind::Fred2) {
            checks.push(Check::at_least(
                "Jain's index, DRR minus FRED-2",
                SRC,
                d.report.jain_index - f.report.jain_index,
                "FRED-2 less precise than DRR",
                0.0,
                "none: an ordering",
            ));
        }
    }
    for d in [
        DisciplineKind::Fifo,
        DisciplineKind::Red,
        DisciplineKind::Fred1,
    ] {
        if let Some(r) = get(d) {
            checks.push(Check::at_least(
                format!("{d}: Jain's index of throughput / offered rate"),
                SRC,
                proportionality(r),
                "share proportional to rate",
                0.95,
                "'proportional' read as Jain's index of throughput/offered >= 0.95 (1 when every flow gets the same fraction of what it sends)",
            ));
        }
    }
    Analysis {
        header: [
            "discipline",
            "worst flow vs fair",
            "best flow vs fair",
            "Jain index",
            "paper",
        ]
        .map(s)
        .to_vec(),
        rows,
        checks,
        notes: Vec::new(),
        chart: per_flow_chart(
            results,
            "csfq-fig3a: 32 UDP flows, flow i at (i+1) x fair share",
            false,
            Some(0.3125),
        ),
        extra_charts: Vec::new(),
        json: json!(json),
    }
}

const FIG3B: &str = "CSFQ paper, Fig. 3(b)";

pub(crate) fn fig3b(results: &[RunResult]) -> Analysis {
    let mut rows = Vec::new();
    let mut json = Vec::new();
    let mut checks = Vec::new();
    for r in results {
        let udp = r.report.flows[0].throughput_mbps;
        let tcp: Vec<f64> = r.report.flows[1..]
            .iter()
            .map(|f| f.throughput_mbps)
            .collect();
        let paper = match fig3b_published_udp(r.discipline) {
            Some((v, true)) => format!("> {v}"),
            Some((v, false)) => format!("{v}"),
            None => s("-"),
        };
        let what = format!("{}: the UDP's throughput, Mbps", r.discipline);
        let fred = matches!(r.discipline, DisciplineKind::Fred1 | DisciplineKind::Fred2);
        match fig3b_published_udp(r.discipline).filter(|_| !fred) {
            Some((v, true)) => checks.push(Check::at_least(
                what,
                FIG3B,
                udp,
                paper.clone(),
                v,
                "none: the paper's own bound",
            )),
            Some((v, false)) => checks.push(Check::relative(what, FIG3B, udp, v, 0.10)),
            None => {}
        }
        rows.push(vec![
            r.discipline.to_string(),
            format!("{udp:.3}"),
            paper.clone(),
            format!("{:.3}", mean(&tcp)),
            format!("{:.3}", tcp.iter().cloned().fold(f64::INFINITY, f64::min)),
            format!("{:.4}", r.report.jain_index),
        ]);
        json.push(json!({"discipline": r.discipline.name(), "udp_mbps": udp, "paper_udp_mbps": paper, "mean_tcp_mbps": mean(&tcp), "jain": r.report.jain_index}));
    }
    // Section 3: "we are quoting the results from the version of FRED which performed
    // better"; the paper's 1.8 is one figure for FRED, so one verdict: the variant that
    // leaves the UDP less (the better protection of the TCPs) over the seeds.
    for r in results
        .iter()
        .filter(|r| matches!(r.discipline, DisciplineKind::Fred1 | DisciplineKind::Fred2))
    {
        if let Some((v, _)) = fig3b_published_udp(r.discipline) {
            checks.push(
                Check::relative(
                    format!("{}: the UDP's throughput, Mbps", r.discipline),
                    "CSFQ paper, Fig. 3(b) and Section 3 ('the version of FRED which performed better')",
                    r.report.flows[0].throughput_mbps,
                    v,
                    0.10,
                )
                .alternative(
                    "FRED, the better of FRED-1 and FRED-2 (the one leaving the UDP less): the UDP's throughput, Mbps",
                    Prefer::Lower,
                ),
            );
        }
    }
    for c in &mut checks {
        let note = if c.what.starts_with("red") {
            "traced to the TCPs more than to RED: with 31 TCPs of about two segments in flight, the UDP takes what the TCPs leave while they wait out retransmission timeouts, and the sensitivity section shows the UDP's share moving with the TCP timer (above 8 Mbps at G = 500 ms) more than with RED's max_p (0.02 to 0.2); the paper gives neither its RED parameters (ours: max_p 0.1, w_q 0.002, Floyd and Jacobson's and ns-2's defaults) nor its TCP timer"
        } else if c.what.starts_with("drr") || c.what.starts_with("csfq") {
            "the UDP gets about 20% more than published under both DRR and CSFQ, at every seed, which points at the TCPs rather than at either scheme: with a 0.31 Mbps share and a ~57 ms RTT a TCP has about two segments in flight, too few for fast retransmit, and ours time out 21-30 (CSFQ) and 14-15 (DRR) times each in 10 s (seeds 1-8); while a TCP waits out its timer the UDP takes the slack. The paper does not give its TCPs' timer settings"
        } else if c.what.starts_with("fred") {
            "our FRED-1 holds the UDP below the published 1.8 and FRED-2 above it: the paper's 1.8 lies between our two variants, and it gives neither FRED's parameters beyond the thresholds nor which of its variants performed better in this run"
        } else {
            continue;
        };
        c.departure_note = Some(note.to_string());
    }
    Analysis {
        header: [
            "discipline",
            "UDP Mbps",
            "paper UDP Mbps",
            "mean TCP Mbps",
            "min TCP Mbps",
            "Jain index",
        ]
        .map(s)
        .to_vec(),
        rows,
        checks,
        notes: Vec::new(),
        chart: per_flow_chart(
            results,
            "csfq-fig3b: UDP (flow 0) at 10 Mbps vs 31 TCP",
            true,
            Some(0.3125),
        ),
        extra_charts: Vec::new(),
        json: json!(json),
    }
}

pub(crate) fn fig4(results: &[RunResult]) -> Analysis {
    let shown = [2.0, 4.0, 8.0, 12.0, 16.0, 22.0, 27.0, 32.0];
    let by_d = by_discipline(results, |r| {
        r.report.flows[0].throughput_mbps / (10.0 / r.x)
    });
    let mut header = vec![s("discipline")];
    header.extend(shown.iter().map(|n| format!("N={n}")));
    header.push(s("min"));
    let rows = by_d
        .iter()
        .map(|(d, pts)| {
            let mut row = vec![d.to_string()];
            for n in shown {
                row.push(
                    pts.iter()
                        .find(|p| p.0 == n)
                        .map_or(s("-"), |p| format!("{:.2}", p.1)),
                );
            }
            row.push(format!(
                "{:.2}",
                pts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min)
            ));
            row
        })
        .collect();
    let get = |d: DisciplineKind| by_d.iter().find(|x| x.0 == d).map(|x| &x.1[..]);
    let at = |pts: &[(f64, f64)], n: f64| pts.iter().find(|p| p.0 == n).map_or(f64::NAN, |p| p.1);
    let min = |pts: &[(f64, f64)]| pts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let max = |pts: &[(f64, f64)]| pts.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    const SRC: &str = "CSFQ paper, Fig. 4";
    let mut checks = Vec::new();
    if let Some(drr) = get(DisciplineKind::Drr) {
        let upto22: Vec<(f64, f64)> = drr.iter().copied().filter(|p| p.0 <= 22.0).collect();
        checks.push(Check::at_least(
            "DRR: the TCP's lowest normalized throughput for N <= 22",
            SRC,
            min(&upto22),
            "good up to N ~ 22",
            0.9,
            "'good' read as at least 0.9 of the fair share",
        ));
        checks.push(Check::at_most(
            "DRR: the TCP's normalized throughput at N = 32",
            SRC,
            at(drr, 32.0),
            "falls after N ~ 22 (the TCP has < 3 buffers)",
            0.75,
            "'falls' read as at most 0.75 of the fair share",
        ));
        if let Some(csfq) = get(DisciplineKind::Csfq) {
            checks.push(Check::at_least(
                "CSFQ minus DRR at N = 32, normalized",
                SRC,
                at(csfq, 32.0) - at(drr, 32.0),
                "CSFQ beats DRR for large N",
                0.0,
                "none: an ordering",
            ));
        }
    }
    if let Some(csfq) = get(DisciplineKind::Csfq) {
        for d in [DisciplineKind::Fred1, DisciplineKind::Fred2] {
            if let Some(fred) = get(d) {
                let worst = csfq
                    .iter()
                    .zip(fred)
                    .map(|(c, f)| c.1 - f.1)
                    .fold(f64::INFINITY, f64::min);
                checks.push(Check::at_least(format!("CSFQ minus {d}, lowest over N, normalized"), SRC, worst, "CSFQ >= FRED over the whole range", -0.05, "0.05: one run's noise at small N, where both keep the TCP near 0.9").note_if_departs("at small N both FREDs keep the TCP a little higher than CSFQ does (N = 2: 0.89 against 0.85 in seed 1, 0.95 against 0.88..0.90 in seeds 2-4); the paper's claim holds from N = 16 on; not investigated further"));
            }
        }
        const TUF: &str = "TUF report, Fig. 10 (CSFQ curve)";
        let tol = "0.03 of the fair share: one run's noise (the same N varies by up to 0.05 between seeds)";
        checks.push(Check::at_least(
            "CSFQ: the TCP's lowest normalized throughput over N",
            TUF,
            min(csfq),
            "55-90% of the fair share",
            0.52,
            tol,
        ));
        checks.push(Check::at_most(
            "CSFQ: the TCP's highest normalized throughput over N",
            TUF,
            max(csfq),
            "55-90% of the fair share",
            0.93,
            tol,
        ));
    }
    Analysis {
        header,
        rows,
        checks,
        notes: Vec::new(),
        chart: sweep_chart(
            "csfq-fig4: one TCP against N-1 UDP flows at twice their share",
            "total flows N",
            "TCP throughput / fair share",
            &by_d,
        ),
        extra_charts: Vec::new(),
        json: json!(by_d
            .iter()
            .map(|(d, p)| json!({"discipline": d.name(), "normalized_tcp": p}))
            .collect::<Vec<_>>()),
    }
}

pub(crate) fn fig6(id: &str, results: &[RunResult]) -> Analysis {
    let udp = id == "csfq-fig6a";
    let by_d = by_discipline(results, |r| {
        let f = &r.report.flows[0];
        if udp {
            f.delivered_pkts as f64 / f.sent_pkts.max(1) as f64
        } else {
            f.throughput_mbps / 0.909
        }
    });
    let max_k = by_d.first().map_or(0, |(_, pts)| pts.len());
    let mut header = vec![s("discipline")];
    header.extend((1..=max_k).map(|k| format!("K={k}")));
    header.extend([s("mean"), s("CS-FNE thesis mean")]);
    let rows = by_d
        .iter()
        .map(|(d, pts)| {
            let mut row = vec![d.to_string()];
            row.extend(pts.iter().map(|p| format!("{:.2}", p.1)));
            let m = mean(&pts.iter().map(|p| p.1).collect::<Vec<_>>());
            row.push(format!("{m:.3}"));
            row.push(fig6_published_mean(id, *d).map_or(s("-"), |p| format!("{p:.3}")));
            row
        })
        .collect();
    let mean_of = |d: DisciplineKind| {
        by_d.iter().find(|x| x.0 == d).map_or(f64::NAN, |(_, pts)| {
            mean(&pts.iter().map(|p| p.1).collect::<Vec<_>>())
        })
    };
    use DisciplineKind::*;
    let mut checks = Vec::new();
    if udp {
        const SRC: &str = "CSFQ paper, Fig. 6(a)";
        let others = [Fifo, Red, Fred1, Fred2, Csfq]
            .map(mean_of)
            .into_iter()
            .fold(f64::NEG_INFINITY, f64::max);
        checks.push(Check::at_least(
            "DRR's mean delivered fraction minus the best other's",
            SRC,
            mean_of(Drr) - others,
            "DRR best",
            0.0,
            "none: an ordering",
        ));
        let tol = "'reasonably well' read as at least 0.75 of the UDP's traffic delivered, mean over K (a fraction: at most 1)";
        checks.push(Check::within(
            "CSFQ: mean delivered fraction over K",
            SRC,
            mean_of(Csfq),
            "reasonably well",
            (0.75, 1.0),
            tol,
        ));
        checks.push(Check::within(
            "FRED-1: mean delivered fraction over K",
            SRC,
            mean_of(Fred1),
            "reasonably well",
            (0.75, 1.0),
            tol,
        ));
        checks.push(Check::within(
            "FRED-2: mean delivered fraction over K",
            SRC,
            mean_of(Fred2),
            "reasonably well",
            (0.75, 1.0),
            tol,
        ));
    } else {
        const SRC: &str = "CSFQ paper, Fig. 6(b)";
        let tol = "'effective' read as at least half the fair share, mean over K";
        checks.push(Check::at_least(
            "DRR: the TCP's mean normalized throughput over K",
            SRC,
            mean_of(Drr),
            "effective",
            0.5,
            tol,
        ));
        checks.push(Check::at_least(
            "CSFQ: the TCP's mean normalized throughput over K",
            SRC,
            mean_of(Csfq),
            "effective",
            0.5,
            tol,
        ));
        let fred = mean_of(Fred1).max(mean_of(Fred2));
        checks.push(Check::at_most(
            "the better FRED's mean over CSFQ's",
            SRC,
            fred / mean_of(Csfq),
            "FRED much worse",
            0.5,
            "'much worse' read as at most half of CSFQ's",
        ));
        checks.push(Check::at_most(
            "the better of RED and FIFO minus the worse FRED, mean",
            SRC,
            mean_of(Red).max(mean_of(Fifo)) - mean_of(Fred1).min(mean_of(Fred2)),
            "RED and FIFO worst",
            0.0,
            "none: an ordering",
        ));
    }
    Analysis {
        header,
        rows,
        checks,
        notes: vec![s("the CS-FNE thesis's reproduction of this experiment (its mean per discipline, last column) is judged in csfne-table5 and csfne-table6")],
        chart: sweep_chart(
            if udp {
                "csfq-fig6a: fraction of the 0.909 Mbps UDP delivered across K congested links"
            } else {
                "csfq-fig6b: TCP throughput / 0.909 Mbps across K congested links"
            },
            "congested links K",
            if udp {
                "fraction delivered"
            } else {
                "TCP throughput / fair share"
            },
            &by_d,
        ),
        extra_charts: Vec::new(),
        json: json!(by_d
            .iter()
            .map(|(d, p)| json!({"discipline": d.name(), "values": p}))
            .collect::<Vec<_>>()),
    }
}

pub(crate) fn fig7(results: &[RunResult]) -> Analysis {
    let mut rows = Vec::new();
    let mut jains = BTreeMap::new();
    let mut extra = Vec::new();
    for r in results {
        // Steady state: the second half of the run.
        let half: Vec<f64> = r
            .report
            .flows
            .iter()
            .map(|f| {
                let tail = &f.series_mbps[f.series_mbps.len() / 2..];
                mean(tail)
            })
            .collect();
        let jain = csfq_algo::maxmin::jain_index(&half);
        jains.insert(r.discipline, jain);
        let mut row = vec![r.discipline.to_string()];
        row.extend(half.iter().map(|v| format!("{v:.2}")));
        row.push(format!("{jain:.3}"));
        rows.push(row);
        extra.push((
            r.discipline.name().to_string(),
            Chart {
                title: format!(
                    "csfq-fig7 under {}: receive rates (1 s averages)",
                    r.discipline
                ),
                x_label: s("time (s)"),
                y_label: s("rate (Mbps)"),
                series: r
                    .report
                    .flows
                    .iter()
                    .map(|f| Series {
                        name: format!("{} {}", f.kind, f.flow),
                        points: f
                            .series_mbps
                            .iter()
                            .enumerate()
                            .map(|(i, v)| ((i + 1) as f64 * r.report.sample_interval_s, *v))
                            .collect(),
                        markers: false,
                        line: true,
                    })
                    .collect(),
                reference: Some((1.0, s("fair share 1 Mbps"))),
                log_y: false,
                per_flow: false,
            },
        ));
    }
    let g = |d| jains.get(&d).copied().unwrap_or(f64::NAN);
    const SRC: &str = "CSFQ paper, Fig. 7";
    const FIG7_FRED: &str =
        "FRED, the better of FRED-1 and FRED-2 (the fairer): Jain's index, second half";
    let tol = "'fair' read as Jain's index >= 0.95 over the second half";
    let fred_note = "our FRED gives the RLM sessions close to their share, with the TCP 20% above its share; the paper shows FRED far from fair. Its FRED's parameters are not given; ours is Lin and Morris's with minq = 2 (FRED-2 also guarantees minq buffers). Not reproduced";
    let checks = vec![
        Check::at_least(
            "CSFQ: Jain's index, second half",
            SRC,
            g(DisciplineKind::Csfq),
            "fair",
            0.95,
            tol,
        ),
        Check::at_least(
            "DRR: Jain's index, second half",
            SRC,
            g(DisciplineKind::Drr),
            "fair",
            0.95,
            tol,
        ),
        // Section 3: where FRED is not split, "the version of FRED which performed
        // better": here the fairer one.
        Check::at_most(
            "FRED-1: Jain's index, second half",
            "CSFQ paper, Fig. 7 and Section 3 ('the version of FRED which performed better')",
            g(DisciplineKind::Fred1),
            "not fair",
            0.95,
            "'not fair' read as Jain's index < 0.95",
        )
        .note_if_departs(fred_note)
        .alternative(FIG7_FRED, Prefer::Higher),
        Check::at_most(
            "FRED-2: Jain's index, second half",
            "CSFQ paper, Fig. 7 and Section 3 ('the version of FRED which performed better')",
            g(DisciplineKind::Fred2),
            "not fair",
            0.95,
            "'not fair' read as Jain's index < 0.95",
        )
        .note_if_departs(fred_note)
        .alternative(FIG7_FRED, Prefer::Higher),
    ];
    let notes = vec![
        s("RLM is modeled after McCanne et al. 1996 with one receiver per session (join experiments, exponential join-timer backoff, loss over >= 20-packet samples); see crates/csfq-sim/src/rlm.rs"),
    ];
    let csfq_chart = extra
        .iter()
        .position(|(d, _)| d == "csfq")
        .map(|i| extra.remove(i).1)
        .unwrap_or_else(|| extra.remove(0).1);
    Analysis {
        header: [
            "discipline",
            "TCP Mbps",
            "RLM 1 Mbps",
            "RLM 2 Mbps",
            "RLM 3 Mbps",
            "Jain index",
        ]
        .map(s)
        .to_vec(),
        rows,
        checks,
        notes,
        chart: csfq_chart,
        extra_charts: extra,
        json: json!(jains
            .iter()
            .map(|(d, j)| (d.name(), *j))
            .collect::<BTreeMap<_, _>>()),
    }
}

pub(crate) fn table1(results: &[RunResult]) -> Analysis {
    let mut rows = Vec::new();
    let mut frac = BTreeMap::new();
    for r in results {
        let f = &r.report.flows[0];
        let dropped = f.dropped_pkts;
        let pct = 100.0 * dropped as f64 / f.sent_pkts.max(1) as f64;
        frac.insert(r.discipline, pct);
        let (paper, paper_pct) = match table1_published(r.discipline) {
            Some((del, drop)) => (
                format!("{del} / {drop}"),
                format!("{:.0}%", 100.0 * drop as f64 / (del + drop) as f64),
            ),
            None => (s("close to CSFQ"), s("-")),
        };
        rows.push(vec![
            r.discipline.to_string(),
            f.sent_pkts.to_string(),
            format!("{} / {}", f.delivered_pkts, dropped),
            format!("{pct:.0}%"),
            paper,
            paper_pct,
        ]);
    }
    let g = |d| frac.get(&d).copied().unwrap_or(f64::NAN);
    const SRC: &str = "CSFQ paper, Table 1";
    let tol = 8.0;
    let mut checks: Vec<Check> = [DisciplineKind::Drr, DisciplineKind::Csfq, DisciplineKind::Red, DisciplineKind::Fifo]
        .into_iter()
        .filter_map(|d| {
            let (del, drop) = table1_published(d)?;
            let paper = 100.0 * drop as f64 / (del + drop) as f64;
            let mut c = Check::near(format!("{d}: ON-OFF packets dropped, %"), SRC, g(d), paper, tol);
            c.tolerance = s("±8 points: twice the seed-to-seed standard deviation of CSFQ's fraction (seeds 1-8: 69%..80%)");
            Some(c)
        })
        .collect();
    // Section 3: one FRED, "the version which performed better": the one that holds the
    // ON-OFF source closer to its share, dropping more of it.
    for d in [DisciplineKind::Fred1, DisciplineKind::Fred2] {
        checks.push(
            Check::near(
                format!("{d} minus CSFQ, ON-OFF packets dropped, points"),
                "CSFQ paper, Table 1 and Section 3 ('the version of FRED which performed better')",
                g(d) - g(DisciplineKind::Csfq),
                0.0,
                tol,
            )
            .with_published("FRED close to CSFQ")
            .alternative(
                "FRED, the better of FRED-1 and FRED-2 (dropping more of the ON-OFF source) minus CSFQ, ON-OFF packets dropped, points",
                Prefer::Higher,
            ),
        );
    }
    let notes = vec![s("the source sends a random number of packets (ours: see table; the paper's run: 6758), so drop fractions are compared")];
    let series = results
        .iter()
        .map(|r| Series {
            name: r.discipline.to_string(),
            points: r.report.flows[0]
                .series_mbps
                .iter()
                .enumerate()
                .map(|(i, v)| ((i + 1) as f64 * r.report.sample_interval_s, *v))
                .collect(),
            markers: false,
            line: true,
        })
        .collect();
    Analysis {
        header: [
            "discipline",
            "ON-OFF sent",
            "delivered / dropped",
            "dropped",
            "paper delivered / dropped",
            "paper dropped",
        ]
        .map(s)
        .to_vec(),
        rows,
        checks,
        notes,
        chart: Chart {
            title: s("csfq-table1: ON-OFF source's delivered rate (1 s averages)"),
            x_label: s("time (s)"),
            y_label: s("delivered (Mbps)"),
            series,
            reference: Some((0.5, s("fair share 0.5 Mbps"))),
            log_y: false,
            per_flow: false,
        },
        extra_charts: Vec::new(),
        json: json!(frac
            .iter()
            .map(|(d, p)| (d.name(), *p))
            .collect::<BTreeMap<_, _>>()),
    }
}

pub(crate) fn table2(results: &[RunResult]) -> Analysis {
    let mut rows = Vec::new();
    let mut means = BTreeMap::new();
    let mut series = Vec::new();
    for r in results {
        let web: Vec<_> = r.report.flows.iter().filter(|f| f.kind == "web").collect();
        let fct: Vec<f64> = web
            .iter()
            .filter_map(|f| f.fct_s)
            .map(|t| t * 1e3)
            .collect();
        let (m, sd) = (mean(&fct), std_dev(&fct));
        means.insert(r.discipline, m);
        let paper = match r.discipline {
            DisciplineKind::Drr => "best",
            DisciplineKind::Fred1 | DisciplineKind::Fred2 => "better than CSFQ",
            DisciplineKind::Csfq => "~10x better than FIFO, RED",
            DisciplineKind::Fifo | DisciplineKind::Red => "worst",
            // The paper has no row for the others.
            _ => "-",
        };
        let timeouts: Vec<f64> = web.iter().map(|f| f.timeouts as f64).collect();
        let with_timeout = web.iter().filter(|f| f.timeouts > 0).count();
        let lost = web.iter().filter(|f| f.dropped_pkts > 0).count();
        let overflow: u64 = web
            .iter()
            .flat_map(|f| &f.drops)
            .filter(|(why, _)| *why == "overflow")
            .map(|(_, n)| n)
            .sum();
        let dropped: u64 = web.iter().map(|f| f.dropped_pkts).sum();
        rows.push(vec![
            r.discipline.to_string(),
            format!("{}/{}", fct.len(), web.len()),
            format!("{m:.0}"),
            format!("{sd:.0}"),
            format!("{lost}/{}", web.len()),
            format!("{overflow} / {}", dropped.saturating_sub(overflow)),
            format!("{:.2}", mean(&timeouts)),
            format!("{with_timeout}/{}", web.len()),
            s(paper),
        ]);
        let mut pts: Vec<(f64, f64)> = web
            .iter()
            .filter_map(|f| Some((f.size_pkts? as f64, f.fct_s?)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        // Each point a transfer: markers, never joined (sizes repeat, times vary).
        series.push(Series {
            name: r.discipline.to_string(),
            points: pts,
            markers: true,
            line: false,
        });
    }
    let g = |d| means.get(&d).copied().unwrap_or(f64::NAN);
    let timeouts_of = |d: DisciplineKind| {
        results
            .iter()
            .find(|r| r.discipline == d)
            .map_or((0, f64::NAN), |r| {
                let web: Vec<f64> = r
                    .report
                    .flows
                    .iter()
                    .filter(|f| f.kind == "web")
                    .map(|f| f.timeouts as f64)
                    .collect();
                (web.iter().filter(|&&t| t > 0.0).count(), mean(&web))
            })
    };
    let seed = results.first().map_or(0, |r| r.seed);
    // Of the transfers that lost a packet, how many waited out the timer, over every run.
    let (lost, lost_timed_out) = results
        .iter()
        .flat_map(|r| r.report.flows.iter().filter(|f| f.kind == "web"))
        .filter(|f| f.dropped_pkts > 0)
        .fold((0, 0), |(n, t), f| (n + 1, t + usize::from(f.timeouts > 0)));
    let cause = format!(
        "traced: at seed {seed}, {lost_timed_out} of the {lost} transfers that lost a packet (all schemes) took a retransmission timeout: too few segments follow a loss in a transfer this short to raise three duplicate ACKs (the loss columns: buffer overflow / the scheme's own drops). At the published mean gap of 0.05 ms the 60 first windows arrive within about 3 ms beside the UDP; the sensitivity section spreads the starts (5 and 50 ms gaps, 0.05 s being another reading of the text) to show how much of the losses that accounts for"
    );
    let ((fifo_to, fifo_mean_to), (csfq_to, csfq_mean_to)) = (
        timeouts_of(DisciplineKind::Fifo),
        timeouts_of(DisciplineKind::Csfq),
    );
    let (csfq, drr, fred, fifo, red) = (
        g(DisciplineKind::Csfq),
        g(DisciplineKind::Drr),
        g(DisciplineKind::Fred2),
        g(DisciplineKind::Fifo),
        g(DisciplineKind::Red),
    );
    const SRC: &str = "CSFQ paper, Table 2";
    let best_other = [fifo, red, fred, g(DisciplineKind::Fred1), csfq]
        .into_iter()
        .fold(f64::INFINITY, f64::min);
    let magnitude = "'almost one order of magnitude' read as at least 5 times";
    const TABLE2_FRED: &str =
        "FRED's mean transfer time over CSFQ's, the better of FRED-1 and FRED-2";
    let order_note = "transfer times of 60 heavy-tailed transfers vary a lot between seeds, and so does the order of FRED and CSFQ (see the seeds' range): the two are within noise of each other, not clearly ordered as published";
    // The two rows the text file keeps legible, judged as absolute means: the band is two
    // standard errors of the published mean, from the paper's own standard deviation over
    // its 60 transfers.
    let absolute = |what: &str, ours: f64, published: f64, sd: f64| {
        let tol = 2.0 * sd / 60f64.sqrt();
        Check::near(
            what,
            "CSFQ paper, Table 2 (the RED and FIFO rows)",
            ours,
            published,
            tol,
        )
        .with_published(format!("{published} ms (std {sd} over 60 transfers)"))
        .with_tolerance(format!(
            "two standard errors of the published mean, 2 x {sd} / sqrt(60) = {tol:.0} ms"
        ))
    };
    let checks = vec![
        Check::at_most("DRR's mean transfer time over the best other's", SRC, drr / best_other, "DRR best", 1.0, "none: an ordering"),
        Check::at_most("FRED-1's mean transfer time over CSFQ's", "CSFQ paper, Table 2 and Section 3 ('the version of FRED which performed better')", g(DisciplineKind::Fred1) / csfq, "FRED better than CSFQ", 1.0, "none: an ordering")
            .note_if_departs(order_note)
            .alternative(TABLE2_FRED, Prefer::Lower),
        Check::at_most("FRED-2's mean transfer time over CSFQ's", "CSFQ paper, Table 2 and Section 3 ('the version of FRED which performed better')", fred / csfq, "FRED better than CSFQ", 1.0, "none: an ordering")
            .note_if_departs(order_note)
            .alternative(TABLE2_FRED, Prefer::Lower),
        Check::at_least("FIFO's mean transfer time over CSFQ's", SRC, fifo / csfq, "almost one order of magnitude", 5.0, magnitude),
        Check::at_least("RED's mean transfer time over CSFQ's", SRC, red / csfq, "almost one order of magnitude", 5.0, magnitude).note_if_departs(format!(
            "read it with the verdict on RED's own mean below: where our RED's mean is the paper's 592 ms, the ratio falls short on CSFQ's side (our CSFQ's short transfers take longer than the paper's), not because our RED is faster. {cause}",
        )),
        absolute("RED: mean transfer time, ms", red, 592.0, 1274.0),
        absolute("FIFO: mean transfer time, ms", fifo, 840.0, 1695.0).note_if_departs(format!(
            "our FIFO's transfers wait on the retransmission timer: at seed {seed} {fifo_to} of 60 take at least one timeout, {fifo_mean_to:.2} on average (CSFQ: {csfq_to}, {csfq_mean_to:.2}; the table's last columns), and each repeated timeout doubles the next; under drop-tail the 10 Mbps UDP keeps the 64 KB buffer full, so a short transfer loses packets in bursts that fast retransmit cannot repair. The paper gives no TCP timer settings for this table, and its 840 ms (std 1695) implies far fewer timeouts per transfer. {cause}",
        )),
    ];
    let notes = vec![s("sizes are heavy-tailed (shape 1.06): 60 draws average far below the distribution's mean of 20 packets")];
    Analysis {
        header: [
            "discipline",
            "completed",
            "mean transfer time ms",
            "std ms",
            "transfers losing a packet",
            "drops: overflow / scheme",
            "timeouts per transfer",
            "transfers with a timeout",
            "paper",
        ]
        .map(s)
        .to_vec(),
        rows,
        checks,
        notes,
        chart: Chart {
            title: s("csfq-table2: transfer time against size, 60 short TCPs vs a 10 Mbps UDP"),
            x_label: s("transfer size (packets)"),
            y_label: s("transfer time (s)"),
            series,
            reference: None,
            log_y: true,
            per_flow: false,
        },
        extra_charts: Vec::new(),
        json: json!(means
            .iter()
            .map(|(d, m)| (d.name(), *m))
            .collect::<BTreeMap<_, _>>()),
    }
}

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
                Check::relative(
                    format!("{}: packets delivered per TCP, mean", r.discipline),
                    "CSFQ paper, Table 3 and Section 3 ('the version of FRED which performed better')",
                    m,
                    pm,
                    0.10,
                )
                .note_if_departs("FRED's result rests on its thresholds, which the paper does not give for this table: see the rows with its default 16/32 KB")
                .alternative(
                    "FRED, the better of FRED-1 and FRED-2 (the one whose TCPs get more): packets delivered per TCP, mean",
                    Prefer::Higher,
                ),
            );
        }
        if published.is_some() && judged && !fred {
            let c = Check::relative(
                format!("{}: packets delivered per TCP, mean", r.discipline),
                "CSFQ paper, Table 3",
                m,
                pm,
                0.10,
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
                // own flows, one 10 s run, lie within 6.1% of it (3.13 .. 3.43): that is
                // the band for each flow.
                Check::relative(what, "CSFQ paper, Section 3.6 and Table 4", ours, 10.0 / 3.0, 0.061)
                    .with_published(format!("{e} (\"close to\" the fair share 3.33)"))
                    .with_tolerance("±6.1% of the fair share: the paper's own flows' largest deviation from it (3.13 .. 3.43), which it calls close")
            } else {
                Check::relative(what, source, ours, e, 0.05)
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

pub(crate) fn weighted(id: &str, results: &[RunResult]) -> Analysis {
    let r = &results[0];
    let mut rows = Vec::new();
    let mut worst: f64 = 0.0;
    for (f, a) in r.report.flows.iter().zip(&r.fair) {
        let dev = f.throughput_mbps * 1e6 / a - 1.0;
        worst = worst.max(dev.abs());
        rows.push(vec![
            f.flow.to_string(),
            format!("{}", f.weight),
            format!("{}->{}", f.src, f.dst),
            format!("{:.3}", f.throughput_mbps),
            format!("{:.3}", a / 1e6),
            format!("{:+.1}%", dev * 100.0),
        ]);
    }
    let mut chart = per_flow_chart(
        results,
        &format!("{id}: throughput against weighted max-min"),
        false,
        None,
    );
    chart.series.push(Series {
        name: s("weighted max-min"),
        points: r
            .fair
            .iter()
            .enumerate()
            .map(|(i, a)| (i as f64, a / 1e6))
            .collect(),
        markers: false,
        line: true,
    });
    Analysis {
        header: ["flow", "weight", "route", "throughput Mbps", "weighted max-min Mbps", "vs max-min"].map(s).to_vec(),
        rows,
        checks: vec![Check::at_most("the worst flow's deviation from its weighted max-min share, %", "CSFQ paper, Section 2.3 (weighted max-min)", worst * 100.0, "weighted max-min", 5.0, "5%: CSFQ's single-link precision in csfq-fig3a")],
        notes: Vec::new(),
        chart,
        extra_charts: Vec::new(),
        json: json!(r.report.flows.iter().zip(&r.fair).map(|(f, a)| json!({"flow": f.flow, "weight": f.weight, "mbps": f.throughput_mbps, "maxmin_mbps": a / 1e6})).collect::<Vec<_>>()),
    }
}

// The CSFQ paper's published numbers (Stoica, Shenker, Zhang, SIGCOMM'98).

/// The UDP throughput (Mbit/s) the CSFQ paper reports for csfq-fig3b, per discipline;
/// `(value, is_lower_bound)`.
pub fn fig3b_published_udp(d: DisciplineKind) -> Option<(f64, bool)> {
    use DisciplineKind::*;
    match d {
        Fifo | Red => Some((8.0, true)),
        Fred1 | Fred2 => Some((1.8, false)),
        Drr => Some((0.396, false)),
        Csfq => Some((0.361, false)),
        // The paper reports no number for the others.
        _ => None,
    }
}

/// csfq-table1: the ON-OFF source's (delivered, dropped) packets as published.
pub fn table1_published(d: DisciplineKind) -> Option<(u64, u64)> {
    use DisciplineKind::*;
    match d {
        Drr => Some((601, 6157)),
        Csfq => Some((1680, 5078)),
        Red => Some((5322, 1436)),
        Fifo => Some((5452, 1306)),
        // The paper reports no number for the others.
        _ => None,
    }
}

/// csfq-table3: mean and standard deviation of packets delivered per TCP, as published.
pub fn table3_published(d: DisciplineKind) -> Option<(f64, f64)> {
    use DisciplineKind::*;
    match d {
        Drr => Some((6080.0, 64.0)),
        Csfq => Some((5761.0, 220.0)),
        Fred1 | Fred2 => Some((4974.0, 190.0)),
        Red => Some((628.0, 80.0)),
        Fifo => Some((378.0, 69.0)),
        // The paper reports no number for the others.
        _ => None,
    }
}

/// csfq-table4: link-2 throughputs (Mbit/s) of flows 1-3 as published, UDP then TCP.
pub const TABLE4_PUBLISHED: [[f64; 3]; 2] = [[3.36, 3.32, 3.28], [3.43, 3.13, 3.43]];

/// csfq-fig6a's analysis.
pub(crate) fn fig6a(results: &[RunResult]) -> Analysis {
    fig6("csfq-fig6a", results)
}

/// csfq-fig6b's analysis.
pub(crate) fn fig6b(results: &[RunResult]) -> Analysis {
    fig6("csfq-fig6b", results)
}

/// weighted-1link's analysis.
pub(crate) fn weighted_1link(results: &[RunResult]) -> Analysis {
    weighted("weighted-1link", results)
}

/// weighted-2links' analysis.
pub(crate) fn weighted_2links(results: &[RunResult]) -> Analysis {
    weighted("weighted-2links", results)
}
