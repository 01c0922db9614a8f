//! Analyses of the overlay paper's experiments (`papers/overlay-edge-to-edge-harrison-
//! kalyanaraman.txt`, Section 7). Interior routers are FIFO in every run; what varies is
//! whether flows ride edge-to-edge loops. Where the text states a number (the CoVs) it is
//! judged against our seeds' spread; its qualitative words go through the one table of
//! readings.

use crate::scenarios::overlay::{leased_queue_bound, DUMBBELL_FLOWS, LINEAR_C_MBPS, LINEAR_K};
use csfq_algo::alpha_fair::{linear_network_min_delay, linear_network_proportional};
use csfq_sim::observe::report::FlowReport;
use serde_json::json;

use super::common::*;
use super::{Analysis, Check, Read, RunResult, Side, Word};
use crate::chart::{Chart, Series};

/// A flow's mean throughput over the samples from `from_s` on, Mbit/s.
fn mean_from(f: &FlowReport, interval_s: f64, from_s: f64) -> f64 {
    let skip = (from_s / interval_s).round() as usize;
    let late = f.series_mbps.get(skip..).unwrap_or(&[]);
    mean(late)
}

/// Packets dropped at router-to-router links (inside the network).
fn network_drops(r: &RunResult) -> u64 {
    r.report.links.iter().map(|l| l.dropped_pkts).sum()
}

