//! The TUF programs on crafted packets (BPF_PROG_TEST_RUN): the edge's tags and the core's
//! filter give the Rust model's (`csfq_algo::tuf_fixed`) tags, verdicts, thresholds,
//! windows and virtual queue; tags from an untrusted interface are judged as untagged
//! traffic. Needs root; skipped with the reason elsewhere (and failing instead when
//! CSFQ_DP_REQUIRED is set).

mod common;

use common::*;
use csfq_algo::packet::FlowId;
use csfq_algo::tuf::ipv4_id_of_tag;
use csfq_algo::tuf_fixed::FixedTufTagger;
use csfq_dp::abi::{Counter, EdgeConfigRaw, TufConfigRaw, TRUST_LISTED};
use csfq_dp::flow_table::flow_hash;
use csfq_dp::{Role, TestProgram};

const PASS: i32 = -1; // TC_ACT_UNSPEC
const SHOT: i32 = 2; // TC_ACT_SHOT

fn lines(kind: &str) -> Vec<Vec<String>> {
    raw_vectors_in("tuf-fixed-vectors.csv", kind)
}

fn filter_config() -> TufConfigRaw {
    let p: Vec<u64> = lines("tufparams")[0]
        .iter()
        .map(|v| v.parse().unwrap())
        .collect();
    TufConfigRaw {
        capacity_bps: p[0],
        limit_bytes: p[1] as u32,
        window_ns: p[2],
        k_ns: p[3],
        test_mode: 1,
        ..Default::default()
    }
}

/// The edge writing TUF tags, on the CSFQ edge's vectors (96 packets of eight flows,
/// staggered starts, bursts, gaps, same-instant packets): each packet carries the model's
/// tag, the flow's offset `D_F` the high half of its key's hash with the table's seed.
#[test]
fn tuf_edge_tags_equal_the_model() {
    if !dataplane_or_skip("tuf_edge_tags_equal_the_model") {
        return;
    }
    let v = vectors("edge");
    assert_eq!(v.len(), 96);
    let k = v[0][3];
    let mut p = TestProgram::load(Role::Edge).expect("load edge");
    let mut model = FixedTufTagger::new(k);
    let packet = |flow: u64, bytes: u64| V4 {
        sport: 4000 + flow as u16,
        frame_len: bytes.max(60) as usize,
        ..Default::default()
    };
    for flow in 0..8 {
        let d_f = (flow_hash(&key_v4(&packet(flow, 100), true), 0) >> 32) as u32;
        model.set_offset(FlowId(flow as u32), d_f);
    }
    for (i, l) in v.iter().enumerate() {
        let (now, flow, bytes) = (l[0], l[1], l[2]);
        p.set_edge_config(&EdgeConfigRaw {
            k_ns: k,
            default_weight_milli: 1000,
            test_mode: 1,
            test_now_ns: now,
            tuf: 1,
            ..Default::default()
        })
        .unwrap();
        let (ret, out) = p.run(&packet(flow, bytes).frame()).unwrap();
        assert_eq!(ret, PASS);
        let tag = model.tag(FlowId(flow as u32), now, bytes as u32);
        assert_eq!(
            v4_id(&out),
            ipv4_id_of_tag(tag),
            "packet {i} (flow {flow}) at {now} ns: tag {tag}"
        );
    }
}

/// Every packet of the filter's vectors (3000 packets, tagged and untagged, offered 1.6 C,
/// a silence past two windows, a burst that overflows) gets the model's verdict and leaves
/// the threshold, the windows and the virtual queue as the model's.
#[test]
fn tuf_filter_equals_the_model_on_the_vectors() {
    if !dataplane_or_skip("tuf_filter_equals_the_model_on_the_vectors") {
        return;
    }
    let v = lines("tuf");
    assert_eq!(v.len(), 3000);
    let mut cfg = filter_config();
    let mut p = TestProgram::load(Role::Tuf).expect("load tuf");
    let mut drops = [0u64; 2];
    for (i, l) in v.iter().enumerate() {
        let n = |j: usize| l[j].parse::<u64>().unwrap();
        let (now, bytes) = (n(0), n(1) as usize);
        let id = match l[2].as_str() {
            "-" => 0x1234, // no marker: untagged
            t => ipv4_id_of_tag(t.parse().unwrap()),
        };
        cfg.test_now_ns = now;
        p.set_tuf_config(&cfg).unwrap();
        let frame = V4 {
            frame_len: bytes,
            id,
            ..Default::default()
        }
        .frame();
        let (ret, out) = p.run(&frame).unwrap();
        match n(3) {
            0 => {
                assert_eq!(ret, PASS, "packet {i}: forwarded ({l:?})");
                assert_eq!(out, frame, "packet {i}: untouched");
            }
            verdict => {
                assert_eq!(ret, SHOT, "packet {i}: dropped ({l:?})");
                drops[verdict as usize - 1] += 1;
            }
        }
        let s = p.tuf_state().unwrap();
        let queue = if s.vq_finish_ns > now {
            (s.vq_finish_ns - now) * cfg.capacity_bps / 8_000_000_000
        } else {
            0
        };
        assert_eq!(
            (s.threshold(), s.window, queue),
            (n(5), n(6), n(7)),
            "packet {i}: threshold, windows, queue ({l:?})"
        );
    }
    assert_eq!(count(&p, Counter::DropTufHighestTag), drops[0]);
    assert_eq!(count(&p, Counter::DropOverflow), drops[1]);
}

