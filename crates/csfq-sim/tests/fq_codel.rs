//! FQ-CoDel (RFC 8290) as operators deploy it, judged by what its design implies: DRR
//! between hash buckets, so the buckets (not the flows) share max-min; flows that collide
//! in a bucket share that bucket's share.

use std::path::Path;

use csfq_algo::fq_codel::bucket_index;
use csfq_algo::maxmin::{fair_share, jain_index};
use csfq_algo::packet::FlowId;
use csfq_sim::{DisciplineKind, Scenario, ScenarioFile, Simulation};

fn scenario(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../scenarios/{name}.toml"));
    ScenarioFile::load(&path)
        .expect("shipped scenario")
        .with_discipline(DisciplineKind::FqCodel)
}

/// The buckets of a scenario's flows, as the discipline hashes them (perturbation: the
/// scenario's seed).
fn buckets(s: &Scenario, n: usize) -> Vec<usize> {
    (0..n)
        .map(|f| bucket_index(FlowId(f as u32), s.seed, s.fq_codel.flows))
        .collect()
}

/// csfq-fig3a: 32 CBR flows at 0.3125 x (i + 1) Mbit/s on 10 Mbit/s. Each bucket's
/// throughput (the sum over its flows) is within 5% of the max-min share of the buckets
/// (the band of DRR's test on the same scenario, whose scheduler this is),
/// each wanting the sum of its flows' rates; with 8 buckets instead of 1024 many flows
/// collide, and the test still holds per bucket. A bucket whose demand is within 10% of
/// the share is not sharply judged: with 32 backlogged buckets a round of quanta takes
/// 39 ms, longer than CoDel's 5 ms target, so such a bucket's packets wait a round now and
/// then and CoDel drops some (flow 0, at exactly 10/32, loses 9%); it keeps 85%.
#[test]
fn buckets_share_max_min_on_csfq_fig3a() {
    for flows in [1024, 8] {
        let s = scenario("csfq-fig3a")
            .variant(|s| s.fq_codel.flows = flows)
            .unwrap();
        let b = buckets(&s, 32);
        let r = Simulation::new(&s).unwrap().run();
        let mut demand = vec![0.0; flows as usize];
        let mut got = vec![0.0; flows as usize];
        for (i, f) in r.flows.iter().enumerate() {
            demand[b[i]] += 0.3125 * (i + 1) as f64;
            got[b[i]] += f.throughput_mbps;
        }
        let used: Vec<usize> = (0..flows as usize).filter(|&k| demand[k] > 0.0).collect();
        let d: Vec<f64> = used.iter().map(|&k| demand[k]).collect();
        let alpha = fair_share(&d, 10.0);
        for &k in &used {
            let want = demand[k].min(alpha);
            let tolerance = if (demand[k] / alpha - 1.0).abs() <= 0.10 {
                assert!(got[k] >= 0.85 * want, "bucket {k}: {} vs {want}", got[k]);
                continue;
            } else {
                0.05
            };
            assert!(
                (got[k] / want - 1.0).abs() <= tolerance,
                "{flows} buckets, bucket {k}: {} vs {want} (demand {})",
                got[k],
                demand[k]
            );
        }
    }
}

/// scale-1000 (1 UDP at 1 Gbit/s, 999 TCP on 1 Gbit/s). The UDP keeps its bucket
/// backlogged, so it gets at least one round-robin share among the buckets in use
/// (C / occupied buckets, 1.6 Mbit/s for about 638 of 1024), and the TCPs that share it
/// are starved. TCPs alone in their bucket get more than those that share one with
/// another TCP: the collisions are why its TCP Jain index is below DRR's.
#[test]
fn scale_1000_holds_the_udp_to_a_bucket_and_tcps_collide() {
    let s = scenario("scale-1000");
    let n = s.flows.iter().map(|f| f.get_ref().count as usize).sum();
    let b = buckets(&s, n);
    let mut per_bucket = vec![0usize; s.fq_codel.flows as usize];
    for &k in &b {
        per_bucket[k] += 1;
    }
    let occupied = per_bucket.iter().filter(|&&c| c > 0).count();
    let r = Simulation::new(&s).unwrap().run();
    let udp = r.flows[0].throughput_mbps;
    assert!(
        udp >= 0.95 * 1000.0 / occupied as f64,
        "UDP {udp}, {occupied} buckets"
    );
    assert!(udp <= 5.0, "UDP {udp}: not held to a bucket's share");
    let tcp = |alone: bool| -> Vec<f64> {
        r.flows[1..]
            .iter()
            .enumerate()
            .filter(|(i, _)| b[i + 1] != b[0] && (per_bucket[b[i + 1]] == 1) == alone)
            .map(|(_, f)| f.throughput_mbps)
            .collect()
    };
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (alone, shared) = (tcp(true), tcp(false));
    assert!(
        mean(&alone) > 1.5 * mean(&shared),
        "alone {} shared {}",
        mean(&alone),
        mean(&shared)
    );
    let all: Vec<f64> = r.flows[1..].iter().map(|f| f.throughput_mbps).collect();
    let drr = Simulation::new(&s.with_discipline(DisciplineKind::Drr))
        .unwrap()
        .run();
    let drr_tcp: Vec<f64> = drr.flows[1..].iter().map(|f| f.throughput_mbps).collect();
    assert!(jain_index(&all) < jain_index(&drr_tcp));
    let util = r
        .links
        .iter()
        .find(|l| l.from == "r1" && l.to == "r2")
        .unwrap()
        .utilization;
    assert!(util >= 0.98, "utilization {util}");
}
