//! The eBPF programs on crafted packets (BPF_PROG_TEST_RUN): labels written where they
//! should be, checksums valid, nothing else touched, and the same numbers as the Rust
//! model (`csfq_algo::fixed`) on the shared vectors. Needs root; skipped with the reason
//! elsewhere (and failing instead when CSFQ_DP_REQUIRED is set).

mod common;

use common::*;
use csfq_algo::fixed::{decode_label, encode_label, tables, FixedEdge, FixedRate};
use csfq_algo::label_codec::LabelCodec;
use csfq_dp::abi::{
    CoreConfigRaw, Counter, CsfneConfigRaw, EdgeConfigRaw, FlowKeyRaw, TufConfigRaw, WeightKey,
    CLOCK_COARSE, EST_HISTOGRAM, EST_PAPER, KEY_FIVE_TUPLE, KEY_HOST_PAIR, KEY_SOURCE, MAX_TRUSTED,
    TRUST_LISTED, UNLABELABLE_DROP, UNLABELABLE_PASS, UNLABELABLE_POLICE,
};
use csfq_dp::flow_table::{FlowTable, Lookup};
use csfq_dp::{Role, TestProgram};

const PASS: i32 = -1; // TC_ACT_UNSPEC: on to the next filter / the qdisc
const SHOT: i32 = 2; // TC_ACT_SHOT

fn edge(k_ns: u64) -> TestProgram {
    let mut p = TestProgram::load(Role::Edge).expect("load edge");
    p.set_edge_config(&EdgeConfigRaw {
        k_ns,
        default_weight_milli: 1000,
        test_mode: 1,
        ..Default::default()
    })
    .unwrap();
    p
}

fn edge_at(p: &mut TestProgram, k_ns: u64, now: u64) {
    p.set_edge_config(&EdgeConfigRaw {
        k_ns,
        default_weight_milli: 1000,
        test_mode: 1,
        test_now_ns: now,
        ..Default::default()
    })
    .unwrap();
}

/// The edge's Eq. (3) equals the model's on the shared vectors (64 packets with bursts,
/// gaps and same-instant arrivals), for IPv4 and IPv6: each packet leaves carrying
/// exactly the model's rate, encoded; the IPv4 checksum verifies; no other byte changes.
#[test]
fn edge_labels_equal_the_model_on_the_vectors() {
    if !dataplane_or_skip("edge_labels_equal_the_model_on_the_vectors") {
        return;
    }
    let lines = vectors("rate");
    assert_eq!(lines.len(), 64);
    for v6 in [false, true] {
        let k = lines[0][2];
        let mut p = edge(k);
        for (i, l) in lines.iter().enumerate() {
            let (now, bytes, rate) = (l[0], l[1] as usize, l[3]);
            edge_at(&mut p, k, now);
            let frame = if v6 {
                v6_frame(17, 0x2e, 0xabcde, 4000, bytes) // vector sizes are >= 64
            } else {
                V4 {
                    frame_len: bytes,
                    id: 0xbeef ^ i as u16, // a label from outside, to be overwritten
                    ..Default::default()
                }
                .frame()
            };
            let (ret, out) = p.run(&frame).unwrap();
            assert_eq!(ret, PASS);
            let diff = changed(&frame, &out);
            if v6 {
                let want = encode_label(&LabelCodec::FLOAT20, rate);
                assert_eq!(v6_label(&out), want, "packet {i} at {now} ns: rate {rate}");
                assert_only_flow_label_changed(&out, &diff);
            } else {
                let want = encode_label(&LabelCodec::FLOAT16, rate) as u16;
                assert_eq!(v4_id(&out), want, "packet {i} at {now} ns: rate {rate}");
                assert!(v4_checksum_ok(&out), "packet {i}: checksum");
                assert!(
                    diff.iter()
                        .all(|&b| (18..20).contains(&b) || (24..26).contains(&b)),
                    "packet {i} changed bytes {diff:?}"
                );
            }
        }
        assert_eq!(count(&p, Counter::Labeled), 64);
        assert_eq!(count(&p, Counter::NewFlow), 1);
    }
}

fn assert_only_flow_label_changed(out: &[u8], diff: &[usize]) {
    // Version and traffic class stay; only the flow label's bits may change.
    assert_eq!(out[14] >> 4, 6);
    assert_eq!(((out[14] & 0x0f) << 4) | (out[15] >> 4), 0x2e);
    assert!(
        diff.iter().all(|&b| (15..18).contains(&b)),
        "changed bytes {diff:?}"
    );
}

/// IPv6: the flow label carries the model's rate as a 20-bit float.
#[test]
fn edge_labels_ipv6_flow_label() {
    if !dataplane_or_skip("edge_labels_ipv6_flow_label") {
        return;
    }
    let k = 100_000_000;
    let mut p = edge(k);
    let mut model = FixedRate::default();
    let mut now = 1_000_000;
    for i in 0..1000u64 {
        now += 1_000_000 + (i % 7) * 37_000; // 1000-byte frames every 1.111 ms: 7.2 Mbit/s
        edge_at(&mut p, k, now);
        let frame = v6_frame(6, 0, 0x12345, 4000, 1000);
        let (ret, out) = p.run(&frame).unwrap();
        assert_eq!(ret, PASS);
        let rate = model.update(tables(), now, 1000, k);
        assert_eq!(
            v6_label(&out),
            encode_label(&LabelCodec::FLOAT20, rate),
            "packet {i}"
        );
        assert_eq!(out[14] >> 4, 6, "packet {i}: version");
    }
    let last = decode_label(
        &LabelCodec::FLOAT20,
        v6_label(&p.run(&v6_frame(6, 0, 0, 4000, 1000)).unwrap().1),
    );
    assert!((6.9e6..7.5e6).contains(&(last as f64)), "rate {last}");
}

