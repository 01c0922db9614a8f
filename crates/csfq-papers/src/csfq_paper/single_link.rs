//! Section 3.1, a single congested link: Fig. 3(a) (32 UDP flows), Fig. 3(b) (one UDP
//! among 31 TCPs), Fig. 4 (one TCP among N - 1 UDPs).

use csfq_sim::DisciplineKind;
use serde_json::json;

use super::*;
use crate::check::{Read, Side, Word};
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
        checks.push(Check::reading(
            "DRR: Jain's index of throughput / fair share",
            SRC,
            d.report.jain_index,
            "fair",
            Word::Fair,
        ));
        if let Some(f) = get(DisciplineKind::Fred2) {
            checks.push(Check::ordering(
                "Jain's index, DRR minus FRED-2",
                SRC,
                d.report.jain_index - f.report.jain_index,
                "FRED-2 less precise than DRR",
                Side::AtLeast,
                0.0,
            ));
        }
    }
    for d in [
        DisciplineKind::Fifo,
        DisciplineKind::Red,
        DisciplineKind::Fred1,
    ] {
        if let Some(r) = get(d) {
            checks.push(Check::reading(
                format!("{d}: Jain's index of throughput / offered rate"),
                SRC,
                proportionality(r),
                "share proportional to rate",
                Word::Proportional,
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
            Some((v, true)) => checks.push(Check::stated(
                what,
                FIG3B,
                udp,
                paper.clone(),
                (v, f64::INFINITY),
            )),
            Some((v, false)) => {
                checks.push(Check::noise(what, FIG3B, udp, v, Read::printed(&paper)))
            }
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
                Check::noise(
                    format!("{}: the UDP's throughput, Mbps", r.discipline),
                    "CSFQ paper, Fig. 3(b) and Section 3 ('the version of FRED which performed better')",
                    r.report.flows[0].throughput_mbps,
                    v,
                    Read::printed(&v.to_string()),
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
            "the UDP gets about 20% more than published, at every seed. Traced packet by packet (seed 1, after the first second), with no departure of ours from the paper's algorithm found (Eq. (3) labels with the estimate updated by the packet itself, as its Fig. 2; the drop on the incoming label; alpha = alpha C / F per K_c; the overflow amendment; checked line by line): the UDP gets about alpha (0.42 Mbps on the mean), so its share is C less what the TCPs get accepted. A TCP's window arrives at the edge back to back, and Eq. (3) adds about l/K = 80 kbit/s (a quarter of the share) for each packet of it, so a window of 4-5 segments climbs from about 0.41 to 0.83 Mbps of label against alpha 0.42: the TCPs' labels average 0.47 Mbps where they send 0.37, a CSFQ drop falls on the 1st to 5th packet of a burst with probability 9%, 14%, 26%, 41%, 47%, 45% of the drops are a burst's last packet (no duplicate ACKs follow) and 79% of the timeouts follow two or more drops in one window. The queue is short (median 26 KB, RTT about 27 ms), so one more segment of window is the whole share and each TCP overshoots alpha whenever it grows. Probes over seeds 1-8: the edge's K at 200 ms gives the UDP 0.372 (500 ms: 0.335) with the timeouts unchanged (26.5, 25.3 per TCP), but the paper states K = 100 ms here; K_alpha or K_c at 50-200 ms, no access links, or the label taken before the update (0.529) do not bring it toward 0.361. How bunched ns-2's windows reached the edge (Eq. (3) sums arrivals at one instant) was tested by labeling each packet at the instant its host sent it: no move beyond the seeds' spread. The timeouts are not the excess: with the link's delay at 10 and 25 ms they fall to about a half and a tenth while the UDP gets more (the last section, 'CSFQ's TCPs: drops and timeouts, traced'). Under ns-2's DRR (head drop) the same TCPs time out about 9.4 times each and the UDP gets 0.383, against the paper's 0.396"
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
        checks.push(Check::reading(
            "DRR: the TCP's lowest normalized throughput for N <= 22",
            SRC,
            min(&upto22),
            "good up to N ~ 22",
            Word::Good,
        ));
        checks.push(Check::reading(
            "DRR: the TCP's normalized throughput at N = 32",
            SRC,
            at(drr, 32.0),
            "falls after N ~ 22 (the TCP has < 3 buffers)",
            Word::Falls,
        ));
        if let Some(csfq) = get(DisciplineKind::Csfq) {
            checks.push(Check::ordering(
                "CSFQ minus DRR at N = 32, normalized",
                SRC,
                at(csfq, 32.0) - at(drr, 32.0),
                "CSFQ beats DRR for large N",
                Side::AtLeast,
                0.0,
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
                checks.push(Check::ordering(format!("CSFQ minus {d}, lowest over N, normalized"), SRC, worst, "CSFQ >= FRED over the whole range", Side::AtLeast, 0.0).note_if_departs("at small N both FREDs keep the TCP a little higher than CSFQ does (N = 2: 0.89 against 0.85 in seed 1, 0.95 against 0.88..0.90 in seeds 2-4); the paper's claim holds from N = 16 on; not investigated further"));
            }
        }
        // "Between 55% and 90%": the curve's two ends, each judged from both sides (a
        // CSFQ at 0.8 for every N does not pass).
        checks.extend(range_ends(
            "CSFQ",
            "TUF report, Fig. 10 (CSFQ curve)",
            min(csfq),
            max(csfq),
            (0.55, 0.90),
            "55-90% of the fair share",
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

/// A published range a curve spans ("between 55% and 90%"), as two noise verdicts: the
/// curve's lowest point near the range's lower end and its highest near the upper, each
/// from both sides, read to the whole percent the text prints.
pub(crate) fn range_ends(
    who: &str,
    source: &'static str,
    lowest: f64,
    highest: f64,
    (lo, hi): (f64, f64),
    published: &str,
) -> [Check; 2] {
    [
        Check::noise(
            format!("{who}: the TCP's lowest normalized throughput over N"),
            source,
            lowest,
            lo,
            Read::Printed(0.01),
        )
        .with_published(published),
        Check::noise(
            format!("{who}: the TCP's highest normalized throughput over N"),
            source,
            highest,
            hi,
            Read::Printed(0.01),
        )
        .with_published(published),
    ]
}
