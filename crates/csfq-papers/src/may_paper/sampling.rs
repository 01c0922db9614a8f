//! Section III-D: the table's memory per flow and the share of lossless short flows
//! (Figs. 2 and 3), from the paper's model and from the MAY queue itself.

use csfq_algo::may::SamplingModel;
use serde_json::json;

use crate::chart::{Chart, Series};
use crate::common::*;
use crate::scenarios::models::{may_sampling, MAY_MODEL_S0, MAY_MODEL_SHAPES};
use crate::{Analysis, Check, Read, Word};

/// Flows per (shape, S0) in may-fig2's simulation: enough for the lossless share to
/// within 0.001 (its binomial standard error is below 0.0004).
pub const FIG2_FLOWS: u32 = 100_000;

/// may-fig2/3: the table's memory per flow and the share of lossless short flows, from the
/// paper's model and from the MAY queue itself.
pub(crate) fn fig2() -> Analysis {
    let mut rows = Vec::new();
    let mut json_rows = Vec::new();
    let mut mem_series: Vec<Series> = Vec::new();
    let mut loss_series: Vec<Series> = Vec::new();
    // (S0, sim bits per flow, sim lossless share) over the shapes.
    let mut by_s0: Vec<(f64, Vec<f64>, Vec<f64>)> = Vec::new();
    for (si, &s0) in MAY_MODEL_S0.iter().enumerate() {
        let mut mem = Vec::new();
        let mut loss = Vec::new();
        let (mut bits_all, mut lossless_all) = (Vec::new(), Vec::new());
        for (ki, &k) in MAY_MODEL_SHAPES.iter().enumerate() {
            let model = SamplingModel {
                shape: k,
                mean_pkts: 10.0,
                s0,
                whole_packets: false,
            };
            let sim = may_sampling(1 + (si * 10 + ki) as u64, k, 10.0, s0, FIG2_FLOWS);
            let sim_bits = sim.hashed_share * 80.0;
            rows.push(vec![
                format!("{s0}"),
                format!("{k}"),
                format!("{:.3}", model.bits_per_flow()),
                format!("{sim_bits:.3}"),
                format!("{:.4}", model.lossless_short_share()),
                format!("{:.4}", sim.lossless_short_share),
            ]);
            json_rows.push(
                json!({"s0": s0, "shape": k, "model_bits_per_flow": model.bits_per_flow(),
                "sim_bits_per_flow": sim_bits, "model_lossless_short": model.lossless_short_share(),
                "sim_lossless_short": sim.lossless_short_share}),
            );
            mem.push((k, sim_bits));
            loss.push((k, sim.lossless_short_share));
            bits_all.push(sim_bits);
            lossless_all.push(sim.lossless_short_share);
        }
        mem_series.push(Series {
            name: format!("S0 = {s0}"),
            points: mem,
            markers: true,
            line: true,
        });
        loss_series.push(Series {
            name: format!("S0 = {s0}"),
            points: loss,
            markers: true,
            line: true,
        });
        by_s0.push((s0, bits_all, lossless_all));
    }
    const FIG2: &str = "MAY paper, Section III-D (Figs. 2 and 3)";
    let min = |v: &[f64]| v.iter().cloned().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let mut checks = Vec::new();
    for (s0, bits, lossless) in &by_s0 {
        if *s0 == 1000.0 {
            checks.push(Check::reading(
                "table memory per flow at S0 = 1000 over the published 1 bit (mean over shapes 1.1..2)",
                FIG2,
                mean(bits),
                "about 1 bit per flow",
                Word::About,
            ));
        }
        let bound = if *s0 >= 1000.0 { 0.99 } else { 0.98 };
        // The lowest share is of FIG2_FLOWS sampled flows: its binomial standard error.
        let low = min(lossless);
        checks.push(
            Check::noise(
                format!("lossless share of short flows at S0 = {s0}, lowest over shapes"),
                FIG2,
                low,
                bound,
                Read::Exact,
            )
            .analytic()
            .at_least()
            .our_se((low * (1.0 - low) / f64::from(FIG2_FLOWS)).sqrt())
            .with_published(format!(
                "> {bound} for S0 >= {}",
                if *s0 >= 1000.0 { 1000 } else { 500 }
            )),
        );
        // Fig. 2's 1.6 bits at S0 = 500, scaled by 500/S0 (memory falls as 1/S0 for flows
        // far below S0): ours over it, "at most about".
        checks.push(Check::reading(
            format!("table memory per flow at S0 = {s0}, bits, largest over shapes, over Fig. 2's 1.6 bits at S0 = 500 scaled by 500/S0"),
            FIG2,
            max(bits) / (1.6 * 500.0 / s0),
            "at most about 1.6 bits (Fig. 2's scale, S0 = 500)",
            Word::About,
        ));
    }
    Analysis {
        header: [
            "S0",
            "Pareto shape",
            "bits/flow (model)",
            "bits/flow (MAY queue)",
            "lossless short (model)",
            "lossless short (MAY queue)",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        checks,
        notes: vec![
            format!("The model is Section III-D's integral over continuous Pareto sizes (mean 10 packets); the MAY-queue columns send {FIG2_FLOWS} flows of whole packets (the Pareto draw rounded up) through the real `may` discipline and count the flows that entered its table. Shape 1 itself has no finite mean, so the shapes run from 1.1."),
        ],
        chart: Chart {
            title: s("may-fig2: MAY table memory per flow (10-byte entries)"),
            x_label: s("Pareto shape"),
            y_label: s("bits per flow"),
            series: mem_series,
            reference: Some((1.0, s("1 bit per flow"))),
            log_y: false,
            per_flow: false,
        },
        extra_charts: vec![(
            s("lossless"),
            Chart {
                title: s("may-fig3: share of short flows (< S0 packets) never sampled"),
                x_label: s("Pareto shape"),
                y_label: s("lossless share"),
                series: loss_series,
                reference: Some((0.99, s("0.99"))),
                log_y: false,
                per_flow: false,
            },
        )],
        json: json!(json_rows),
    }
}