/// Traffic the edge does not label passes untouched and is counted: IPv4 without DF,
/// fragments, non-IP, truncated headers. ICMP with DF is labeled (keyed by addresses).
#[test]
fn edge_passes_what_it_cannot_label() {
    if !dataplane_or_skip("edge_passes_what_it_cannot_label") {
        return;
    }
    let mut p = edge(100_000_000);
    edge_at(&mut p, 100_000_000, 5_000_000);
    let cases: Vec<(&str, Vec<u8>, Counter)> = vec![
        (
            "no DF",
            V4 {
                frag: 0,
                ..Default::default()
            }
            .frame(),
            Counter::PassNotAtomic,
        ),
        (
            "first fragment",
            V4 {
                frag: 0x2000,
                ..Default::default()
            }
            .frame(),
            Counter::PassNotAtomic,
        ),
        (
            "later fragment",
            V4 {
                frag: 0x00b9,
                ..Default::default()
            }
            .frame(),
            Counter::PassNotAtomic,
        ),
        ("ARP", arp_frame(), Counter::PassNotIp),
        (
            "IPv4 without its ports",
            V4::default().frame()[..34].to_vec(),
            Counter::PassTruncated,
        ),
        (
            "IPv6 without its ports",
            v6_frame(17, 0, 0, 1, 100)[..54].to_vec(),
            Counter::PassTruncated,
        ),
    ];
    for (name, frame, counter) in &cases {
        let before = count(&p, *counter);
        let (ret, out) = p.run(frame).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(ret, PASS, "{name}");
        assert_eq!(&out, frame, "{name}: changed");
        assert_eq!(
            count(&p, *counter),
            before + 1,
            "{name}: counter {counter:?}"
        );
    }
    assert_eq!(count(&p, Counter::Labeled), 0);
    // ICMP with DF: labeled (first packet of its flow: rate 0, code 0), checksum fixed.
    let icmp = V4 {
        proto: 1,
        id: 0x7777,
        ..Default::default()
    }
    .frame();
    let (_, out) = p.run(&icmp).unwrap();
    assert_eq!(v4_id(&out), 0);
    assert!(v4_checksum_ok(&out));
    assert_eq!(count(&p, Counter::Labeled), 1);
}

/// The operator's choice for IPv4 that cannot carry a label: policed, the edge passes and
/// drops exactly as the model's token bucket (`csfq_algo::policer`) on the shared vectors,
/// for packets without DF and fragments alike, leaving what it passes untouched; `drop`
/// drops all of it; labelable packets are never policed.
#[test]
fn edge_polices_or_drops_what_cannot_carry_a_label() {
    if !dataplane_or_skip("edge_polices_or_drops_what_cannot_carry_a_label") {
        return;
    }
    let lines = vectors("police");
    assert_eq!(lines.len(), 64);
    let (rate, burst) = (lines[0][2], lines[0][3] as u32);
    let cfg = |now: u64, unlabelable: u32| EdgeConfigRaw {
        k_ns: 100_000_000,
        default_weight_milli: 1000,
        test_mode: 1,
        test_now_ns: now,
        police_rate_bps: rate,
        police_burst_bytes: burst,
        unlabelable,
        ..Default::default()
    };
    let mut p = TestProgram::load(Role::Edge).expect("load edge");
    let (mut passed, mut dropped) = (0, 0);
    for (i, v) in lines.iter().enumerate() {
        let (now, bytes, pass) = (v[0], v[1] as usize, v[4] == 1);
        p.set_edge_config(&cfg(now, UNLABELABLE_POLICE)).unwrap();
        let frame = V4 {
            frag: if i % 3 == 0 { 0x2000 } else { 0 }, // a first fragment, or no DF
            sport: 1000 + i as u16, // many flows: the bucket is one for all of them
            frame_len: bytes,
            ..Default::default()
        }
        .frame();
        let (ret, out) = p.run(&frame).unwrap();
        assert_eq!(ret, if pass { PASS } else { SHOT }, "packet {i}: {v:?}");
        assert_eq!(out, frame, "packet {i}: changed");
        if pass {
            passed += 1;
        } else {
            dropped += 1;
        }
        // A labelable packet at the same instant is labeled, and takes no credit.
        let (ret, _) = p.run(&V4::default().frame()).unwrap();
        assert_eq!(ret, PASS);
    }
    assert!(
        dropped > 0 && passed > 0,
        "the vectors exercise both verdicts"
    );
    assert_eq!(count(&p, Counter::DropPoliced), dropped);
    assert_eq!(count(&p, Counter::PassNotAtomic), passed);
    assert_eq!(count(&p, Counter::Labeled), 64);

    p.set_edge_config(&cfg(1, UNLABELABLE_DROP)).unwrap();
    let no_df = V4 {
        frag: 0,
        ..Default::default()
    }
    .frame();
    assert_eq!(p.run(&no_df).unwrap().0, SHOT);
    assert_eq!(count(&p, Counter::DropPoliced), dropped + 1);
    p.set_edge_config(&cfg(1, UNLABELABLE_PASS)).unwrap();
    assert_eq!(p.run(&no_df).unwrap().0, PASS);
    assert_eq!(count(&p, Counter::PassNotAtomic), passed + 1);
}