/// A tag from an interface the core does not trust is judged as untagged traffic: a flow
/// that tags its own packets 0 (the lowest, never dropped if believed) at twice the link
/// is tagged at the core by the rate of all untagged traffic, and dropped above the
/// threshold, leaving with its tag removed; the same packets from the trusted interface
/// are never dropped above the threshold.
#[test]
fn tuf_judges_untrusted_tags_as_untagged() {
    if !dataplane_or_skip("tuf_judges_untrusted_tags_as_untagged") {
        return;
    }
    let forged = V4 {
        frame_len: 1500,
        id: ipv4_id_of_tag(0),
        ..Default::default()
    };
    for (from, trusted) in [(3, false), (7, true)] {
        let mut cfg = filter_config();
        cfg.trust = TRUST_LISTED;
        cfg.trusted[0] = 7;
        let mut p = TestProgram::load(Role::Tuf).expect("load tuf");
        // 1500-byte packets every 0.6 ms: 20 Mbit/s into 10, for 0.3 s (15 windows).
        for i in 0..500u64 {
            cfg.test_now_ns = 1_000_000 + i * 600_000;
            p.set_tuf_config(&cfg).unwrap();
            let (ret, out) = p.run_from(&forged.frame(), from).unwrap();
            if ret == PASS && !trusted {
                assert_eq!(v4_id(&out), 0, "packet {i}: its tag removed");
            }
        }
        let above = count(&p, Counter::DropTufHighestTag);
        if trusted {
            assert_eq!(count(&p, Counter::Untrusted), 0);
            assert_eq!(above, 0, "trusted tag 0 dropped above the threshold");
        } else {
            assert_eq!(count(&p, Counter::Untrusted), 500);
            assert!(
                above > 100,
                "untrusted packets dropped above the threshold: {above}"
            );
        }
    }
}

