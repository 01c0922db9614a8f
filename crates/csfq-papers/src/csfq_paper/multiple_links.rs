//! Section 3.2, multiple congested links (Fig. 6), and weighted CSFQ (Section 2.3) on one
//! and two links.

use csfq_sim::DisciplineKind;
use serde_json::json;

use crate::chart::Series;
use crate::common::*;
use crate::csfne_thesis::fig6_published_mean;
use crate::{Analysis, Check, RunResult, Side, Word};

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
        checks.push(Check::ordering(
            "DRR's mean delivered fraction minus the best other's",
            SRC,
            mean_of(Drr) - others,
            "DRR best",
            Side::AtLeast,
            0.0,
        ));
        checks.push(Check::reading(
            "CSFQ: mean delivered fraction over K",
            SRC,
            mean_of(Csfq),
            "reasonably well",
            Word::ReasonablyWell,
        ));
        checks.push(Check::reading(
            "FRED-1: mean delivered fraction over K",
            SRC,
            mean_of(Fred1),
            "reasonably well",
            Word::ReasonablyWell,
        ));
        checks.push(Check::reading(
            "FRED-2: mean delivered fraction over K",
            SRC,
            mean_of(Fred2),
            "reasonably well",
            Word::ReasonablyWell,
        ));
    } else {
        const SRC: &str = "CSFQ paper, Fig. 6(b)";
        checks.push(Check::reading(
            "DRR: the TCP's mean normalized throughput over K",
            SRC,
            mean_of(Drr),
            "effective",
            Word::Effective,
        ));
        checks.push(Check::reading(
            "CSFQ: the TCP's mean normalized throughput over K",
            SRC,
            mean_of(Csfq),
            "effective",
            Word::Effective,
        ));
        let fred = mean_of(Fred1).max(mean_of(Fred2));
        checks.push(Check::reading(
            "the better FRED's mean over CSFQ's",
            SRC,
            fred / mean_of(Csfq),
            "FRED much worse",
            Word::MuchWorse,
        ));
        checks.push(Check::ordering(
            "the better of RED and FIFO minus the worse FRED, mean",
            SRC,
            mean_of(Red).max(mean_of(Fifo)) - mean_of(Fred1).min(mean_of(Fred2)),
            "RED and FIFO worst",
            Side::AtMost,
            0.0,
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
        checks: vec![Check::stated("the worst flow's deviation from its weighted max-min share, %", "CSFQ paper, Section 2.3 (weighted max-min), judged by its single-link precision on csfq-fig3a (every flow within -11% .. +5%)", worst * 100.0, "weighted max-min; the paper's precision on one link: every flow within -11% .. +5%", (-11.0, 5.0)).analysis()],
        notes: Vec::new(),
        chart,
        extra_charts: Vec::new(),
        json: json!(r.report.flows.iter().zip(&r.fair).map(|(f, a)| json!({"flow": f.flow, "weight": f.weight, "mbps": f.throughput_mbps, "maxmin_mbps": a / 1e6})).collect::<Vec<_>>()),
    }
}