/// What makes a flow, as the operator chooses: one host sending over two ports to two
/// hosts is four flows by 5-tuple, two by host pair, one by source. Each packet carries
/// exactly the label of the model's edge (`FixedEdge`) fed with that key's flows.
#[test]
fn edge_flow_keys() {
    if !dataplane_or_skip("edge_flow_keys") {
        return;
    }
    let k = 100_000_000;
    for (key, flows_of) in [
        (KEY_FIVE_TUPLE, [0u32, 1, 2, 3]),
        (KEY_HOST_PAIR, [0, 0, 1, 1]),
        (KEY_SOURCE, [0, 0, 0, 0]),
    ] {
        let mut p = TestProgram::load(Role::Edge).expect("load edge");
        let mut model = FixedEdge::new(csfq_algo::Nanos(k));
        let mut now = 1_000_000;
        for i in 0..400usize {
            now += 250_000 + (i as u64 % 5) * 10_000;
            p.set_edge_config(&EdgeConfigRaw {
                k_ns: k,
                default_weight_milli: 1000,
                test_mode: 1,
                test_now_ns: now,
                flow_key: key,
                ..Default::default()
            })
            .unwrap();
            // (dst, sport) in the order host x port: flows 0..4 by 5-tuple.
            let which = i % 4;
            let frame = V4 {
                dst: [10, 0, 2, 1 + (which / 2) as u8],
                sport: 4000 + (which % 2) as u16,
                frame_len: 700 + (i % 3) * 100,
                ..Default::default()
            }
            .frame();
            let (ret, out) = p.run(&frame).unwrap();
            assert_eq!(ret, PASS);
            let rate = model.estimate(csfq_algo::FlowId(flows_of[which]), now, frame.len() as u32);
            assert_eq!(
                v4_id(&out),
                encode_label(&LabelCodec::FLOAT16, rate) as u16,
                "key {key}, packet {i}"
            );
        }
        let distinct = flows_of.iter().collect::<std::collections::BTreeSet<_>>();
        assert_eq!(
            count(&p, Counter::NewFlow),
            distinct.len() as u64,
            "key {key}"
        );
    }
}

/// With a source filter, a packet from an accepted prefix is labeled and one from any
/// other source is dropped and counted as `drop_source`, an IPv4 fragment too (it has no
/// room for a label but has a source); without the filter both pass.
#[test]
fn edge_drops_sources_outside_the_accepted_prefixes() {
    if !dataplane_or_skip("edge_drops_sources_outside_the_accepted_prefixes") {
        return;
    }
    let mut p = TestProgram::load(Role::Edge).expect("load edge");
    let config = |filter: u32| EdgeConfigRaw {
        k_ns: 100_000_000,
        default_weight_milli: 1000,
        test_mode: 1,
        test_now_ns: 1_000_000,
        source_filter: filter,
        ..Default::default()
    };
    p.set_edge_config(&config(1)).unwrap();
    let mut addr = [0u8; 16];
    addr[10] = 0xff;
    addr[11] = 0xff;
    addr[12..].copy_from_slice(&[10, 0, 1, 0]);
    p.allow_source(WeightKey {
        prefixlen: 96 + 24,
        addr,
    })
    .unwrap();
    let from = |src: [u8; 4]| {
        V4 {
            src,
            ..Default::default()
        }
        .frame()
    };
    assert_eq!(p.run(&from([10, 0, 1, 7])).unwrap().0, PASS);
    assert_eq!(count(&p, Counter::Labeled), 1);
    assert_eq!(p.run(&from([10, 0, 2, 7])).unwrap().0, SHOT);
    let fragment = V4 {
        src: [192, 0, 2, 1],
        frag: 0x2000, // more fragments, no DF
        ..Default::default()
    }
    .frame();
    assert_eq!(p.run(&fragment).unwrap().0, SHOT);
    assert_eq!(count(&p, Counter::DropSource), 2);
    assert_eq!(count(&p, Counter::Labeled), 1);
    p.set_edge_config(&config(0)).unwrap();
    assert_eq!(p.run(&from([10, 0, 2, 7])).unwrap().0, PASS);
    assert_eq!(count(&p, Counter::DropSource), 2);
    assert_eq!(count(&p, Counter::Labeled), 2);
}

/// Weighted CSFQ: a flow in a class of weight 2 carries half its rate as its label.
#[test]
fn edge_weight_classes() {
    if !dataplane_or_skip("edge_weight_classes") {
        return;
    }
    let k = 100_000_000;
    let mut p = edge(k);
    let mut addr = [0u8; 16];
    addr[10] = 0xff;
    addr[11] = 0xff;
    addr[12..].copy_from_slice(&[10, 0, 1, 0]);
    p.add_weight(
        WeightKey {
            prefixlen: 96 + 24,
            addr,
        },
        2000,
    )
    .unwrap();
    let (mut heavy, mut plain) = (FixedRate::default(), FixedRate::default());
    let mut now = 1_000_000;
    for i in 0..100 {
        now += 800_000;
        edge_at(&mut p, k, now);
        let a = V4 {
            src: [10, 0, 1, 7],
            ..Default::default()
        }
        .frame();
        let b = V4 {
            src: [10, 0, 9, 7],
            ..Default::default()
        }
        .frame();
        let (ra, rb) = (
            heavy.update(tables(), now, 1000, k),
            plain.update(tables(), now, 1000, k),
        );
        assert_eq!(
            v4_id(&p.run(&a).unwrap().1),
            encode_label(&LabelCodec::FLOAT16, ra * 1000 / 2000) as u16,
            "{i}"
        );
        assert_eq!(
            v4_id(&p.run(&b).unwrap().1),
            encode_label(&LabelCodec::FLOAT16, rb) as u16,
            "{i}"
        );
    }
}

