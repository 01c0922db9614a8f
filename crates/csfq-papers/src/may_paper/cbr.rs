//! Section IV-C: a CBR flow against TCPs, its throughput over its sending rate (Fig. 8).

use csfq_algo::may::cbr_shutoff_s;
use csfq_sim::DisciplineKind::May;
use serde_json::json;

use crate::chart::{Chart, Series};
use crate::common::*;
use crate::scenarios::models::may_params;
use crate::{Analysis, Check, Read, RunResult, Word};

/// may-fig8: the CBR flow's throughput against its sending rate.
pub(crate) fn fig8(results: &[RunResult]) -> Analysis {
    const DISCARD_S: usize = 60;
    const FAIR_BPS: f64 = 2e6;
    // Mean CBR throughput after the first minute, Mbit/s.
    let cbr = |r: &RunResult| {
        let s = &r.report.flows[0].series_mbps;
        let tail = &s[DISCARD_S.min(s.len())..];
        mean(tail)
    };
    let by_d = by_discipline(results, cbr);
    let mut rows = Vec::new();
    for (d, pts) in &by_d {
        let mut row = vec![d.to_string()];
        row.extend(pts.iter().map(|(_, y)| format!("{y:.3}")));
        rows.push(row);
    }
    let mut header = vec![s("CBR throughput (Mbps) at rate")];
    if let Some((_, pts)) = by_d.first() {
        header.extend(pts.iter().map(|(x, _)| format!("{x}")));
    }
    // What the paper's own growth law (proof of Theorem 3.2) lets a CBR keep over the
    // measured window, with the paper's parameters and the first drop at t = 0 (the
    // earliest): the full rate until the shut-off, nothing after.
    let duration = results.first().map_or(0.0, |r| r.report.duration_s);
    let params = may_params(&crate::scenarios::shipped(
        "may-fig8",
        crate::scenarios::MAY_FIG8,
    ));
    let (from, to) = (DISCARD_S as f64, duration);
    let law_shutoff = |x: f64| params.and_then(|p| cbr_shutoff_s(&p, FAIR_BPS, x * 1e6));
    let law = |x: f64| -> f64 {
        match law_shutoff(x) {
            None => x,
            Some(_) if to <= from => x,
            Some(t) => x * (t.max(from).min(to) - from) / (to - from),
        }
    };
    let rates: Vec<f64> = by_d
        .first()
        .map(|(_, pts)| pts.iter().map(|(x, _)| *x).collect())
        .unwrap_or_default();
    let mut law_row = vec![s("growth law (Theorem 3.2's proof)")];
    law_row.extend(rates.iter().map(|&x| format!("{:.3}", law(x))));
    rows.push(law_row);
    let may: Vec<(f64, f64)> = by_d
        .iter()
        .find(|(d, _)| *d == May)
        .map(|(_, p)| p.clone())
        .unwrap_or_default();
    let below = may
        .iter()
        .filter(|(x, _)| *x <= 1.5)
        .map(|(x, y)| y / x)
        .fold(f64::INFINITY, f64::min);
    let above = may
        .iter()
        .filter(|(x, _)| *x >= 3.0)
        .map(|(_, y)| *y)
        .fold(f64::NEG_INFINITY, f64::max);
    let off_law = may
        .iter()
        .filter(|(x, _)| *x > FAIR_BPS / 1e6)
        .map(|(x, y)| (y - law(*x)).abs())
        .fold(f64::NAN, f64::max);
    // The rates at which even the law leaves the CBR more than the published "about 0".
    let law_keeps: Vec<String> = rates
        .iter()
        .filter(|&&x| x >= 3.0 && law(x) > 0.1)
        .map(|x| x.to_string())
        .collect();
    // MAY at the highest rate: how often v was 0 (nothing dropped) and the CBR shut off.
    let top = results
        .iter()
        .filter(|r| r.discipline == May)
        .max_by(|a, b| a.x.total_cmp(&b.x));
    let (v_zero, shut) = top.map_or((f64::NAN, f64::NAN), |r| {
        let tail = |v: &[f64]| v[DISCARD_S.min(v.len())..].to_vec();
        let inv_v = tail(r.report.links.first().map_or(&[][..], |l| &l.alpha_mbps));
        let cbr = tail(&r.report.flows[0].series_mbps);
        let frac = |v: &[f64], f: &dyn Fn(f64) -> bool| {
            v.iter().filter(|&&y| f(y)).count() as f64 / v.len().max(1) as f64
        };
        (frac(&inv_v, &|y| y == 0.0), frac(&cbr, &|y| y < 0.05 * r.x))
    });
    let top_rate = top.map_or(f64::NAN, |r| r.x);
    let times: Vec<String> = rates
        .iter()
        .filter_map(|&x| law_shutoff(x).map(|t| format!("{t:.0} s at {x}")))
        .collect();
    let law_note = format!(
        "the paper's own growth law (proof of Theorem 3.2: delta grows by (1 - q_w) + q_w x v* per interval from one sampled drop, delta = q_w, until delta v* >= 1), with its q_w = 0.05, Delta = 1 s and 1/v* the 2 Mbps share, needs {} Mbps to shut a CBR off, so over minutes 1-5, even from a first drop at t = 0, it leaves the CBR the table's growth-law row: {}",
        times.join(", "),
        if law_keeps.is_empty() {
            s("the law itself reaches about 0 at every rate judged")
        } else {
            format!(
                "at {} Mbps the published 'about 0' is more than the paper's own parameters can do within its 5 minutes",
                law_keeps.join(", ")
            )
        }
    );
    let v_note = format!(
        "the law assumes a steady v*; with the paper's gain kappa = 0.1, v += kappa (u - u0) moves v by 0.004 per 4% of utilization, the size of v* (1/250 packets) itself, so one interval at 94% takes v to 0, where MAY drops nothing. At {top_rate} Mbps, over minutes 1-5 of seed {seed}, v was 0 in {:.0}% of the intervals and the CBR shut off (under 5% of its rate) in {:.0}%{} (the second figure: 1/v and the CBR's rate over time)",
        100.0 * v_zero,
        100.0 * shut,
        if v_zero > 0.0 && shut > 0.0 && shut < 1.0 {
            ": it is shut off as Theorem 3.2 says, then released after v falls to 0, while its delta decays with no drops to feed it"
        } else {
            ""
        },
        seed = results.first().map_or(0, |r| r.seed),
    );
    const FIG8: &str = "MAY paper, Section IV-C (Fig. 8)";
    let checks = vec![
        Check::reading(
            "MAY: the CBR's delivered share at rates up to 1.5 Mbps (below the 2 Mbps fair share), lowest",
            FIG8,
            below,
            "lossless",
            Word::Lossless,
        ),
        Check::reading(
            "MAY: the CBR's throughput at rates of 3 Mbps and more over the 2 Mbps share, highest",
            FIG8,
            above / 2.0,
            "about 0",
            Word::ShutOff,
        )
        .note_if_departs(format!("{law_note}; and {v_note}")),
        // No published number: the law is our reading of the proof, so an analysis.
        Check::noise(
            "MAY: the CBR's throughput above the 2 Mbps share against the growth law's, largest gap, Mbps",
            "MAY paper, proof of Theorem 3.2 (Section III-B), with its parameters (q_w 0.05, Delta 1 s, 1/v* = 2 Mbps)",
            off_law,
            0.0,
            Read::Exact,
        )
        .analytic()
        .at_most()
        .analysis()
        .with_published("the law's throughput over minutes 1-5 (the table's growth-law row): a gap of 0")
        .note_if_departs(v_note),
    ];
    let chart = Chart {
        title: s("may-fig8: CBR throughput against its sending rate (fair share 2 Mbps)"),
        x_label: s("CBR sending rate (Mbps)"),
        y_label: s("CBR throughput after the first minute (Mbps)"),
        series: by_d
            .iter()
            .map(|(d, pts)| Series {
                name: d.to_string(),
                points: pts.clone(),
                markers: true,
                line: true,
            })
            .collect(),
        reference: Some((2.0, s("fair share 2 Mbps"))),
        log_y: false,
        per_flow: false,
    };
    let over_time = |name: &str, v: &[f64]| Series {
        name: s(name),
        points: v
            .iter()
            .enumerate()
            .map(|(i, y)| ((i + 1) as f64, *y))
            .collect(),
        markers: false,
        line: true,
    };
    let v_chart = top.map(|r| {
        (
            s("v"),
            Chart {
                title: format!(
                    "may-fig8: MAY's 1/v (0 while v = 0) and the {} Mbps CBR's throughput",
                    r.x
                ),
                x_label: s("time (s)"),
                y_label: s("Mbps"),
                series: vec![
                    over_time(
                        "1/v",
                        r.report.links.first().map_or(&[][..], |l| &l.alpha_mbps),
                    ),
                    over_time("CBR throughput", &r.report.flows[0].series_mbps),
                ],
                reference: Some((2.0, s("fair share 2 Mbps"))),
                log_y: false,
                per_flow: false,
            },
        )
    });
    Analysis {
        header,
        rows,
        checks,
        notes: vec![
            "The CBR is sent with exact spacing on a 120 ms RTT path; TCP RTTs are spread evenly over 20..220 ms; buffers are 100 packets.".into(),
        ],
        chart,
        extra_charts: v_chart.into_iter().collect(),
        json: json!(by_d
            .iter()
            .map(|(d, p)| json!({"discipline": d.name(), "points": p}))
            .collect::<Vec<_>>()),
    }
}