/// overlay-fig6: the long flow against the proportional-fair and min-potential-delay
/// allocations, utilization, queues and loss.
pub(crate) fn fig6(results: &[RunResult]) -> Analysis {
    let source = "overlay paper, Section 7.1 (Fig. 6)";
    let mut rows = Vec::new();
    let mut json_rows = Vec::new();
    let (mut ours, mut pf_pts, mut md_pts) = (Vec::new(), Vec::new(), Vec::new());
    let mut positions = Vec::new();
    let mut min_util = f64::INFINITY;
    let mut peak = 0u64;
    let mut lost = 0u64;
    for r in results {
        let m = r.x as u32;
        let dt = r.report.sample_interval_s;
        let half = r.report.duration_s / 2.0;
        let late: Vec<f64> = r
            .report
            .flows
            .iter()
            .map(|f| mean_from(f, dt, half))
            .collect();
        let long = late[0];
        let pf = linear_network_proportional(LINEAR_C_MBPS, m, LINEAR_K);
        let md = linear_network_min_delay(LINEAR_C_MBPS, m, LINEAR_K);
        // Link i carries the long flow and cross flows 1 + i K ..= (i + 1) K.
        let util = (0..m as usize)
            .map(|i| {
                let cross: f64 = late[1 + i * LINEAR_K as usize..1 + (i + 1) * LINEAR_K as usize]
                    .iter()
                    .sum();
                (long + cross) / LINEAR_C_MBPS
            })
            .fold(f64::INFINITY, f64::min);
        let q = r
            .report
            .links
            .iter()
            .map(|l| l.peak_queue_pkts)
            .max()
            .unwrap_or(0);
        let drops = network_drops(r);
        let position = if m > 1 {
            (long - pf) / (md - pf)
        } else {
            f64::NAN
        };
        if m > 1 {
            positions.push(position);
        }
        min_util = min_util.min(util);
        peak = peak.max(q);
        lost += drops;
        ours.push((m as f64, long));
        pf_pts.push((m as f64, pf));
        md_pts.push((m as f64, md));
        rows.push(vec![
            m.to_string(),
            format!("{long:.2}"),
            format!("{pf:.2}"),
            format!("{md:.2}"),
            if m > 1 {
                format!("{position:.2}")
            } else {
                "-".into()
            },
            format!("{:.1}%", util * 100.0),
            q.to_string(),
            drops.to_string(),
        ]);
        json_rows.push(json!({"m": m, "long_mbps": long, "proportional_fair_mbps": pf,
            "min_potential_delay_mbps": md, "position": if m > 1 { json!(position) } else { json!(null) },
            "min_link_utilization": util, "peak_queue_pkts": q, "network_drops": drops}));
    }
    let worst_position = positions.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let best_position = positions.iter().cloned().fold(f64::INFINITY, f64::min);
    let checks = vec![
        Check::ordering(
            "long flow, M = 2..6: the largest (throughput - PF) / (MPD - PF), less the midpoint 0.5",
            source,
            worst_position - 0.5,
            "between PF (0) and MPD (1), closer to PF",
            Side::AtMost,
            0.0,
        )
        .note_if_departs("from M = 4 on the long loop gets more than halfway from the proportional-fair to the min-potential-delay share (0.54-0.63), though always between the two; every loop runs the same alpha per tau with tau the long loop's delay, as the paper sets it. The links' propagation delay is ours (5 ms; the paper gives none) and sets tau, and with it how many increases each loop makes per round trip of the long loop: the sensitivity section runs 1 and 10 ms links and shows how far the position moves with it"),
        Check::stated(
            "long flow, M = 2..6: the smallest (throughput - PF) / (MPD - PF)",
            source,
            best_position,
            "between PF (0) and MPD (1)",
            (0.0, f64::INFINITY),
        )
        .note_if_departs("the long loop falls below the proportional-fair share"),
        Check::reading(
            "least loaded bottleneck's utilization by goodput, last 10 s",
            source,
            min_util,
            "very close to 100%",
            Word::NearFull,
        ),
        Check::stated(
            "largest queue at any bottleneck, packets",
            source,
            peak as f64,
            "< 40 packets",
            (f64::NEG_INFINITY, 40.0),
        )
        .note_if_departs("traced to the loops' feedback lag, in steady state: at M = 1 the peak (73 packets at t = 0.10 s) recurs in the last 10 s (71), at M = 2 likewise (48 at 0.30 s, 48 in the last 10 s). The paper sets T = tau = the largest one-way propagation delay, so the one-hop loops' round trip is 2 tau at M = 1 and tau at M = 2, while its bound N_b alpha tau = 5 packets (Eq. 12) assumes tau > tau_f + tau_b. At M = 1 the loops cut their rates a mean 4.4 tau (21.9 ms over 114 cycles) after the queue starts: the accumulation must pass H_thresh = 2 packets in each loop, then the interval must end, the control packet cross the queue and the feedback return; meanwhile each of the five loops adds alpha = 1 packet per tau every tau, so their rates sum to 128 Mbps at the cut. The lag scales with tau: 5, 10 and 20 ms links give 71, 69 and 69 packets (1 and 2 ms: 116 and 88, queueing delay adding to the lag); tau set to the round trip (10 ms) gives 47, to twice it 30. The source rate (25 to 100 Mbps), shaper queue (64 KB, 1 MB), link buffer (100 KB, 1 MB), control packet size (40, 64 B) and staggered starts leave 70-73. From M = 3 on, where tau exceeds the one-hop round trip, every queue stays under 40 (39, 35, 30, 30)"),
        Check::stated(
            "packets lost inside the network",
            source,
            lost as f64,
            "no packets lost: 0",
            (f64::NEG_INFINITY, 0.0),
        ),
    ];
    Analysis {
        header: ["M", "long flow Mbps", "PF C/(1+MK)", "MPD C/(1+K sqrt M)", "position", "min utilization", "peak queue pkts", "network drops"]
            .map(String::from)
            .to_vec(),
        rows,
        checks,
        notes: vec![s(
            "Our choices (the paper leaves them out): 5 ms links with 1 MB buffers, every loop fed by a UDP source at 40 Mbps (above any share it can get), 64 KB shaper queues, 20 s runs measured over the last 10 s; tau = T = the long loop's propagation delay (5M ms). Position 0 is the proportional-fair share, 1 the min-potential-delay share.",
        )],
        chart: Chart {
            title: s("overlay-fig6: the long flow's throughput in the linear network (K = 4)"),
            x_label: s("bottlenecks M"),
            y_label: s("throughput (Mbps)"),
            series: vec![
                Series { name: s("edge-to-edge loops"), points: ours, markers: true, line: true },
                Series { name: s("proportional fair C/(1+MK)"), points: pf_pts, markers: false, line: true },
                Series { name: s("min potential delay C/(1+K sqrt M)"), points: md_pts, markers: false, line: true },
            ],
            reference: None,
            log_y: false,
            per_flow: false,
        },
        extra_charts: Vec::new(),
        json: json!(json_rows),
    }
}

/// overlay-fig7: the spread (CoV) of per-TCP goodput against the number of flows.
/// overlay-fig7's 10-loop departures, traced.
const TEN_LOOPS: &str = "traced to the loops' shaper buffers: the ten loops get 0.90-0.93 Mbps each (a CoV of 0.009 between loops), so the spread is all within loops, each 50 TCPs behind its own 50-packet shaper. Ten such buffers hold 500 packets, one per TCP, so no TCP is locked out of a queue; with 2 loops 100 packets serve 500 TCPs. How ten loops sharing the paper's two edge nodes (Fig. 7(b)) split its 'all buffers 50 pkts' is not said: with 10 or 25 packets per loop (sensitivity section) the CoV rises toward the paper's. Bottleneck buffer, tau, window cap, initial window, minimum RTO, SACK and staggered starts each moved it by less than 0.06 in trial runs";