/// New flows are priced as one flow, as the model does: on the shared vectors (eight flows
/// with staggered starts), every packet's label equals the model's, the first packet of
/// each flow carrying the new flows' aggregate price.
#[test]
fn edge_prices_new_flows_as_the_model_on_the_vectors() {
    if !dataplane_or_skip("edge_prices_new_flows_as_the_model_on_the_vectors") {
        return;
    }
    let lines = vectors("edge");
    assert_eq!(lines.len(), 96);
    let k = lines[0][3];
    let mut p = edge(k);
    for (i, l) in lines.iter().enumerate() {
        let (now, flow, bytes, rate) = (l[0], l[1] as u16, l[2] as usize, l[4]);
        edge_at(&mut p, k, now);
        let frame = V4 {
            sport: 4000 + flow,
            frame_len: bytes.max(60),
            ..Default::default()
        }
        .frame();
        assert!(bytes >= 60, "vector sizes fit a frame");
        let (ret, out) = p.run(&frame).unwrap();
        assert_eq!(ret, PASS);
        let want = encode_label(&LabelCodec::FLOAT16, rate) as u16;
        assert_eq!(
            v4_id(&out),
            want,
            "packet {i} (flow {flow}) at {now} ns: rate {rate}"
        );
    }
    assert_eq!(count(&p, Counter::NewFlow), 8);
}

/// More flows than the table holds, round robin (each evicted before it returns): every
/// packet arrives as a new flow and is priced at the new flows' aggregate rate, 80 Mbit/s
/// here, never at 0 or at one flow's 1.25 Mbit/s (which a reset estimate would give, and
/// which the core would pass almost free).
#[test]
fn edge_prices_flows_churning_through_a_full_table() {
    if !dataplane_or_skip("edge_prices_flows_churning_through_a_full_table") {
        return;
    }
    let mut p = TestProgram::load_edge(16).unwrap();
    let k = 100_000_000;
    let mut model = FixedRate::default();
    let mut lowest_after_warmup = u64::MAX;
    for i in 0..5000u64 {
        let now = 1_000 + i * 100_000; // 1000 bytes every 100 us: 80 Mbit/s in all
        edge_at(&mut p, k, now);
        let frame = V4 {
            sport: 10_000 + (i % 64) as u16,
            frame_len: 1000,
            ..Default::default()
        }
        .frame();
        let (ret, out) = p.run(&frame).unwrap();
        assert_eq!(ret, PASS);
        let label = decode_label(&LabelCodec::FLOAT16, v4_id(&out) as u32);
        let aggregate = model.update(tables(), now, 1000, k);
        if now > 3 * k {
            lowest_after_warmup = lowest_after_warmup.min(label);
            assert!(aggregate > 75_000_000, "{aggregate}");
        }
    }
    let new = count(&p, Counter::NewFlow);
    assert!(new > 4000, "the table churns: {new} new of 5000");
    assert!(
        lowest_after_warmup > 40_000_000,
        "lowest label after 3 K: {lowest_after_warmup} bit/s"
    );
}

/// The flow table keeps each packet's flow where its model (`csfq_dp::flow_table`) does:
/// 3000 packets of 150 flows (a busy ten and a long tail), in a random order, about four
/// to an instant (so the least recently seen often tie), through a table of 64 entries (16
/// sets of 4) under two seeds, and of 66 entries (rounded up to 68: 17 sets) keyed by
/// source: each packet makes a new flow, and evicts one, exactly when the model's does,
/// and every entry holds the model's flow.
#[test]
fn edge_flow_table_is_its_model() {
    if !dataplane_or_skip("edge_flow_table_is_its_model") {
        return;
    }
    for (entries, seed, flow_key) in [
        (64, 0, KEY_FIVE_TUPLE),
        (64, 0x5eed_0fca_11ab_1e00, KEY_FIVE_TUPLE),
        (66, 7, KEY_SOURCE),
    ] {
        let mut p = TestProgram::load_edge_seeded(entries, seed).unwrap();
        let mut model = FlowTable::new(entries, seed);
        // A 64-bit LCG (Knuth's MMIX constants): the same packets on every run.
        let mut x = seed ^ 0x2545_f491_4f6c_dd1d;
        let mut draw = |n: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % n
        };
        let (mut now, mut new, mut evicted) = (1_000u64, 0u64, 0u64);
        for i in 0..3000 {
            // A tick every fourth packet or so: flows last seen at one instant tie.
            now += if draw(4) == 0 { 1_000 } else { 0 };
            let flow = if draw(10) < 7 {
                draw(10)
            } else {
                10 + draw(140)
            };
            let v = V4 {
                sport: 20_000 + (flow % 50) as u16,
                src: [10, 0, 1 + (flow / 50) as u8, 1 + (flow % 50) as u8],
                ..Default::default()
            };
            p.set_edge_config(&EdgeConfigRaw {
                k_ns: 100_000_000,
                default_weight_milli: 1000,
                flow_key,
                test_mode: 1,
                test_now_ns: now,
                ..Default::default()
            })
            .unwrap();
            assert_eq!(p.run(&v.frame()).unwrap().0, PASS);
            let key = if flow_key == KEY_SOURCE {
                FlowKeyRaw {
                    family: 4,
                    saddr: [u32::from_ne_bytes(v.src), 0, 0, 0],
                    ..Default::default()
                }
            } else {
                key_v4(&v, true)
            };
            match model.packet(&key, now) {
                Lookup::Found => {}
                Lookup::Entered => new += 1,
                Lookup::Evicted(_) => (new, evicted) = (new + 1, evicted + 1),
            }
            assert_eq!(
                (count(&p, Counter::NewFlow), count(&p, Counter::Evicted)),
                (new, evicted),
                "{entries} entries, seed {seed:#x}, packet {i} (flow {flow} at {now} ns)"
            );
            if i % 10 == 0 {
                assert_eq!(p.edge_flows().unwrap(), model.flows(), "packet {i}");
            }
        }
        assert_eq!(p.edge_flows().unwrap(), model.flows());
        assert_eq!(
            p.edge_flows().unwrap().len(),
            entries.div_ceil(4) as usize * 4
        );
        assert_eq!(new - evicted, model.len() as u64);
        // The tail (about 900 packets of 140 flows) churns through the full sets: the
        // test exercises eviction, not only entry.
        assert!(evicted > 300, "seed {seed:#x}: {evicted} evictions");
    }
}