/// The source tagger's arithmetic: the vector program (the tagger's own function, fed
/// from the packet: a test run has no socket) returns the model's tag
/// (`csfq_algo::tuf_source::source_tag`) for 4096 counters at each of 12 round trips
/// (none yet, 1 us to 537 s: past the 2^27 us the times are held at) and 4 MSS (88 to
/// 65 535), under six settings (b = 1, 2 and 64; window caps of 64 and 2^24 segments;
/// weights from 0.001 to 10^6; rto_min from 1 ms to 10 s): 1 179 648 inputs.
#[test]
fn tuf_source_tags_equal_the_model() {
    if !dataplane_or_skip("tuf_source_tags_equal_the_model") {
        return;
    }
    use csfq_algo::tuf_source::{source_tag, FixedPadhyeParams, MAX_WINDOW};
    use csfq_dp::abi::TufSourceConfigRaw;
    let mut p = TestProgram::load_tuf_source_vectors().expect("load the vector program");
    let mut checked = 0;
    let mut tags = std::collections::BTreeSet::new();
    for params in [
        FixedPadhyeParams::new(2, 0, 200_000, 1000),
        FixedPadhyeParams::new(1, 64, 200_000, 1000),
        FixedPadhyeParams::new(2, 0, 5_000, 2500),
        FixedPadhyeParams::new(2, 0, 1_000_000, 300),
        FixedPadhyeParams::new(64, MAX_WINDOW, 10_000_000, 1),
        FixedPadhyeParams::new(1, 0, 1_000, 1_000_000_000),
    ] {
        p.set_tuf_source_config(&TufSourceConfigRaw { params })
            .unwrap();
        for srtt_us in [
            0u32,
            1,
            7,
            20,
            150,
            999,
            12_345,
            100_000,
            2_000_000,
            30_000_000,
            100_000_000,
            536_870_911,
        ] {
            for mss in [88u32, 536, 1448, 65_535] {
                for i in 0..4096u32 {
                    let n = i.wrapping_mul(2_654_435_761).wrapping_add(srtt_us);
                    let srtt8 = srtt_us.wrapping_mul(8);
                    let mut frame = eth(0x0800);
                    for v in [n, srtt8, mss] {
                        frame.extend_from_slice(&v.to_ne_bytes());
                    }
                    frame.resize(60, 0);
                    let (ret, _) = p.run(&frame).unwrap();
                    let tag = source_tag(n, srtt8, mss, &params);
                    assert_eq!(
                        ret as u32,
                        u32::from(ipv4_id_of_tag(tag)),
                        "n {n} srtt8 {srtt8} mss {mss} {params:?}"
                    );
                    tags.insert(tag);
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 6 * 12 * 4 * 4096);
    // The inputs reach across the tags, not one corner of them.
    assert!(tags.len() > 1500, "{} distinct tags", tags.len());
}

/// The tagger itself passes the verifier, and on a test run (no socket) passes TCP as not
/// a local TCP socket's, untagged: one whose code reads as a tag (IPv4 Identification,
/// IPv6 flow label) leaves with its top bit cleared, so that an edge keeping its sources'
/// tags does not take it for one, checksum fixed; other TCP, and UDP, leave untouched.
#[test]
fn tuf_source_passes_what_is_no_local_tcp_sockets() {
    if !dataplane_or_skip("tuf_source_passes_what_is_no_local_tcp_sockets") {
        return;
    }
    use csfq_dp::abi::TufSourceConfigRaw;
    let mut p = TestProgram::load(Role::TufSource).expect("load the source tagger");
    p.set_tuf_source_config(&TufSourceConfigRaw {
        params: csfq_algo::tuf_source::FixedPadhyeParams::new(2, 0, 200_000, 1000),
    })
    .unwrap();
    let marked = ipv4_id_of_tag(1234);
    for (proto, id) in [(6u8, 0x1234u16), (17, 0x1234), (17, marked)] {
        let frame = V4 {
            proto,
            id,
            ..Default::default()
        }
        .frame();
        let (ret, out) = p.run(&frame).unwrap();
        assert_eq!(ret, PASS);
        assert_eq!(out, frame, "protocol {proto}, id {id:#x}: untouched");
    }
    let frame = V4 {
        proto: 6,
        id: marked,
        ..Default::default()
    }
    .frame();
    let (ret, out) = p.run(&frame).unwrap();
    assert_eq!(ret, PASS);
    assert_eq!(v4_id(&out), marked & 0x7fff);
    assert_eq!(csfq_algo::tuf::tag_of_ipv4_id(v4_id(&out)), None);
    assert!(v4_checksum_ok(&out));
    let label = 0x0_b000 | 1234; // the marker in bits 11-15, as a tag's code
    let (ret, out) = p.run(&v6_frame(6, 0, label, 4000, 100)).unwrap();
    assert_eq!(ret, PASS);
    assert_eq!(v6_label(&out), label & !0x8000);
    assert_eq!(count(&p, Counter::PassNotTcpSocket), 5);
    assert_eq!(count(&p, Counter::SourceTagged), 0);
}

/// An edge told to keep source tags forwards a TCP packet that carries a TUF tag as it
/// came (counted), and tags the rest as it always does: a UDP packet carrying a tag's code
/// (a host cannot vouch for its UDP), and a TCP packet with a host's own Identification.
#[test]
fn an_edge_keeps_tcp_tags_from_sources_when_told() {
    if !dataplane_or_skip("an_edge_keeps_tcp_tags_from_sources_when_told") {
        return;
    }
    let mut p = TestProgram::load(Role::Edge).expect("load edge");
    let tagged = ipv4_id_of_tag(1234);
    for keep in [0u32, 1] {
        p.set_edge_config(&EdgeConfigRaw {
            k_ns: 100_000_000,
            default_weight_milli: 1000,
            test_mode: 1,
            test_now_ns: 1_000_000,
            tuf: 1,
            keep_source_tags: keep,
            ..Default::default()
        })
        .unwrap();
        let before = count(&p, Counter::KeptSourceTag);
        for (proto, id, kept) in [
            (6u8, tagged, keep == 1),
            (17, tagged, false),
            (6, 0x1234, false),
        ] {
            let frame = V4 {
                proto,
                id,
                sport: 7000 + u16::from(proto),
                ..Default::default()
            }
            .frame();
            let (ret, out) = p.run(&frame).unwrap();
            assert_eq!(ret, PASS);
            if kept {
                assert_eq!(out, frame, "keep {keep}, protocol {proto}: kept");
            } else {
                assert_ne!(
                    v4_id(&out),
                    id,
                    "keep {keep}, protocol {proto}: tagged here"
                );
                assert!(csfq_algo::tuf::tag_of_ipv4_id(v4_id(&out)).is_some());
                assert!(v4_checksum_ok(&out));
            }
        }
        assert_eq!(count(&p, Counter::KeptSourceTag) - before, u64::from(keep));
    }
}
