//! Analyses of the TUF report's experiments (Clerget and Dabbous, INRIA RR-3846, 1999).

use csfq_sim::DisciplineKind;
use serde_json::json;

use super::common::*;
use super::{Analysis, RunResult};
use crate::plot::{Chart, Series};

/// How TUF compares with CSFQ and DRR in the TUF report's experiments.
pub(crate) fn tuf_verdict(id: &str, results: &[RunResult]) -> String {
    let metric = |r: &RunResult| -> f64 {
        let f = &r.report.flows[0];
        match id {
            "tuf-fig9a" => {
                let (lo, hi) = deviation_range(r);
                hi - lo
            }
            "tuf-fig9b" => f.throughput_mbps,
            "tuf-fig10" => f.throughput_mbps / (10.0 / r.x),
            "tuf-fig12b" => f.delivered_pkts as f64 / f.sent_pkts.max(1) as f64,
            _ => f.throughput_mbps / 0.909,
        }
    };
    let summary = |d: DisciplineKind| -> (f64, f64, f64) {
        let v: Vec<f64> = results
            .iter()
            .filter(|r| r.discipline == d)
            .map(metric)
            .collect();
        (
            mean(&v),
            v.iter().cloned().fold(f64::INFINITY, f64::min),
            v.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        )
    };
    let (t, c, d) = (
        summary(DisciplineKind::Tuf),
        summary(DisciplineKind::Csfq),
        summary(DisciplineKind::Drr),
    );
    match id {
        "tuf-fig9a" => format!(
            "{}: spread of per-flow deviation from the fair share: TUF {:.1} points, CSFQ {:.1}, DRR {:.1} (report: comparable)",
            if t.0 <= 1.5 * c.0.max(d.0) { "matches" } else { "departs" },
            t.0,
            c.0,
            d.0
        ),
        "tuf-fig9b" => {
            let comparable = t.0 <= 1.25 * c.0.max(d.0);
            format!(
                "{}: UDP throughput TUF {:.3}, CSFQ {:.3}, DRR {:.3} Mbps against a 0.3125 Mbps share (report: comparable){}",
                if comparable { "matches" } else { "departs" },
                t.0,
                c.0,
                d.0,
                if comparable {
                    ""
                } else {
                    "; our TCPs are tagged at the source by Padhye's model, whose B(X) overstates what a TCP on a 1 ms path with a 64-segment window achieves, so their tags run high and the UDP's excess is not always the highest-tagged traffic"
                }
            )
        }
        "tuf-fig10" => format!(
            "{}: TCP keeps {:.2}..{:.2} of its share under TUF (report 0.70..1.00), {:.2}..{:.2} under CSFQ (report 0.55..0.90)",
            if t.1 >= 0.6 { "matches" } else { "departs" },
            t.1, t.2, c.1, c.2
        ),
        "tuf-fig12b" => format!(
            "{}: mean fraction of the UDP delivered TUF {:.3}, CSFQ {:.3}, DRR {:.3} (report: all near 1)",
            if t.1 >= 0.9 { "matches" } else { "departs" },
            t.0, c.0, d.0
        ),
        _ => format!(
            "{}: mean normalized TCP throughput TUF {:.2}, CSFQ {:.2}, DRR {:.2}",
            if t.0 >= c.0 { "matches (TUF >= CSFQ)" } else { "departs (TUF below CSFQ)" },
            t.0, c.0, d.0
        ),
    }
}

