//! The CS-FNE programs on crafted packets (BPF_PROG_TEST_RUN): the edge's TSW meter and
//! the core give the Rust model's (`csfq_algo::csfne_fixed`) labels, verdicts, rates,
//! ring and virtual queue on the shared vectors; labels from an untrusted interface are
//! judged as unlabeled traffic. Needs root; skipped with the reason elsewhere (and failing
//! instead when CSFQ_DP_REQUIRED is set).

mod common;

use common::*;
use csfq_algo::fixed::{encode_label, CARRIER};
use csfq_dp::abi::{Counter, CsfneConfigRaw, EdgeConfigRaw, METER_TSW, TRUST_LISTED};
use csfq_dp::flow_table::flow_hash;
use csfq_dp::{Role, TestProgram};

const PASS: i32 = -1; // TC_ACT_UNSPEC
const SHOT: i32 = 2; // TC_ACT_SHOT
const SEED: u64 = 0x5eed_c5f1;

fn lines(kind: &str) -> Vec<Vec<String>> {
    raw_vectors_in("csfne-fixed-vectors.csv", kind)
}

fn config_from_vectors() -> CsfneConfigRaw {
    let p: Vec<u64> = lines("csfneparams")[0]
        .iter()
        .map(|v| v.parse().unwrap())
        .collect();
    CsfneConfigRaw {
        capacity_bps: p[0],
        k_ns: p[1],
        target_bytes: p[2] as u32,
        limit_bytes: p[3] as u32,
        ring: p[4] as u32,
        test_mode: 1,
        ..Default::default()
    }
}

fn flow_packet(flow: u64, bytes: usize, label_bps: u64) -> V4 {
    V4 {
        sport: 4000 + flow as u16,
        frame_len: bytes,
        id: encode_label(&CARRIER, label_bps) as u16,
        ..Default::default()
    }
}

/// The fingerprint the program gives `v`'s flow.
fn fingerprint(v: &V4) -> u32 {
    (flow_hash(&key_v4(v, true), SEED) as u32) | 1
}

/// The edge with the TSW meter gives each of the 96 packets of the vectors (eight flows,
/// staggered starts, bursts, gaps, same-instant packets) the model's rate, encoded.
#[test]
fn tsw_edge_equals_the_model_on_the_vectors() {
    if !dataplane_or_skip("tsw_edge_equals_the_model_on_the_vectors") {
        return;
    }
    let v = lines("tsw");
    assert_eq!(v.len(), 96);
    let mut p = TestProgram::load(Role::Edge).expect("load edge");
    for (i, l) in v.iter().enumerate() {
        let n = |j: usize| l[j].parse::<u64>().unwrap();
        let (now, flow, bytes, win, rate) = (n(0), n(1), n(2) as usize, n(3), n(4));
        p.set_edge_config(&EdgeConfigRaw {
            k_ns: win,
            default_weight_milli: 1000,
            test_mode: 1,
            test_now_ns: now,
            meter: METER_TSW,
            ..Default::default()
        })
        .unwrap();
        let frame = V4 {
            sport: 4000 + flow as u16,
            frame_len: bytes.max(60),
            ..Default::default()
        }
        .frame();
        assert!(bytes >= 60, "vector sizes fit a frame");
        let (ret, out) = p.run(&frame).unwrap();
        assert_eq!(ret, PASS);
        assert_eq!(
            v4_id(&out),
            encode_label(&CARRIER, rate) as u16,
            "packet {i} (flow {flow}) at {now} ns: rate {rate}"
        );
    }
}