pub(crate) fn fig7(results: &[RunResult]) -> Analysis {
    let source = "overlay paper, Section 7.2 (Fig. 7(c), (d))";
    let mut rows = Vec::new();
    let mut json_rows = Vec::new();
    let mut series: Vec<Series> = Vec::new();
    let mut min_goodput = f64::INFINITY;
    let mut cov_at = std::collections::BTreeMap::new();
    for r in results {
        // Loops and flows from the run itself; FRED or FIFO from its label.
        let e = r.report.loops.len() as u32;
        let n = r.report.flows.len() as u32;
        let q = if r.label.contains("fred") {
            "fred"
        } else {
            "fifo"
        };
        let x: Vec<f64> = r.report.flows.iter().map(|f| f.throughput_mbps).collect();
        let cov = std_dev(&x) / mean(&x).max(1e-12);
        // Over the whole run (each flow's series), not each flow's rate over its own
        // active time, so that flows starting late are not counted as if they ran all along.
        let goodput = r
            .report
            .flows
            .iter()
            .map(|f| mean(&f.series_mbps))
            .sum::<f64>()
            / 10.0;
        min_goodput = min_goodput.min(goodput);
        cov_at.insert((e, q.to_string(), n), cov);
        let name = format!("E = {e}, {q}");
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((n as f64, cov)),
            None => series.push(Series {
                name,
                points: vec![(n as f64, cov)],
                markers: true,
                line: true,
            }),
        }
        rows.push(vec![
            e.to_string(),
            q.to_string(),
            n.to_string(),
            format!("{cov:.2}"),
            format!("{:.1}%", goodput * 100.0),
            network_drops(r).to_string(),
            r.report
                .loops
                .iter()
                .map(|l| l.ingress_drops)
                .sum::<u64>()
                .to_string(),
        ]);
        json_rows.push(json!({"loops": e, "queue": q, "flows": n, "cov": cov,
            "goodput_share": goodput, "network_drops": network_drops(r),
            "ingress_drops": r.report.loops.iter().map(|l| l.ingress_drops).sum::<u64>()}));
    }
    let n = *DUMBBELL_FLOWS.last().expect("flows");
    let at = |e: u32, q: &str| {
        cov_at
            .get(&(e, q.to_string(), n))
            .copied()
            .unwrap_or(f64::NAN)
    };
    // The text states each CoV ("CoV = 2.5"): each judged against our seeds' spread, to
    // the digit printed.
    let cov = |what: String, ours: f64, text: &str| {
        Check::noise(
            what,
            source,
            ours,
            text.parse().expect("a number"),
            Read::printed(text),
        )
    };
    let checks = vec![
        cov(format!("CoV at {n} flows, no loops, FIFO"), at(0, "fifo"), "4")
            .with_published("up to 4 ('from CoV = 0.7 to CoV = 4')"),
        cov(format!("CoV at {n} flows, 2 loops, FIFO"), at(2, "fifo"), "2.5"),
        cov(format!("CoV at {n} flows, no loops, FRED at the bottleneck"), at(0, "fred"), "2.5"),
        cov(format!("CoV at {n} flows, 10 loops, FIFO"), at(10, "fifo"), "1.2").note_if_departs(TEN_LOOPS),
        cov(format!("CoV at {n} flows, 10 loops, FRED at the edges"), at(10, "fred"), "0.7").note_if_departs(TEN_LOOPS),
        Check::reading(
            "lowest total TCP goodput over the bottleneck's capacity",
            source,
            min_goodput,
            "mean per-TCP goodput close to 100%",
            Word::NearFull,
        )
        .note_if_departs("with 5 and 10 loops the 50-packet bottleneck overflows (see the network drops): ten loops each hold up to H_thresh = 2 packets plus what they add during the feedback delay, beyond one bandwidth-delay product; the paper notes that fully lossless operation needs larger buffers"),
    ];
    Analysis {
        header: ["loops E", "queue", "TCP flows N", "CoV", "goodput / capacity", "network drops", "ingress drops"]
            .map(String::from)
            .to_vec(),
        rows,
        checks,
        notes: vec![s(
            "Our choices: 40 ms RTT (so 50 packets is one bandwidth-delay product), 100 Mbps edge links, 60 s runs, TCP NewReno with a 64-segment window; FRED is our FRED-2 (FRED with minq). With no loops the FRED curve puts FRED at the bottleneck, as the paper's Fig. 7(d).",
        )],
        chart: Chart {
            title: s("overlay-fig7: spread of per-TCP goodput (CoV) against the number of flows"),
            x_label: s("TCP flows N"),
            y_label: s("CoV of per-TCP goodput"),
            series,
            reference: None,
            log_y: false,
            per_flow: false,
        },
        extra_charts: Vec::new(),
        json: json!(json_rows),
    }
}

