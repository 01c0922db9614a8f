//! Section IV-D: short transfers beside long flows, their completion times (Fig. 9).

use csfq_sim::DisciplineKind::{self, Ared, Drr, Las, May};
use serde_json::json;

use super::*;
use crate::chart::{Chart, Series};
use crate::common::*;
use crate::{Analysis, Check, Read, RunResult, Side, Word};

/// may-fig9: flow completion times of the short transfers.
pub(crate) fn fig9(results: &[RunResult]) -> Analysis {
    let published = |d: DisciplineKind| match d {
        Ared => Some(8.14),
        Drr => Some(10.34),
        Las => Some(1.26),
        May => Some(1.72),
        _ => None,
    };
    let mut rows = Vec::new();
    let mut means = Vec::new();
    let mut json_rows = Vec::new();
    let mut series = Vec::new();
    for r in results {
        let b = r.report.fct_buckets();
        let all = b.last().expect("may-fig9 has transfers");
        let bucket = |lo: u32| {
            b.iter()
                .find(|x| x.min_pkts == lo && x.max_pkts != u32::MAX)
        };
        rows.push(vec![
            r.discipline.to_string(),
            format!("{:.2}", all.mean_s),
            published(r.discipline).map_or("-".into(), |p| format!("{p:.2}")),
            format!("{:.2}", all.median_s),
            format!("{:.2}", all.p99_s),
            all.unfinished.to_string(),
            bucket(1).map_or("-".into(), |x| format!("{:.2}", x.mean_s)),
            bucket(11).map_or("-".into(), |x| format!("{:.2}", x.mean_s)),
            bucket(101).map_or("-".into(), |x| format!("{:.2}", x.mean_s)),
        ]);
        means.push((r.discipline, all.mean_s, all.unfinished));
        json_rows.push(json!({"discipline": r.discipline.name(), "buckets": b}));
        series.push(Series {
            name: r.discipline.to_string(),
            points: r
                .report
                .flows
                .iter()
                .filter_map(|f| Some((f.size_pkts? as f64, f.fct_s?)))
                .collect(),
            markers: true,
            line: true,
        });
    }
    let mean_of = |d: DisciplineKind| means.iter().find(|m| m.0 == d).map_or(f64::NAN, |m| m.1);
    const FIG9: &str = "MAY paper, Section IV-D (Fig. 9)";
    // Whether MAY engaged: its own drops against the buffer's overflows.
    let may_note = run_of(results, May).map(|r| {
        let (own, overflow) = drop_split(r);
        format!(
            "at seed {}, MAY made {own} drops of its own against {overflow} buffer overflows ({:.0}% of the drops MAY's): with the 100-packet buffer the drop-tail queue under MAY does much of the dropping, so MAY is not the only scheme at work; the buffer under MAY is not stated, and with 300 or 1000 packets (sensitivity section) its mean FCT comes down towards the paper's",
            r.seed,
            100.0 * own as f64 / (own + overflow).max(1) as f64
        )
    });
    let mut checks: Vec<Check> = means
        .iter()
        .filter_map(|&(d, m, _)| {
            let c = Check::noise(
                format!("{}: mean FCT of the short transfers, s", paper_name(d)),
                FIG9,
                m,
                published(d)?,
                Read::Printed(0.01),
            )
            .with_published(format!("{} s", published(d)?));
            Some(match (&may_note, d) {
                (Some(n), May) => c.note_if_departs(n.clone()),
                (_, Drr) => c.note(
                    "our DRR is ns-2's with the paper's 100 buckets: each flow's host, numbered in flow order (the paper does not give its node numbering), hashed as ns-2's DRR::hash hashes a source address, so about half the transfers share a bucket, and its quantum, with a long flow. With a queue per flow (sensitivity section) the mean is 6.2-6.6 s, below the band at every seed: the collisions are what make the paper's DRR slower than its RED",
                ),
                _ => c,
            })
        })
        .collect();
    for (other, name) in [(Ared, "RED's"), (Drr, "DRR's")] {
        checks.push(Check::reading(
            format!("MAY's mean FCT over {name}"),
            FIG9,
            mean_of(May) / mean_of(other),
            format!(
                "far below: {:.2} (1.72 s against {})",
                1.72 / published(other).expect("published"),
                published(other).expect("published")
            ),
            Word::MuchWorse,
        ));
    }
    checks.push(Check::ordering(
        "LAS's mean FCT over MAY's",
        FIG9,
        mean_of(Las) / mean_of(May),
        "LAS at least as fast: 0.73 (1.26 s against 1.72 s)",
        Side::AtMost,
        1.0,
    ));
    Analysis {
        header: [
            "discipline",
            "mean FCT s",
            "paper",
            "median s",
            "p99 s",
            "unfinished",
            "1-10 pkts",
            "11-100",
            "101-1000",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        checks,
        notes: vec![
            "Transfers start at 20 s, one per second, after the long flows have filled the link; buffers are 100 packets. Our RTTs are propagation only: the paper's 100 ms for the short transfers and 20..200 ms for the long flows.".into(),
        ],
        chart: Chart {
            title: s("may-fig9: completion time of each short transfer against its size"),
            x_label: s("transfer size (packets)"),
            y_label: s("flow completion time (s)"),
            series,
            reference: None,
            log_y: true,
            per_flow: false,
        },
        extra_charts: Vec::new(),
        json: json!(json_rows),
    }
}
