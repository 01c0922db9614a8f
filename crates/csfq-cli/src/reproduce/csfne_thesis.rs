//! Analyses of the CS-FNE thesis's tables (Kim 2005): average / max-min / std.

use csfq_sim::experiments::Sweep;

use csfq_sim::DisciplineKind;
use serde_json::json;

use super::common::*;
use super::{Analysis, RunResult};
use crate::plot::{Chart, Series};

/// CS-FNE thesis tables: average / max-min / std of a per-run (or per-flow) metric.
pub(crate) fn csfne_table(id: &str, sweep: Sweep, results: &[RunResult]) -> Analysis {
    let mut rows = Vec::new();
    let mut json = Vec::new();
    let mut verdict_bits = Vec::new();
    let mut series = Vec::new();
    let disciplines: Vec<DisciplineKind> = {
        let mut v: Vec<DisciplineKind> = results.iter().map(|r| r.discipline).collect();
        v.dedup();
        v
    };
    for d in disciplines {
        let rs: Vec<&RunResult> = results.iter().filter(|r| r.discipline == d).collect();
        let pts: Vec<(f64, f64)> = match sweep {
            // Per flow: the 32 flows' throughputs, Mbps.
            Sweep::None => rs[0]
                .report
                .flows
                .iter()
                .map(|f| (f.flow as f64, f.throughput_mbps))
                .collect(),
            Sweep::Fig4Flows => rs
                .iter()
                .map(|r| (r.x, r.report.flows[0].throughput_mbps / (10.0 / r.x)))
                .collect(),
            _ if id == "csfne-table5" => rs
                .iter()
                .map(|r| {
                    (
                        r.x,
                        r.report.flows[0].delivered_pkts as f64
                            / r.report.flows[0].sent_pkts.max(1) as f64,
                    )
                })
                .collect(),
            _ => rs
                .iter()
                .map(|r| (r.x, r.report.flows[0].throughput_mbps / 0.909))
                .collect(),
        };
        let v: Vec<f64> = pts.iter().map(|p| p.1).collect();
        let (avg, spread, sd) = (
            mean(&v),
            v.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
                - v.iter().cloned().fold(f64::INFINITY, f64::min),
            std_dev(&v),
        );
        let published = csfq_sim::experiments::csfne_published(id, d);
        rows.push(vec![
            d.to_string(),
            format!("{avg:.3} / {spread:.3} / {sd:.3}"),
            published.map_or(s("-"), |p| {
                format!("{:.3} / {:.3} / {:.3}", p[0], p[1], p[2])
            }),
        ]);
        if let Some(p) = published {
            verdict_bits.push(format!("{d} {avg:.3} ({:+.3})", avg - p[0]));
        }
        json.push(json!({"discipline": d.name(), "avg": avg, "max_min": spread, "std": sd, "published": published}));
        series.push(Series {
            name: d.to_string(),
            points: pts,
            markers: true,
        });
    }
    let x_label = match sweep {
        Sweep::None => "flow",
        Sweep::Fig4Flows => "total flows N",
        _ => "congested links K",
    };
    Analysis {
        header: [
            "discipline",
            "ours: average / max-min / std",
            "thesis: average / max-min / std",
        ]
        .map(s)
        .to_vec(),
        rows,
        verdicts: vec![format!(
            "averages against the thesis (difference): {}",
            verdict_bits.join(", ")
        )],
        chart: Chart {
            title: format!("{id}: CS-FNE against DRR, CSFQ, RED, FRED"),
            x_label: s(x_label),
            y_label: s(if sweep == Sweep::None {
                "throughput (Mbps)"
            } else {
                "normalized"
            }),
            series,
            reference: None,
            log_y: false,
        },
        extra_charts: Vec::new(),
        json: json!(json),
    }
}
