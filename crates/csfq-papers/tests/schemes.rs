//! Scenario tests for the other core-stateless schemes against the numbers of their own
//! papers: TUF (Clerget and Dabbous 1999) and CS-FNE (Kim 2005). Each states its tolerance;
//! where ours departs from the publication, the report (`csfq reproduce --all`) says so.

use csfq_papers::experiments::tuf_filter_model;
use csfq_sim::DisciplineKind;

mod common;
use common::{mean, runs};
use DisciplineKind::*;

/// tuf-fig4: the TUF queue behaves as the bufferless filter, which (load 2) passes the
/// lower half of the tags. Tags more than 128 below the threshold lose under 2%, tags
/// more than 128 above lose over 98%, and the overall loss is 1 - 1/load within 0.02.
#[test]
fn tuf_queue_follows_the_filter_model() {
    let (loss, threshold) = tuf_filter_model(1, 1000.0);
    let t = threshold as usize;
    assert_eq!(t, 1024);
    assert!(mean(&loss[..t - 128]) < 0.02);
    assert!(mean(&loss[t + 128..]) > 0.98);
    assert!((mean(&loss) - 0.5).abs() < 0.02);
}

/// tuf-fig9a: under TUF every one of the 32 UDP flows of csfq-fig3a gets its fair share
/// within 10% (the report: TUF comparable to CSFQ and DRR).
#[test]
fn tuf_is_fair_to_udp_flows() {
    let (_, r) = &runs("tuf-fig9a", Tuf)[0];
    for f in &r.flows {
        let dev = f.throughput_mbps / 0.3125 - 1.0;
        assert!(dev.abs() <= 0.10, "flow {}: {:+.1}%", f.flow, dev * 100.0);
    }
}

/// tuf-fig9b: TUF contains the 10 Mbps UDP to at most 1 Mbps (ours 0.73; the report has it
/// comparable to CSFQ's 0.36: see the report for why ours departs), and every TCP keeps at
/// least 0.2 Mbps of its 0.3125 share.
#[test]
fn tuf_contains_an_unresponsive_flow() {
    let (_, r) = &runs("tuf-fig9b", Tuf)[0];
    assert!(
        r.flows[0].throughput_mbps <= 1.0,
        "udp {}",
        r.flows[0].throughput_mbps
    );
    assert!(r.flows[1..].iter().all(|f| f.throughput_mbps >= 0.2));
}

/// tuf-fig10: under TUF the TCP keeps at least 70% of its fair share for every N (the
/// report: 70-100%).
#[test]
fn tuf_protects_tcp_against_n_minus_1_udp() {
    for (n, r) in runs("tuf-fig10", Tuf) {
        let norm = r.flows[0].throughput_mbps / (10.0 / n);
        assert!(norm >= 0.70, "N = {n}: {norm:.2}");
    }
}

/// tuf-fig12: across K = 1..9 congested links, the TCP's mean normalized throughput under
/// TUF is at least CSFQ's and at most DRR's plus 0.05 (the report: TUF >= CSFQ, DRR
/// slightly better); the UDP at its fair share is delivered at least 88% under all three
/// at every K (the report: "perfectly served"; multi-hop CBR jitter costs ours up to 11%).
#[test]
fn tuf_across_congested_links() {
    let tcp_mean = |d| {
        mean(
            &runs("tuf-fig12a", d)
                .iter()
                .map(|(_, r)| r.flows[0].throughput_mbps / 0.909)
                .collect::<Vec<_>>(),
        )
    };
    let (tuf, csfq, drr) = (tcp_mean(Tuf), tcp_mean(Csfq), tcp_mean(Drr));
    assert!(tuf >= csfq, "tuf {tuf} csfq {csfq}");
    assert!(drr + 0.05 >= tuf, "drr {drr} tuf {tuf}");
    for d in [Tuf, Csfq, Drr] {
        for (k, r) in runs("tuf-fig12b", d) {
            let f = &r.flows[0];
            let frac = f.delivered_pkts as f64 / f.sent_pkts as f64;
            assert!(frac >= 0.88, "{d} K = {k}: {frac:.3}");
        }
    }
}

