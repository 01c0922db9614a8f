//! The programs' packet parser on arbitrary frames (BPF_PROG_TEST_RUN): random bytes, and
//! valid IPv4 and IPv6 frames with random fields and random bytes flipped. Whatever comes
//! in, the edge passes it and the core passes or drops it, the frame keeps its length, and
//! no byte changes but the label's carrier: the IPv4 Identification and header checksum
//! (the checksum still verifying if it did), or the IPv6 flow label.
//!
//! Cases: `CSFQ_FUZZ_CASES` (default 20000 per program; the README gives the long run).
//! Needs root; skipped with the reason elsewhere (failing when CSFQ_DP_REQUIRED is set).

mod common;

use common::*;
use csfq_dp::abi::{
    CoreConfigRaw, EdgeConfigRaw, EST_HISTOGRAM, EST_PAPER, MAX_TRUSTED, TRUST_ANY, TRUST_LISTED,
    UNLABELABLE_PASS, UNLABELABLE_POLICE,
};
use csfq_dp::{Role, TestProgram};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const PASS: i32 = -1;
const SHOT: i32 = 2;

fn cases() -> u32 {
    std::env::var("CSFQ_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

/// Frames: random bytes, or a valid frame with random fields and random bytes flipped.
fn frames() -> impl Strategy<Value = Vec<u8>> {
    let random = proptest::collection::vec(any::<u8>(), 14..200);
    let v4 = (
        any::<u8>(),
        any::<[u8; 4]>(),
        any::<u16>(),
        any::<u16>(),
        prop_oneof![Just(0x4000u16), Just(0), any::<u16>()],
        34usize..1600,
    )
        .prop_map(|(proto, src, id, sport, frag, frame_len)| {
            V4 {
                proto,
                src,
                id,
                sport,
                frag,
                frame_len,
                ..Default::default()
            }
            .frame()
        });
    let v6 = (
        any::<u8>(),
        any::<u8>(),
        any::<u32>(),
        any::<u16>(),
        58usize..1600,
    )
        .prop_map(|(next, tc, label, sport, len)| v6_frame(next, tc, label, sport, len));
    let valid = prop_oneof![v4, v6];
    let mutated = (
        valid,
        proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        any::<prop::sample::Index>(),
        any::<bool>(),
    )
        .prop_map(|(mut f, flips, cut, truncate)| {
            for (at, b) in flips {
                let i = at.index(f.len());
                f[i] ^= b;
            }
            if truncate {
                let keep = 14 + cut.index(f.len() - 13);
                f.truncate(keep);
            }
            f
        });
    prop_oneof![1 => random, 3 => mutated].prop_map(fit_for_test_run)
}

/// BPF_PROG_TEST_RUN refuses (EINVAL) a frame whose ethertype is IPv4 or IPv6 but which is
/// shorter than that header: such frames are padded to it (the headers' fields stay
/// random; truncation within the L4 header and beyond is still exercised).
fn fit_for_test_run(mut f: Vec<u8>) -> Vec<u8> {
    let least = match u16::from_be_bytes([f[12], f[13]]) {
        0x0800 => 14 + 20,
        0x86dd => 14 + 40,
        _ => 14,
    };
    if f.len() < least {
        f.resize(least, 0);
    }
    f
}

/// The bytes a program may change: the label's carrier, by the frame's own ethertype
/// (none in IPv4 that may not carry a label: no DF, or a fragment).
fn may_change(frame: &[u8]) -> &'static [usize] {
    match u16::from_be_bytes([frame[12], frame[13]]) {
        0x0800 => {
            let frag = u16::from_be_bytes([frame[20], frame[21]]);
            if frag & 0x4000 != 0 && frag & 0x3fff == 0 {
                &[18, 19, 24, 25]
            } else {
                &[]
            }
        }
        0x86dd => &[15, 16, 17],
        _ => &[],
    }
}

fn check(p: &TestProgram, frame: &[u8], verdicts: &[i32]) -> Result<(), TestCaseError> {
    let (verdict, out) = p.run(frame).map_err(|e| {
        let cause = std::error::Error::source(&e).map(|c| c.to_string());
        TestCaseError::fail(format!("{e}: {cause:?}"))
    })?;
    prop_assert!(verdicts.contains(&verdict), "verdict {verdict}");
    prop_assert_eq!(out.len(), frame.len());
    let diff = changed(frame, &out);
    let allowed = may_change(frame);
    prop_assert!(
        diff.iter().all(|b| allowed.contains(b)),
        "changed bytes {:?} (may change {:?})",
        diff,
        allowed
    );
    // A checksum that verified before verifies after the label is written.
    if allowed.len() == 4 && !diff.is_empty() && frame.len() >= 34 && frame[14] == 0x45 {
        prop_assert_eq!(v4_checksum_ok(frame), v4_checksum_ok(&out));
    }
    Ok(())
}

fn run(name: &str, p: &TestProgram, verdicts: &[i32]) {
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    if let Err(e) = runner.run(&frames(), |f| check(p, &f, verdicts)) {
        panic!("{name}: {e}");
    }
}

#[test]
fn edge_takes_any_frame() {
    if !dataplane_or_skip("edge_takes_any_frame") {
        return;
    }
    let mut p = TestProgram::load_edge(64).unwrap();
    // Passing what cannot carry a label, then policing it (a bucket of two packets that
    // never refills: both verdicts occur).
    for (unlabelable, verdicts) in [
        (UNLABELABLE_PASS, &[PASS][..]),
        (UNLABELABLE_POLICE, &[PASS, SHOT][..]),
    ] {
        p.set_edge_config(&EdgeConfigRaw {
            k_ns: 100_000_000,
            default_weight_milli: 1000,
            test_mode: 1,
            test_now_ns: 1_000_000,
            police_rate_bps: 8,
            police_burst_bytes: 3000,
            unlabelable,
            ..Default::default()
        })
        .unwrap();
        run("edge", &p, verdicts);
    }
}

#[test]
fn core_takes_any_frame() {
    if !dataplane_or_skip("core_takes_any_frame") {
        return;
    }
    let mut p = TestProgram::load(Role::Core).unwrap();
    // Congested (a queue above the threshold), so labels drive drops, with both estimators;
    // and believing every label, or none of these (they arrive on no trusted interface:
    // each label is overwritten).
    for (estimator, trust) in [
        (EST_PAPER, TRUST_ANY),
        (EST_HISTOGRAM, TRUST_ANY),
        (EST_HISTOGRAM, TRUST_LISTED),
    ] {
        p.set_core_config(&CoreConfigRaw {
            capacity_bps: 10_000_000,
            k_alpha_ns: 100_000_000,
            k_c_ns: 100_000_000,
            threshold_bytes: 32_000,
            limit_bytes: 64_000,
            overflow_budget: 29,
            test_mode: 1,
            test_now_ns: 1_000_000,
            test_draw: 1 << 31,
            test_queue_bytes: 40_000,
            estimator,
            trust,
            trusted: [7; MAX_TRUSTED],
            ..Default::default()
        })
        .unwrap();
        run("core", &p, &[PASS, SHOT]);
    }
}
