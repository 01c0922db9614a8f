//! Section 3.1, a single congested link: Fig. 3(a) (32 UDP flows), Fig. 3(b) (one UDP
//! among 31 TCPs), Fig. 4 (one TCP among N - 1 UDPs).

use csfq_sim::DisciplineKind;
use serde_json::json;

use super::*;
use crate::common::*;
use crate::{Analysis, Check, Prefer, RunResult};

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
        } else if c.what.starts_with("drr") {
            "with ns-2's DRR (the longest queue's head dropped, queue/drr.cc) the UDP got 0.383 Mbps on the mean of seeds 1-8 and each TCP timed out about 9.4 times in 10 s; with its tail pushed out (`[drr] drop_from = \"tail\"`, this project's DRR before) 0.454 and 14-15 times"
        } else if c.what.starts_with("csfq") {
            "the UDP gets about 20% more than published, at every seed. With a 0.31 Mbps share and a ~57 ms RTT a TCP has about two segments in flight, too few for fast retransmit, and while a TCP waits out its timer the UDP takes the slack: ours time out 21-30 times each in 10 s (seeds 1-8). This is not the TCPs alone: under ns-2's DRR (head drop), which matches the paper here (0.383), the same TCPs time out about 9.4 times each; CSFQ's drops cost them more timeouts, a cause not yet found (the paper does not give its TCPs' timer settings)"
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