/// overlay-fig8 and overlay-fig9: the UDP's excess held at its ingress; the TCP's share
/// (its fair share, or its assured rate plus half the rest).
pub(crate) fn fig8_9(id: &str, results: &[RunResult]) -> Analysis {
    let fig9 = id == "overlay-fig9";
    let source = if fig9 {
        "overlay paper, Section 7.4 (Fig. 9)"
    } else {
        "overlay paper, Section 7.3 (Fig. 8)"
    };
    let capacity = if fig9 { 10.0 } else { 20.0 };
    let want_tcp = if fig9 {
        4.0 + (capacity - 4.0) / 2.0
    } else {
        capacity / 2.0
    };
    let mut rows = Vec::new();
    let mut json_rows = Vec::new();
    let mut checks = Vec::new();
    let mut chart_series = Vec::new();
    for r in results {
        let dt = r.report.sample_interval_s;
        let from = r.report.duration_s / 3.0;
        let udp = mean_from(&r.report.flows[0], dt, from);
        let tcp = mean_from(&r.report.flows[1], dt, from);
        let inside = network_drops(r);
        let ingress: u64 = r.report.loops.iter().map(|l| l.ingress_drops).sum();
        rows.push(vec![
            r.label.clone(),
            format!("{udp:.2}"),
            format!("{tcp:.2}"),
            format!("{want_tcp:.2}"),
            inside.to_string(),
            ingress.to_string(),
        ]);
        json_rows.push(json!({"run": r.label, "udp_mbps": udp, "tcp_mbps": tcp,
            "tcp_expected_mbps": want_tcp, "network_drops": inside, "ingress_drops": ingress}));
        if r.x == 1.0 {
            for (f, name) in r.report.flows.iter().zip(["UDP loop", "TCP loop"]) {
                chart_series.push(Series {
                    name: s(name),
                    points: f
                        .series_mbps
                        .iter()
                        .enumerate()
                        .map(|(i, &y)| ((i + 1) as f64 * dt, y))
                        .collect(),
                    markers: false,
                    line: true,
                });
            }
            let what = if fig9 {
                "TCP (4 Mbps assured) throughput with loops, Mbps"
            } else {
                "TCP throughput with loops, Mbps"
            };
            let published = if fig9 {
                "4 + 6/2 = 7"
            } else {
                "its fair share (10)"
            };
            let c = Check::reading(
                format!("{what}, over the {want_tcp} Mbps it is said to get"),
                source,
                tcp / want_tcp,
                published,
                Word::AtShare,
            );
            checks.push(if fig9 {
                c.note_if_departs("AIMD-ER's decrease works on mu, the loop's output rate, which is its FIFO share of the link when congestion is caught; detection takes a few intervals (H_thresh, the interval's end, the feedback's trip), the inputs overshoot the link, and equal cuts then leave the assured loop about 5 Mbps. Section 7.4's formula has mu, its prose 'the ingress departure rate': read as the prose, backing off the ingress rate, the TCP reaches the band (sensitivity section)")
            } else {
                c
            });
            checks.push(Check::stated(
                "the UDP's packets dropped inside the network (excess held at its ingress)",
                source,
                inside as f64,
                "the excess stays at the UDP's ingress: 0 inside",
                (f64::NEG_INFINITY, 0.0),
            ));
            checks.push(Check::stated(
                "the UDP's packets dropped at its ingress",
                source,
                ingress as f64,
                "the excess stays at the UDP's ingress: some, at least 1",
                (1.0, f64::INFINITY),
            ));
        }
    }
    Analysis {
        header: ["run", "UDP Mbps", "TCP Mbps", "TCP expected", "network drops", "ingress drops"]
            .map(String::from)
            .to_vec(),
        rows,
        checks,
        notes: vec![s(
            "Throughputs are means after the first third of the run. Without loops the FIFO bottleneck gives the UDP what it sends; with them the UDP's loop is held to its share and its excess is dropped by its own shaper queue.",
        )],
        chart: Chart {
            title: format!("{id}: throughput with edge-to-edge loops"),
            x_label: s("time (s)"),
            y_label: s("throughput (Mbps)"),
            series: chart_series,
            reference: Some((want_tcp, format!("TCP expected {want_tcp} Mbps"))),
            log_y: false,
            per_flow: false,
        },
        extra_charts: Vec::new(),
        json: json!(json_rows),
    }
}

