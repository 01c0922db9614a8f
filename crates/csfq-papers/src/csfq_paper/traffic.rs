//! Sections 3.3 and 3.4: coexistence with RLM (Fig. 7), an ON-OFF source (Table 1),
//! web-like short transfers (Table 2).

use std::collections::BTreeMap;

use csfq_sim::DisciplineKind;
use serde_json::json;

use super::*;
use crate::chart::{Chart, Series};
use crate::common::*;
use crate::{Analysis, Check, Prefer, Read, RunResult, Side, Word};

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
    let fred_note = "our FRED gives the RLM sessions close to their share, with the TCP 20% above its share; the paper shows FRED far from fair. Its FRED's parameters are not given; ours is Lin and Morris's with minq = 2 (FRED-2 also guarantees minq buffers). Not reproduced";
    let checks = vec![
        Check::reading(
            "CSFQ: Jain's index, second half",
            SRC,
            g(DisciplineKind::Csfq),
            "fair",
            Word::Fair,
        ),
        Check::reading(
            "DRR: Jain's index, second half",
            SRC,
            g(DisciplineKind::Drr),
            "fair",
            Word::Fair,
        ),
        // Section 3: where FRED is not split, "the version of FRED which performed
        // better": here the fairer one.
        Check::reading(
            "FRED-1: Jain's index, second half",
            "CSFQ paper, Fig. 7 and Section 3 ('the version of FRED which performed better')",
            g(DisciplineKind::Fred1),
            "not fair",
            Word::NotFair,
        )
        .note_if_departs(fred_note)
        .alternative(FIG7_FRED, Prefer::Higher),
        Check::reading(
            "FRED-2: Jain's index, second half",
            "CSFQ paper, Fig. 7 and Section 3 ('the version of FRED which performed better')",
            g(DisciplineKind::Fred2),
            "not fair",
            Word::NotFair,
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
    let mut checks: Vec<Check> = [
        DisciplineKind::Drr,
        DisciplineKind::Csfq,
        DisciplineKind::Red,
        DisciplineKind::Fifo,
    ]
    .into_iter()
    .filter_map(|d| {
        let (del, drop) = table1_published(d)?;
        let paper = 100.0 * drop as f64 / (del + drop) as f64;
        // The paper's counts are exact; its run is one run of a random source.
        Some(Check::noise(
            format!("{d}: ON-OFF packets dropped, %"),
            SRC,
            g(d),
            paper,
            Read::Exact,
        ))
    })
    .collect();
    // Section 3: one FRED, "the version which performed better": the one that holds the
    // ON-OFF source closer to its share, dropping more of it.
    for d in [DisciplineKind::Fred1, DisciplineKind::Fred2] {
        checks.push(
            Check::noise(
                format!("{d} minus CSFQ, ON-OFF packets dropped, points"),
                "CSFQ paper, Table 1 and Section 3 ('the version of FRED which performed better')",
                g(d) - g(DisciplineKind::Csfq),
                0.0,
                Read::Exact,
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
    const TABLE2_FRED: &str =
        "FRED's mean transfer time over CSFQ's, the better of FRED-1 and FRED-2";
    let order_note = "traced to the printed 0.05 ms mean gap: all 60 transfers start within about 3 ms, beside the UDP, and the burst overflows the 64 KB buffer under every fair scheme, so about half the transfers wait out a retransmission timeout (over 40 seeds: 30.7 under CSFQ, 32.3 under FRED-2; 24 at seed 1 even under DRR). A timed-out transfer takes about 320 ms against about 90 ms, and those transfers make up 71-87% of each mean, which then differ by the few transfers (2-12 per seed) that time out under one scheme only: FRED minus CSFQ is +3.0 ms (standard error 2.2) over seeds 1-8 and -0.3 ms (2.0) over seeds 1-40, a tie. The paper's stated cause, CSFQ's longer queue, is nearly absent at this gap (queueing 23.2 against 21.3 ms; 90.6 against 91.1 ms for transfers that time out under neither). With the starts spread (the sensitivity section's 5 and 50 ms gaps) CSFQ's queueing is 2-3 times FRED's (31.5 against 14.5 ms, 26.0 against 7.8 ms) and FRED is better at 40 of 40 seeds (ratios 0.44 and 0.50), as published; FRED's min_q (1 to 4 packets) and the timer's granularity (10 ms) leave the tie in place";
    // The two rows the text file keeps legible, judged as absolute means: the band holds
    // the published mean's own standard error (its standard deviation over its 60
    // transfers over sqrt(60)) beside our seeds' spread.
    let absolute = |what: &str, ours: f64, published: f64, sd: f64| {
        Check::noise(
            what,
            "CSFQ paper, Table 2 (the RED and FIFO rows)",
            ours,
            published,
            Read::Printed(1.0),
        )
        .published_se(sd / 60f64.sqrt())
        .with_published(format!("{published} ms (std {sd} over 60 transfers)"))
    };
    let checks = vec![
        Check::ordering("DRR's mean transfer time over the best other's", SRC, drr / best_other, "DRR best", Side::AtMost, 1.0),
        Check::ordering("FRED-1's mean transfer time over CSFQ's", "CSFQ paper, Table 2 and Section 3 ('the version of FRED which performed better')", g(DisciplineKind::Fred1) / csfq, "FRED better than CSFQ", Side::AtMost, 1.0)
            .note_if_departs(order_note)
            .alternative(TABLE2_FRED, Prefer::Lower),
        Check::ordering("FRED-2's mean transfer time over CSFQ's", "CSFQ paper, Table 2 and Section 3 ('the version of FRED which performed better')", fred / csfq, "FRED better than CSFQ", Side::AtMost, 1.0)
            .note_if_departs(order_note)
            .alternative(TABLE2_FRED, Prefer::Lower),
        Check::reading("FIFO's mean transfer time over CSFQ's", SRC, fifo / csfq, "almost one order of magnitude", Word::OrderOfMagnitude),
        Check::reading("RED's mean transfer time over CSFQ's", SRC, red / csfq, "almost one order of magnitude", Word::OrderOfMagnitude).note_if_departs(format!(
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