/// A full flow table evicts a flow for each new one and never refuses a packet: 200 flows
/// through 16 entries fill every entry and evict 184.
#[test]
fn edge_full_flow_table_evicts() {
    if !dataplane_or_skip("edge_full_flow_table_evicts") {
        return;
    }
    let mut p = TestProgram::load_edge(16).unwrap();
    for i in 0..200u16 {
        p.set_edge_config(&EdgeConfigRaw {
            k_ns: 100_000_000,
            default_weight_milli: 1000,
            test_mode: 1,
            test_now_ns: 1_000 + i as u64,
            ..Default::default()
        })
        .unwrap();
        let f = V4 {
            sport: 10_000 + i,
            ..Default::default()
        }
        .frame();
        assert_eq!(p.run(&f).unwrap().0, PASS);
    }
    assert_eq!(count(&p, Counter::Labeled), 200);
    assert_eq!(count(&p, Counter::NewFlow), 200);
    assert_eq!(count(&p, Counter::WriteFailed), 0);
    let held = p.edge_flows().unwrap();
    assert_eq!((held.len(), held.iter().flatten().count()), (16, 16));
    assert_eq!(count(&p, Counter::Evicted), 184);
}

fn core_config(now: u64, draw: u32, queue: u32) -> CoreConfigRaw {
    core_config_with(EST_PAPER, now, draw, queue)
}

fn core_config_with(estimator: u32, now: u64, draw: u32, queue: u32) -> CoreConfigRaw {
    CoreConfigRaw {
        capacity_bps: 10_000_000,
        k_alpha_ns: 100_000_000,
        k_c_ns: 100_000_000,
        threshold_bytes: 32_000,
        limit_bytes: u32::MAX,
        overflow_budget: 29,
        test_mode: 1,
        test_now_ns: now,
        test_draw: draw,
        test_queue_bytes: queue,
        estimator,
        ..Default::default()
    }
}

/// The core equals the model on the shared vectors, with the paper's estimator and with
/// the label histogram: 1500 packets of two flows (one at several times the fair share)
/// and unlabeled packets through a 10 Mbit/s link: the same drops, the same relabels, and
/// the same alpha after every packet.
#[test]
fn core_equals_the_model_on_the_vectors() {
    if !dataplane_or_skip("core_equals_the_model_on_the_vectors") {
        return;
    }
    replay_core_vectors("core", EST_PAPER);
}

#[test]
fn core_histogram_equals_the_model_on_the_vectors() {
    if !dataplane_or_skip("core_histogram_equals_the_model_on_the_vectors") {
        return;
    }
    replay_core_vectors("hcore", EST_HISTOGRAM);
}

/// IPv4 that cannot carry a label (no DF) is judged exactly as unlabeled traffic: the
/// vectors again, with every unlabeled packet sent without DF. The same drops and the
/// same alpha after every packet; such a packet is never rewritten (where the model
/// relabels an unlabeled packet, it passes as it came). Before, all of them passed
/// unpriced and uncounted: a sender clearing DF escaped the core.
#[test]
fn core_judges_packets_without_df_as_unlabeled() {
    if !dataplane_or_skip("core_judges_packets_without_df_as_unlabeled") {
        return;
    }
    replay_core_vectors_with("core", EST_PAPER, true, false);
    replay_core_vectors_with("hcore", EST_HISTOGRAM, true, false);
}

/// A label counts only on packets received on a trusted interface. From any other, the core
/// judges a packet as the trusting core judges the same packet unlabeled: the same verdict,
/// the same `alpha`, the same frame out (the forged label overwritten as an unlabeled
/// packet's would be), and counts it `untrusted`. From a trusted interface it judges the
/// label as the trusting core does. Checked step by step on the shared vectors' labels,
/// clocks and draws.
#[test]
fn core_believes_labels_only_from_trusted_interfaces() {
    if !dataplane_or_skip("core_believes_labels_only_from_trusted_interfaces") {
        return;
    }
    let lines = raw_vectors("hcore");
    let mut trusted = [0u32; MAX_TRUSTED];
    trusted[..2].copy_from_slice(&[7, 12]);
    for (from, is_trusted) in [(9u32, false), (12, true)] {
        let mut listed = TestProgram::load(Role::Core).unwrap();
        let mut any = TestProgram::load(Role::Core).unwrap();
        let mut q_in = 0u32;
        let (mut drops, mut forged) = (0, 0);
        for (i, l) in lines.iter().enumerate() {
            let num = |k: usize| -> u64 { l[k].parse().expect("number") };
            let (now, bytes, label, q_after, draw) = (
                num(0),
                num(1) as usize,
                num(2),
                num(3) as u32,
                num(4) as u32,
            );
            let base = core_config_with(EST_HISTOGRAM, now, draw, q_in);
            listed
                .set_core_config(&CoreConfigRaw {
                    trust: TRUST_LISTED,
                    trusted,
                    ..base
                })
                .unwrap();
            any.set_core_config(&base).unwrap();
            let code = encode_label(&LabelCodec::FLOAT16, label) as u16;
            let frame = |id| {
                V4 {
                    id,
                    frame_len: bytes,
                    ..Default::default()
                }
                .frame()
            };
            let (ret, out) = listed.run_from(&frame(code), from).unwrap();
            let want = any.run(&frame(if is_trusted { code } else { 0 })).unwrap();
            assert_eq!(ret, want.0, "from {from}, packet {i}");
            if ret == PASS {
                assert_eq!(out, want.1, "from {from}, packet {i}");
                assert!(v4_checksum_ok(&out), "from {from}, packet {i}: checksum");
            }
            assert_eq!(
                listed.core_state().unwrap().alpha_bps,
                any.core_state().unwrap().alpha_bps,
                "from {from}, packet {i}: alpha"
            );
            drops += u32::from(ret == SHOT);
            forged += u32::from(code != 0 && ret == PASS && v4_id(&out) != code);
            q_in = q_after;
        }
        let untrusted = count(&listed, Counter::Untrusted);
        if is_trusted {
            assert_eq!(untrusted, 0);
        } else {
            assert_eq!(untrusted, lines.len() as u64);
            assert!(
                drops > 100 && forged > 100,
                "the vectors exercise drops ({drops}) and overwritten labels ({forged})"
            );
        }
    }
}