/// overlay-fig10: a quasi-leased line appears beside a best-effort loop.
pub(crate) fn fig10(results: &[RunResult]) -> Analysis {
    let mut rows = Vec::new();
    let mut json_rows = Vec::new();
    let (mut peaks, mut bounds) = (Vec::new(), Vec::new());
    // Figs. 10(b) and 10(c) are for b = 0.5 (the figure's caption): the rate claims are
    // judged there. Only Fig. 10(a) sweeps b.
    let (mut share_half, mut lost_half, mut backoff_half) = (f64::NAN, f64::NAN, f64::NAN);
    let mut ratios = Vec::new();
    let mut rates_chart = None;
    for r in results {
        let b = r.x;
        let a = b * 100.0;
        let dt = r.report.sample_interval_s;
        let be = &r.report.flows[0];
        let qll = &r.report.flows[1];
        let qll_mbps = mean_from(qll, dt, 3.0);
        let be_mbps = mean_from(be, dt, 3.0);
        let lost = qll.dropped_pkts;
        let tau_s = r.report.loops[0].tau_ms / 1e3;
        let c_tau_pkts = 100e6 * tau_s / 8000.0;
        let bound = leased_queue_bound(b) * c_tau_pkts;
        let peak = r
            .report
            .links
            .iter()
            .map(|l| l.peak_queue_pkts)
            .max()
            .unwrap_or(0) as f64;
        // How long after 2 s until the best effort's throughput is within 10% of C - A.
        let backoff = be
            .series_mbps
            .iter()
            .enumerate()
            .map(|(i, &y)| ((i + 1) as f64 * dt, y))
            .find(|&(t, y)| t > 2.0 && y <= (100.0 - a) * 1.1)
            .map_or(f64::INFINITY, |(t, _)| t - 2.0);
        ratios.push((b, peak / bound));
        if (b - 0.5).abs() < 1e-9 {
            (share_half, lost_half, backoff_half) = (qll_mbps / a, lost as f64, backoff);
        }
        peaks.push((b, peak));
        bounds.push((b, bound));
        rows.push(vec![
            format!("{b}"),
            format!("{qll_mbps:.2}"),
            format!("{a:.0}"),
            format!("{be_mbps:.2}"),
            lost.to_string(),
            format!("{:.0}", backoff * 1e3),
            format!("{peak:.0}"),
            format!("{bound:.0}"),
        ]);
        json_rows.push(
            json!({"b": b, "leased_mbps": qll_mbps, "leased_rate_mbps": a,
            "best_effort_mbps": be_mbps, "leased_lost_pkts": lost, "backoff_s": backoff,
            "peak_queue_pkts": peak, "bound_pkts": bound}),
        );
        if (b - 0.5).abs() < 1e-9 {
            let pts = |f: &FlowReport| {
                f.series_mbps
                    .iter()
                    .enumerate()
                    .map(|(i, &y)| ((i + 1) as f64 * dt, y))
                    .collect()
            };
            rates_chart = Some(Chart {
                title: s("overlay-fig10: rates when a 50 Mbps quasi-leased line starts at 2 s"),
                x_label: s("time (s)"),
                y_label: s("throughput (Mbps)"),
                series: vec![
                    Series {
                        name: s("best effort"),
                        points: pts(be),
                        markers: false,
                        line: true,
                    },
                    Series {
                        name: s("quasi-leased line"),
                        points: pts(qll),
                        markers: false,
                        line: true,
                    },
                ],
                reference: Some((50.0, s("leased rate 50 Mbps"))),
                log_y: false,
                per_flow: false,
            });
        }
    }
    let fold = |f: fn(f64, f64) -> f64, init: f64| ratios.iter().map(|r| r.1).fold(init, f);
    let (ratio_lo, ratio_hi) = (
        fold(f64::min, f64::INFINITY),
        fold(f64::max, f64::NEG_INFINITY),
    );
    let half = "overlay paper, Section 7.4, Fig. 10(b, c) (b = 0.5)";
    let checks = vec![
        Check::reading(
            "b = 0.5: leased line's throughput after 3 s over its rate",
            half,
            share_half,
            "the QLL reaches its minimum guarantee",
            Word::NearFull,
        ),
        Check::stated(
            "b = 0.5: leased line's packets lost",
            half,
            lost_half,
            "loss-less: 0",
            (f64::NEG_INFINITY, 0.0),
        ),
        Check::reading(
            "b = 0.5: time for best effort to back off to within 10% of C - A, s",
            half,
            backoff_half,
            "backing off quickly",
            Word::Quickly,
        ),
        // "Closely matches": the level, in the one unit the analysis suggests (C tau; the
        // paper states none), at both ends of the sweep ...
        Check::reading(
            "peak queue over b/(1-b) C tau, lowest over b",
            "overlay paper, Section 7.4, Fig. 10(a)",
            ratio_lo,
            "the simulated queue bound closely matches qmax = b/(1-b)",
            Word::Closely,
        )
        .note("the paper states no unit for qmax; C tau is ours, from the single-bottleneck analysis"),
        Check::reading(
            "peak queue over b/(1-b) C tau, highest over b",
            "overlay paper, Section 7.4, Fig. 10(a)",
            ratio_hi,
            "the simulated queue bound closely matches qmax = b/(1-b)",
            Word::Closely,
        ),
        // ... and the shape, whatever the unit: the peak over b/(1-b) one constant across
        // b within the table's 'comparable'.
        Check::reading(
            "peak queue over b/(1-b), the largest over b divided by the smallest",
            "overlay paper, Section 7.4, Fig. 10(a)",
            ratio_hi / ratio_lo,
            "the simulated queue bound closely matches qmax = b/(1-b)",
            Word::Comparable,
        )
        .note_if_departs("the peak queue does not grow as b/(1-b) across the sweep: see the table's last two columns")
        .note(format!(
            "the peak over b/(1-b) C tau rises steadily with b ({}): ours grows somewhat faster than the analysis; the verdict says whether the factor allowed covers it",
            ratios.iter().map(|(b, r)| format!("{r:.2} at b = {b}")).collect::<Vec<_>>().join(", ")
        )),
    ];
    Analysis {
        header: ["b = A/C", "leased Mbps (after 3 s)", "leased rate", "best effort Mbps", "leased lost", "backoff ms", "peak queue pkts", "bound b/(1-b) C tau"]
            .map(String::from)
            .to_vec(),
        rows,
        checks,
        notes: vec![s(
            "Our choices: 10 ms bottleneck (tau = T = 10 ms), 4 MB of bottleneck buffer, a best-effort source at the link's 100 Mbps, a leased-line source at exactly its rate. The bound b/(1-b), in units of C tau, is derived in the code (experiments::leased_queue_bound): the paper omits its analysis and its unit.",
        ), format!(
            "In units of C tau our peak queue is {ratio_lo:.1} to {ratio_hi:.1} times b/(1-b): the analysis lets best effort react in the same interval the leased line appears, while ours learns of it only after the leased line's packets have queued, the interval has ended and the feedback has returned (2-3 tau), and meanwhile the queue grows by b C tau per interval. The paper gives no unit, so this scale is not judged."
        )],
        chart: Chart {
            title: s("overlay-fig10: transient queue against the leased share"),
            x_label: s("leased share b = A/C"),
            y_label: s("peak bottleneck queue (packets)"),
            series: vec![
                Series { name: s("simulated peak"), points: peaks, markers: true, line: true },
                Series { name: s("bound b/(1-b) C tau"), points: bounds, markers: false, line: true },
            ],
            reference: None,
            log_y: false,
            per_flow: false,
        },
        extra_charts: rates_chart.map(|c| vec![(s("rates"), c)]).unwrap_or_default(),
        json: json!(json_rows),
    }
}

/// overlay-fig8: best effort, without loops and with.
pub(crate) fn fig8(results: &[RunResult]) -> Analysis {
    fig8_9("overlay-fig8", results)
}

/// overlay-fig9: the assured service, without loops and with.
pub(crate) fn fig9(results: &[RunResult]) -> Analysis {
    fig8_9("overlay-fig9", results)
}