pub(crate) fn tuf_fig4() -> Analysis {
    let (loss, threshold) = csfq_sim::experiments::tuf_filter_model(1, 1000.0);
    // Groups of 64 tags, for a readable table and plot.
    let groups: Vec<(f64, f64, f64)> = loss
        .chunks(64)
        .enumerate()
        .map(|(i, c)| {
            let lo = (i * 64) as f64;
            let filter = if (i * 64) as u16 >= threshold {
                1.0
            } else {
                0.0
            };
            (lo, mean(c), filter)
        })
        .collect();
    let rows = groups
        .iter()
        .filter(|g| {
            (g.0 as usize / 64).is_multiple_of(4) || (g.0 - threshold as f64).abs() <= 128.0
        })
        .map(|(lo, q, f)| {
            vec![
                format!("{lo:.0}..{:.0}", lo + 63.0),
                format!("{q:.4}"),
                format!("{f:.0}"),
            ]
        })
        .collect();
    let below = mean(&loss[..threshold as usize - 128]);
    let above = mean(&loss[threshold as usize + 128..]);
    let overall = mean(&loss);
    let verdicts = vec![
        format!(
            "{}: loss {below:.4} for tags more than 128 below the filter's threshold {threshold}, {above:.4} for tags more than 128 above; overall {overall:.3} (the filter: 0.5)",
            if below < 0.02 && above > 0.98 { "matches" } else { "departs" }
        ),
    ];
    Analysis {
        header: ["tags", "TUF queue loss", "filter model loss"].map(s).to_vec(),
        rows,
        verdicts,
        chart: Chart {
            title: s("tuf-fig4: loss probability per tag, TUF queue vs bufferless filter (M/D/1/64, load 2)"),
            x_label: s("tag"),
            y_label: s("loss probability"),
            series: vec![
                Series { name: s("TUF queue"), points: groups.iter().map(|g| (g.0 + 32.0, g.1)).collect(), markers: true },
                Series { name: s("filter model"), points: groups.iter().map(|g| (g.0 + 32.0, g.2)).collect(), markers: false },
            ],
            reference: None,
            log_y: false,
        },
        extra_charts: Vec::new(),
        json: json!({"threshold": threshold, "loss_per_tag": loss}),
    }
}

pub(crate) fn onoff_periods(id: &str, results: &[RunResult]) -> Analysis {
    let by_d = by_discipline(results, |r| r.report.flows[0].throughput_mbps / 0.909);
    let periods = csfq_sim::experiments::ONOFF_PERIODS_MS;
    let mut header = vec![s("discipline")];
    header.extend(periods.iter().map(|p| format!("{p} ms")));
    let rows = by_d
        .iter()
        .map(|(d, pts)| {
            let mut row = vec![d.to_string()];
            row.extend(pts.iter().map(|p| format!("{:.2}", p.1)));
            row
        })
        .collect();
    let log_pts = |pts: &[(f64, f64)]| pts.iter().map(|&(x, y)| (x.log10(), y)).collect::<Vec<_>>();
    let csfq_dip = by_d
        .iter()
        .find(|x| x.0 == DisciplineKind::Csfq)
        .map(|(_, pts)| {
            let near = pts
                .iter()
                .filter(|p| (50.0..=200.0).contains(&p.0))
                .map(|p| p.1)
                .fold(f64::INFINITY, f64::min);
            let ends = pts
                .first()
                .map_or(0.0, |p| p.1)
                .max(pts.last().map_or(0.0, |p| p.1));
            (near, ends)
        })
        .unwrap_or((f64::NAN, f64::NAN));
    Analysis {
        header,
        rows,
        verdicts: vec![format!(
            "CSFQ at 50..200 ms periods: {:.2} at worst, against {:.2} at the shortest or longest period",
            csfq_dip.0, csfq_dip.1
        )],
        chart: Chart {
            title: format!("{id}: TCP throughput / fair share against the cross traffic's ON/OFF period"),
            x_label: s("mean ON = OFF period, log10(ms)"),
            y_label: s("TCP throughput / fair share"),
            series: by_d.iter().map(|(d, pts)| Series { name: d.to_string(), points: log_pts(pts), markers: true }).collect(),
            reference: Some((1.0, s("fair share"))),
            log_y: false,
        },
        extra_charts: Vec::new(),
        json: json!(by_d.iter().map(|(d, p)| json!({"discipline": d.name(), "normalized_tcp": p})).collect::<Vec<_>>()),
    }
}