/// Every packet of the core's vectors (1500 packets of five flows, one unlabeled: both
/// drops, relabels, hits and misses, an empty queue, a burst that overflows) gets the
/// model's verdict and label, and leaves `r_hit`, `r_miss`, the packets admitted and the
/// virtual queue exactly as the model's.
#[test]
fn csfne_core_equals_the_model_on_the_vectors() {
    if !dataplane_or_skip("csfne_core_equals_the_model_on_the_vectors") {
        return;
    }
    let v = lines("csfne");
    assert_eq!(v.len(), 1500);
    let mut cfg = config_from_vectors();
    let mut p = TestProgram::load_csfne(SEED).expect("load csfne");
    // The model's fingerprints are flow + 1: the program's must be as distinct.
    let mut fps: Vec<u32> = (0..5)
        .map(|f| fingerprint(&flow_packet(f, 100, 0)))
        .collect();
    fps.sort();
    fps.dedup();
    assert_eq!(fps.len(), 5);
    let mut drops = [0u64; 2];
    for (i, l) in v.iter().enumerate() {
        let n = |j: usize| l[j].parse::<u64>().unwrap();
        let (now, flow, bytes, label) = (n(0), n(1), n(2) as usize, n(3));
        cfg.test_now_ns = now;
        cfg.test_pick = n(4) as u32;
        cfg.test_draw = n(5) as u32;
        p.set_csfne_config(&cfg).unwrap();
        let frame = flow_packet(flow, bytes, label).frame();
        let (ret, out) = p.run(&frame).unwrap();
        let (verdict, relabel) = (n(6), n(7));
        match verdict {
            0 => {
                assert_eq!(ret, PASS, "packet {i}: forwarded ({l:?})");
                assert_eq!(out, frame, "packet {i}: untouched");
            }
            1 => {
                assert_eq!(ret, PASS, "packet {i}: relabeled ({l:?})");
                assert_eq!(
                    v4_id(&out),
                    encode_label(&CARRIER, relabel) as u16,
                    "packet {i}: relabeled to CL"
                );
            }
            2 | 3 => {
                assert_eq!(ret, SHOT, "packet {i}: dropped ({l:?})");
                drops[verdict as usize - 2] += 1;
            }
            _ => unreachable!(),
        }
        let s = p.csfne_state().unwrap();
        let queue = if s.vq_finish_ns > now {
            (s.vq_finish_ns - now) * cfg.capacity_bps / 8_000_000_000
        } else {
            0
        };
        assert_eq!(
            (s.hit.rate_bps, s.miss.rate_bps, s.admitted, queue),
            (n(9), n(10), n(11), n(12)),
            "packet {i}: r_hit, r_miss, admitted, queue ({l:?})"
        );
    }
    assert_eq!(count(&p, Counter::DropCsfneProb), drops[0]);
    assert_eq!(count(&p, Counter::DropOverflow), drops[1]);
    assert!(drops[0] > 100 && drops[1] > 5, "{drops:?}");
}

/// Labels that arrive on an interface the core does not trust are judged as unlabeled
/// traffic and leave with label 0: a flow that labels itself 1.5 kbit/s from outside, at
/// twice the link's rate, is priced as all unlabeled traffic together and dropped by
/// Eq. (2); the same packets from the trusted interface are never dropped by Eq. (2) and
/// pass untouched (only the virtual queue's overflow drops them).
#[test]
fn csfne_judges_untrusted_labels_as_unlabeled() {
    if !dataplane_or_skip("csfne_judges_untrusted_labels_as_unlabeled") {
        return;
    }
    let forged = flow_packet(9, 1500, 1_500);
    for (from, trusted) in [(3, false), (7, true)] {
        let mut cfg = config_from_vectors();
        cfg.trust = TRUST_LISTED;
        cfg.trusted[0] = 7;
        cfg.test_draw = 0; // a packet with a drop probability above 0 is dropped
        let mut p = TestProgram::load_csfne(SEED).expect("load csfne");
        // 1500-byte packets every 0.6 ms (20 Mbit/s into 10): the queue passes the target.
        for i in 0..200u64 {
            cfg.test_now_ns = 1_000_000 + i * 600_000;
            p.set_csfne_config(&cfg).unwrap();
            let (ret, out) = p.run_from(&forged.frame(), from).unwrap();
            if ret == PASS {
                if trusted {
                    assert_eq!(out, forged.frame(), "packet {i}: untouched");
                } else {
                    assert_eq!(v4_id(&out), 0, "packet {i}: its label overwritten");
                }
            }
        }
        let eq2 = count(&p, Counter::DropCsfneProb);
        if trusted {
            assert_eq!(count(&p, Counter::Untrusted), 0);
            assert_eq!(eq2, 0, "trusted 1.5 kbit/s labels dropped by Eq. (2)");
        } else {
            assert_eq!(count(&p, Counter::Untrusted), 200);
            assert!(
                eq2 > 50,
                "untrusted packets dropped by Eq. (2): {eq2} of 200"
            );
        }
    }
}