/// tuf-fig13: with ON/OFF cross traffic on 3 links, the report's claim is relative: CSFQ
/// "degrades sharply near 100 ms" periods and TUF does not. Read as: CSFQ's lowest
/// throughput over the 50..200 ms periods is at least 25% below both ends of the sweep
/// (5 ms and 1 s), and at 100 ms below half of the 0.909 Mbps share; TUF's lowest there is
/// within 25% of the lower end, it keeps at least 0.85 of the 0.909 share at every period,
/// and it beats CSFQ at every period.
#[test]
fn tuf_is_robust_to_bursty_cross_traffic_where_csfq_is_not() {
    let share = |d| -> Vec<(f64, f64)> {
        runs("tuf-fig13-3links", d)
            .iter()
            .map(|(p, r)| (*p, r.flows[0].throughput_mbps / 0.909))
            .collect()
    };
    let (tuf, csfq) = (share(Tuf), share(Csfq));
    let dip = |v: &[(f64, f64)]| {
        let low = v
            .iter()
            .filter(|(p, _)| (50.0..=200.0).contains(p))
            .map(|&(_, x)| x)
            .fold(f64::INFINITY, f64::min);
        low / v[0].1.min(v[v.len() - 1].1)
    };
    assert!(dip(&csfq) <= 0.75, "CSFQ: {csfq:?}");
    assert!(dip(&tuf) >= 0.75, "TUF: {tuf:?}");
    let at100 = csfq.iter().find(|(p, _)| *p == 100.0).unwrap().1;
    assert!(at100 < 0.5, "CSFQ at 100 ms: {at100:.2}");
    for (&(p, t), &(_, c)) in tuf.iter().zip(&csfq) {
        assert!(t >= 0.85, "TUF at {p} ms: {t:.2}");
        assert!(t > c, "period {p} ms: TUF {t:.2} CSFQ {c:.2}");
    }
}

/// csfne-table1 (csfq-fig3a): CS-FNE gives every flow its share within 20%, and its
/// per-flow standard deviation is at most the thesis's 0.046 Mbps (ours is 0.021).
#[test]
fn csfne_on_one_link() {
    let (_, r) = &runs("csfne-table1", Csfne)[0];
    let t: Vec<f64> = r.flows.iter().map(|f| f.throughput_mbps).collect();
    assert!(t.iter().all(|x| (x / 0.3125 - 1.0).abs() <= 0.20), "{t:?}");
    let m = mean(&t);
    let sd = (t.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / t.len() as f64).sqrt();
    assert!(sd <= 0.046, "std {sd}");
}

/// csfne-table2/5/6: CS-FNE keeps the TCP of csfq-fig4 above 0.3 of its share for every N;
/// across congested links it delivers at least 60% of the fair-share UDP at every K and
/// beats RED on average for both the UDP and the TCP. (The thesis reports higher averages
/// than ours in all three, 0.643, 0.889, 0.621 against 0.52, 0.76, 0.39; its TSW window and
/// queue target are not given and ours are guesses: see the report.)
#[test]
fn csfne_with_tcp_and_across_links() {
    for (n, r) in runs("csfne-table2", Csfne) {
        let norm = r.flows[0].throughput_mbps / (10.0 / n);
        assert!(norm >= 0.3, "N = {n}: {norm:.2}");
    }
    let udp = |d| -> Vec<f64> {
        runs("csfne-table5", d)
            .iter()
            .map(|(_, r)| r.flows[0].delivered_pkts as f64 / r.flows[0].sent_pkts as f64)
            .collect()
    };
    let c = udp(Csfne);
    assert!(c.iter().all(|&x| x >= 0.6), "{c:?}");
    assert!(mean(&c) > mean(&udp(Red)));
    let tcp = |d| {
        mean(
            &runs("csfne-table6", d)
                .iter()
                .map(|(_, r)| r.flows[0].throughput_mbps / 0.909)
                .collect::<Vec<_>>(),
        )
    };
    assert!(tcp(Csfne) > tcp(Red));
}