/// IPv6 too: a flow label from an untrusted interface is not believed. Uncongested (no
/// drops), a forged label of 1 (about 1 kbit/s) leaves as label 0 with the traffic class
/// and the rest of the frame untouched, and is counted untrusted; the same packet from
/// a trusted interface keeps its label.
#[test]
fn core_overwrites_untrusted_ipv6_flow_labels() {
    if !dataplane_or_skip("core_overwrites_untrusted_ipv6_flow_labels") {
        return;
    }
    let mut p = TestProgram::load(Role::Core).unwrap();
    let mut trusted = [0u32; MAX_TRUSTED];
    trusted[0] = 7;
    p.set_core_config(&CoreConfigRaw {
        trust: TRUST_LISTED,
        trusted,
        ..core_config_with(EST_HISTOGRAM, 1_000_000, 0, 0)
    })
    .unwrap();
    let frame = v6_frame(17, 0x2e, 1, 4000, 1000);
    let (ret, out) = p.run_from(&frame, 9).unwrap();
    assert_eq!(ret, PASS);
    assert_eq!(v6_label(&out), 0, "the forged label is overwritten");
    assert_eq!(
        changed(&frame, &out),
        [17],
        "only the flow label's last byte"
    );
    assert_eq!(count(&p, Counter::Untrusted), 1);
    let (ret, out) = p.run_from(&frame, 7).unwrap();
    assert_eq!((ret, v6_label(&out)), (PASS, 1), "from a trusted interface");
    assert_eq!(count(&p, Counter::Untrusted), 1);
}

/// The coarse clock (the kernel's tick counter, `CSFQ_CLOCK_COARSE`) is on the fine clock's
/// scale: the time the core reads with it, seen through the virtual queue it starts (an
/// accepted packet onto an empty queue ends `now` plus its time at `C`), is within a tick
/// of `CLOCK_MONOTONIC` read around each run (allowed one tick more, for a tick whose
/// update of jiffies runs late), over runs 10 ms apart that cross several ticks.
#[test]
fn core_coarse_clock_is_within_a_tick_of_the_fine_clock() {
    if !dataplane_or_skip("core_coarse_clock_is_within_a_tick_of_the_fine_clock") {
        return;
    }
    let tick = csfq_dp::tick_ns();
    assert!(tick >= 1_000_000, "a tick of {tick} ns: HZ above 1000?");
    let mut p = TestProgram::load(Role::Core).unwrap();
    p.set_core_config(&CoreConfigRaw {
        test_mode: 0,
        limit_bytes: 64_000,
        clock: CLOCK_COARSE,
        tick_ns: tick,
        ..core_config_with(EST_HISTOGRAM, 0, 0, 0)
    })
    .unwrap();
    // 1000 bytes at 10 Mbit/s.
    let svc = 800_000;
    let frame = V4::default().frame();
    for _ in 0..8 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        let before = monotonic_ns();
        let (ret, _) = p.run(&frame).unwrap();
        let after = monotonic_ns();
        assert_eq!(ret, PASS);
        let now = p.core_state().unwrap().vq_finish_ns - svc;
        assert!(
            now + 2 * tick > before && now < after + 2 * tick,
            "coarse {now} against fine {before}..{after}, tick {tick}"
        );
    }
}

fn replay_core_vectors(kind: &str, estimator: u32) {
    replay_core_vectors_with(kind, estimator, false, false);
}

/// The histogram estimator keeps its window per CPU and merges the CPUs' lanes when a
/// window ends: the vectors replayed with the packets spread over two CPUs, in runs of 1 to
/// 8 packets on each, so that windows end on either and each window's packets are in
/// both lanes, give the same drops, relabels and alpha as on one (as the model's lanes,
/// `fixed::tests::lanes_change_nothing`).
#[test]
fn core_histogram_merges_its_cpus_lanes_exactly() {
    if !dataplane_or_skip("core_histogram_merges_its_cpus_lanes_exactly") {
        return;
    }
    if allowed_cpus().len() < 2 {
        eprintln!("skipped core_histogram_merges_its_cpus_lanes_exactly: one CPU allowed");
        return;
    }
    replay_core_vectors_with("hcore", EST_HISTOGRAM, false, true);
}

