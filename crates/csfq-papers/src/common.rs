//! Helpers shared by the analyses.

use csfq_sim::DisciplineKind;

use super::{Check, RunResult};
use crate::chart::{Chart, Series};
use crate::check::Read;

pub(crate) fn s(v: impl Into<String>) -> String {
    v.into()
}

pub(crate) fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

pub(crate) fn std_dev(xs: &[f64]) -> f64 {
    let m = mean(xs);
    (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len().max(1) as f64).sqrt()
}

/// Per-flow deviation from the max-min share, percent: (min, max).
pub(crate) fn deviation_range(r: &RunResult) -> (f64, f64) {
    r.report
        .flows
        .iter()
        .zip(&r.fair)
        .map(|(f, a)| (f.throughput_mbps * 1e6 / a - 1.0) * 100.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), d| {
            (lo.min(d), hi.max(d))
        })
}

pub(crate) fn per_flow_chart(
    results: &[RunResult],
    title: &str,
    log_y: bool,
    fair: Option<f64>,
) -> Chart {
    Chart {
        title: s(title),
        x_label: s("flow number"),
        y_label: s(if log_y {
            "throughput (Mbps, log scale)"
        } else {
            "throughput (Mbps)"
        }),
        series: results
            .iter()
            .map(|r| Series {
                name: if r.label.is_empty() {
                    r.discipline.to_string()
                } else {
                    format!("{} {}", r.discipline, r.label)
                },
                points: r
                    .report
                    .flows
                    .iter()
                    .map(|f| (f.flow as f64, f.throughput_mbps))
                    .collect(),
                markers: true,
                line: true,
            })
            .collect(),
        reference: fair.map(|f| (f, format!("fair share {f:.4} Mbps"))),
        log_y,
        per_flow: true,
    }
}

/// (discipline, [(x, value)]) in result order.
pub(crate) fn by_discipline(
    results: &[RunResult],
    value: impl Fn(&RunResult) -> f64,
) -> Vec<(DisciplineKind, Vec<(f64, f64)>)> {
    let mut by_d: Vec<(DisciplineKind, Vec<(f64, f64)>)> = Vec::new();
    for r in results {
        let v = value(r);
        match by_d.last_mut() {
            Some((d, pts)) if *d == r.discipline => pts.push((r.x, v)),
            _ => by_d.push((r.discipline, vec![(r.x, v)])),
        }
    }
    by_d
}

pub(crate) fn sweep_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    by_d: &[(DisciplineKind, Vec<(f64, f64)>)],
) -> Chart {
    Chart {
        title: s(title),
        x_label: s(x_label),
        y_label: s(y_label),
        series: by_d
            .iter()
            .map(|(d, pts)| Series {
                name: d.to_string(),
                points: pts.clone(),
                markers: true,
                line: true,
            })
            .collect(),
        reference: Some((1.0, s("fair share"))),
        log_y: false,
        per_flow: false,
    }
}

/// Jain's index of each flow's throughput over its offered rate: 1 when every flow gets the
/// same fraction of what it sends (throughput proportional to rate). Flows with no offered
/// rate (TCP) are left out.
pub(crate) fn proportionality(r: &RunResult) -> f64 {
    let x: Vec<f64> = r
        .report
        .flows
        .iter()
        .filter_map(|f| Some(f.throughput_mbps / f.offered_mbps?))
        .collect();
    csfq_algo::maxmin::jain_index(&x)
}

/// The CSFQ paper's precision on csfq-fig3a, "every flow within -11% .. +5% of its fair
/// share", as two verdicts on one run (its worst and its best flow), each a one-sided noise
/// band: the paper's figure is one run, so ours may fall short of its extremes by the
/// seed-to-seed spread of one run's extreme flow. csfq-fig3a applies it to CSFQ; tuf-fig9a,
/// whose claim is that TUF, CSFQ and DRR are comparable on the same run, applies the same
/// band to each.
pub(crate) fn fig3a_band_checks(who: &str, source: &'static str, r: &RunResult) -> [Check; 2] {
    let (lo, hi) = deviation_range(r);
    let published = "every flow within -11% .. +5%";
    [
        Check::noise(
            format!("{who}: worst flow vs its fair share, %"),
            source,
            lo,
            -11.0,
            Read::Printed(1.0),
        )
        .at_least()
        .with_published(published),
        Check::noise(
            format!("{who}: best flow vs its fair share, %"),
            source,
            hi,
            5.0,
            Read::Printed(1.0),
        )
        .at_most()
        .with_published(published)
        .note_if_departs(
            "the best flow is the largest of 32 flows' throughputs in one 10 s run, picked after the fact, so it sits above every flow's own mean; the paper's single run may have been a quiet one",
        ),
    ]
}