fn replay_core_vectors_with(
    kind: &str,
    estimator: u32,
    unlabeled_without_df: bool,
    two_cpus: bool,
) {
    let lines = raw_vectors(kind);
    assert_eq!(lines.len(), 1500);
    let mut p = TestProgram::load(Role::Core).unwrap();
    let mut q_in = 0u32;
    let (mut drops, mut relabels, mut unlabeled, mut unlabeled_in) = (0, 0, 0, 0);
    let mut spread = TwoCpus::new(two_cpus);
    for (i, l) in lines.iter().enumerate() {
        spread.before(i);
        let num = |k: usize| -> u64 { l[k].parse().expect("number") };
        let (now, bytes, label, q_after, draw, alpha) = (
            num(0),
            num(1) as usize,
            num(2),
            num(3) as u32,
            num(4) as u32,
            num(6),
        );
        p.set_core_config(&core_config_with(estimator, now, draw, q_in))
            .unwrap();
        let code = encode_label(&LabelCodec::FLOAT16, label) as u16;
        assert_eq!(
            decode_label(&LabelCodec::FLOAT16, code as u32),
            label,
            "vector labels are carried values"
        );
        let no_df = unlabeled_without_df && code == 0;
        let frame = V4 {
            id: code,
            frame_len: bytes,
            frag: if no_df { 0 } else { 0x4000 },
            ..Default::default()
        }
        .frame();
        let (ret, out) = p.run(&frame).unwrap();
        if code == 0 {
            unlabeled_in += 1;
        }
        if l[5] == "drop" {
            assert_eq!(ret, SHOT, "{kind} {i} at {now}: the model drops it");
            drops += 1;
        } else if no_df {
            assert_eq!(ret, PASS, "{kind} {i} at {now}: the model forwards it");
            assert_eq!(
                out, frame,
                "{kind} {i}: a packet without DF is never rewritten"
            );
            unlabeled += 1;
        } else {
            assert_eq!(ret, PASS, "{kind} {i} at {now}: the model forwards it");
            let want = encode_label(&LabelCodec::FLOAT16, num(5)) as u16;
            assert_eq!(v4_id(&out), want, "{kind} {i}: label");
            assert!(v4_checksum_ok(&out), "{kind} {i}: checksum");
            if want != code {
                relabels += 1; // unlabeled packets priced above alpha too
            } else if code == 0 {
                unlabeled += 1;
            }
        }
        assert_eq!(
            p.core_state().unwrap().alpha_bps,
            alpha,
            "{kind} {i} at {now}: alpha"
        );
        q_in = q_after;
    }
    assert!(
        !two_cpus || (600..900).contains(&spread.on_second),
        "{} of 1500 packets on the second CPU",
        spread.on_second
    );
    assert!(
        drops > 100 && relabels > 100 && unlabeled_in > 100 && unlabeled > 10,
        "the vectors exercise all three: {drops} drops, {relabels} relabels, {unlabeled_in} \
         unlabeled ({unlabeled} passed as they came)"
    );
    assert_eq!(count(&p, Counter::DropProbabilistic), drops);
    assert_eq!(count(&p, Counter::Relabeled), relabels);
    let passed = if unlabeled_without_df {
        Counter::PassNotAtomic
    } else {
        Counter::PassUnlabeled
    };
    assert_eq!(count(&p, passed), unlabeled);
}

/// Unlabeled (label 0), non-atomic and non-IP packets pass the core untouched (label 0
/// is counted in the estimates: the vectors test that). (A truncated
/// IP header cannot be fed to it: BPF_PROG_TEST_RUN refuses one; the edge's tests cover the
/// shared parser's truncation paths.)
#[test]
fn core_passes_what_it_cannot_read() {
    if !dataplane_or_skip("core_passes_what_it_cannot_read") {
        return;
    }
    let mut p = TestProgram::load(Role::Core).unwrap();
    p.set_core_config(&core_config(1_000_000, 0, 0)).unwrap();
    let cases: Vec<(&str, Vec<u8>, Counter)> = vec![
        (
            "label 0",
            V4 {
                id: 0,
                ..Default::default()
            }
            .frame(),
            Counter::PassUnlabeled,
        ),
        (
            "no DF",
            V4 {
                frag: 0,
                ..Default::default()
            }
            .frame(),
            Counter::PassNotAtomic,
        ),
        (
            "fragment",
            V4 {
                frag: 0x6000,
                ..Default::default()
            }
            .frame(),
            Counter::PassNotAtomic,
        ),
        ("ARP", arp_frame(), Counter::PassNotIp),
        (
            "IPv4 ethertype, version 6",
            bad_version(),
            Counter::PassNotIp,
        ),
    ];
    for (name, frame, counter) in &cases {
        let before = count(&p, *counter);
        let (ret, out) = p.run(frame).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(ret, PASS, "{name}");
        assert_eq!(&out, frame, "{name}");
        assert_eq!(count(&p, *counter), before + 1, "{name}");
    }
}

fn bad_version() -> Vec<u8> {
    let mut f = V4 {
        id: 0x4321,
        ..Default::default()
    }
    .frame();
    f[14] = 0x65;
    f
}

/// A 10 Mbit/s core outside test mode (the real clock) with a 16 KB virtual queue.
fn core_with_a_16_kb_queue() -> TestProgram {
    let mut p = TestProgram::load(Role::Core).unwrap();
    let mut c = core_config(0, 0, 0);
    c.test_mode = 0;
    c.limit_bytes = 16_000;
    c.threshold_bytes = 8_000;
    p.set_core_config(&c).unwrap();
    p
}

/// Outside test mode the virtual queue at rate C fills: a burst of 1000-byte packets at
/// line rate into a 10 Mbit/s core with a 16 KB limit overflows after 16 packets.
#[test]
fn core_virtual_queue_overflows() {
    if !dataplane_or_skip("core_virtual_queue_overflows") {
        return;
    }
    let p = core_with_a_16_kb_queue();
    // A burst takes microseconds here, against 800 us per packet at C.
    let frame = V4 {
        id: encode_label(&LabelCodec::FLOAT16, 1_000_000) as u16,
        ..Default::default()
    }
    .frame();
    let mut verdicts = Vec::new();
    for _ in 0..20 {
        verdicts.push(p.run(&frame).unwrap().0);
    }
    assert!(verdicts[..16].iter().all(|&v| v == PASS), "{verdicts:?}");
    assert!(verdicts[16..].iter().all(|&v| v == SHOT), "{verdicts:?}");
    assert_eq!(count(&p, Counter::DropOverflow), 4);
}

/// Unknown is never free: frames the core cannot parse (here QinQ, ethertype 0x88a8, on
/// a bridged bottleneck) are unlabeled traffic in its virtual queue, so a burst of them
/// at line rate into a 10 Mbit/s core with a 16 KB limit has at most 16 pass and the rest
/// dropped, where all used to pass uncounted; those that pass are counted as
/// `pass_not_ip` and leave unchanged. ARP alone is spared.
#[test]
fn core_counts_what_it_cannot_parse_as_unlabeled_traffic() {
    if !dataplane_or_skip("core_counts_what_it_cannot_parse_as_unlabeled_traffic") {
        return;
    }
    let p = core_with_a_16_kb_queue();
    let mut qinq = eth(0x88a8);
    qinq.resize(1000, 0x5a);
    let mut verdicts = Vec::new();
    for _ in 0..20 {
        let (v, out) = p.run(&qinq).unwrap();
        if v == PASS {
            assert_eq!(out, qinq, "passed unchanged");
        }
        verdicts.push(v);
    }
    // At most what the 16 KB virtual queue holds passes; the rest is dropped, by
    // overflow or by the price of unlabeled traffic once the queue is past its threshold.
    let passed = verdicts.iter().filter(|&&v| v == PASS).count() as u64;
    assert!(passed <= 16, "{verdicts:?}");
    assert_eq!(count(&p, Counter::PassNotIp), passed);
    assert_eq!(
        count(&p, Counter::DropOverflow) + count(&p, Counter::DropProbabilistic),
        20 - passed
    );
    // ARP is spared, the virtual queue full or not: a router must resolve its next hop.
    for _ in 0..20 {
        assert_eq!(p.run(&arp_frame()).unwrap().0, PASS);
    }
    assert_eq!(count(&p, Counter::PassNotIp), passed + 20);
}

/// Told to (`--unparsed drop`), each core (CSFQ, CS-FNE, TUF) drops what it cannot parse:
/// a QinQ frame and an IPv4 frame whose header is not version 4, counted as
/// `drop_unparsed`; ARP
/// and IPv4 that cannot carry a label (no DF), which it can parse, still pass an
/// uncongested core. By default the same frames pass it (judged as unlabeled traffic).
#[test]
fn cores_drop_what_they_cannot_parse_when_told() {
    if !dataplane_or_skip("cores_drop_what_they_cannot_parse_when_told") {
        return;
    }
    let mut qinq = eth(0x88a8);
    qinq.resize(1000, 0x5a);
    // An IPv4 ethertype whose header says version 6. (Headers cut short cannot be fed to
    // the cores: BPF_PROG_TEST_RUN refuses them; see `core_passes_what_it_cannot_read`.)
    let mut bad_version = V4::default().frame();
    bad_version[14] = 0x65;
    let no_df = V4 {
        frag: 0,
        ..Default::default()
    }
    .frame();
    type Load = fn() -> TestProgram;
    type Set = fn(&mut TestProgram, bool);
    let cores: [(&str, Load, Set); 3] = [
        (
            "core",
            || TestProgram::load(Role::Core).unwrap(),
            |p, drop| {
                let mut c = core_config(0, 0, 0);
                c.test_mode = 0;
                c.drop_unparsed = u32::from(drop);
                p.set_core_config(&c).unwrap();
            },
        ),
        (
            "csfne",
            || TestProgram::load_csfne(1).unwrap(),
            |p, drop| {
                p.set_csfne_config(&CsfneConfigRaw {
                    capacity_bps: 10_000_000,
                    k_ns: 100_000_000,
                    target_bytes: 16_000,
                    limit_bytes: 64_000,
                    ring: 4096,
                    drop_unparsed: u32::from(drop),
                    ..Default::default()
                })
                .unwrap();
            },
        ),
        (
            "tuf",
            || TestProgram::load(Role::Tuf).unwrap(),
            |p, drop| {
                p.set_tuf_config(&TufConfigRaw {
                    capacity_bps: 10_000_000,
                    window_ns: 100_000_000,
                    k_ns: 100_000_000,
                    limit_bytes: 64_000,
                    drop_unparsed: u32::from(drop),
                    ..Default::default()
                })
                .unwrap();
            },
        ),
    ];
    for (name, load, set) in cores {
        for drop in [false, true] {
            let mut p = load();
            set(&mut p, drop);
            let unparsed = if drop { SHOT } else { PASS };
            assert_eq!(p.run(&qinq).unwrap().0, unparsed, "{name}: QinQ");
            assert_eq!(
                p.run(&bad_version).unwrap().0,
                unparsed,
                "{name}: bad version"
            );
            assert_eq!(p.run(&arp_frame()).unwrap().0, PASS, "{name}: ARP");
            assert_eq!(p.run(&no_df).unwrap().0, PASS, "{name}: IPv4 without DF");
            let dropped = count(&p, Counter::DropUnparsed);
            assert_eq!(dropped, if drop { 2 } else { 0 }, "{name}");
        }
    }
}

/// Installing clang or libbpf-dev after a first build takes effect at the next build: the
/// build script watches Debian's package database (every install rewrites it; the tools'
/// own files keep old timestamps), or reruns at every build while the programs cannot be
/// built elsewhere. Read from the build script's recorded output.
#[test]
fn the_build_script_reruns_when_the_tools_may_have_changed() {
    let out_dir = std::path::Path::new(env!("OUT_DIR"));
    let output = std::fs::read_to_string(out_dir.parent().unwrap().join("output"))
        .expect("the build script's output is recorded beside OUT_DIR");
    let watches = |p: &str| {
        output
            .lines()
            .any(|l| l.ends_with(&format!("rerun-if-changed={p}")))
    };
    assert!(output.contains("rerun-if-env-changed=PATH"), "{output}");
    if std::path::Path::new("/var/lib/dpkg/status").exists() {
        assert!(watches("/var/lib/dpkg/status"), "{output}");
    } else if !csfq_dp::AVAILABLE {
        assert!(
            watches(&out_dir.join("retry").display().to_string()),
            "{output}"
        );
    }
}
