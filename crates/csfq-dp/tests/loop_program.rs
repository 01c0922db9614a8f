//! The overlay loops' programs (`bpf/loop.bpf.c`) on crafted packets with
//! `BPF_PROG_TEST_RUN`: the ingress half puts a loop's packets in its htb class and counts
//! them, leaving control messages in the class their socket gave them; the egress half
//! counts each loop's bytes and stamps each control message with the count before it,
//! which is what `csfq_algo::overlay::Egress` takes as `R(control arrives)`. Needs root:
//! skipped with the reason elsewhere (failing instead when CSFQ_DP_REQUIRED is set).

mod common;

use common::*;
use csfq_algo::overlay::Control;
use csfq_dp::abi::{LoopConfigRaw, WeightKey};
use csfq_dp::loops::Message;
use csfq_dp::{Role, TestProgram};

const PORT: u16 = 7700;

fn key_v4(a: [u8; 4], len: u32) -> WeightKey {
    let mut addr = [0u8; 16];
    addr[10] = 0xff;
    addr[11] = 0xff;
    addr[12..].copy_from_slice(&a);
    WeightKey {
        prefixlen: 96 + len,
        addr,
    }
}

/// Loop 0: 10.0.5.0/24 in class cf:10; loop 1: 10.0.6.0/24 in cf:11.
fn program(role: Role) -> TestProgram {
    let mut p = TestProgram::load(role).expect("load");
    let mut cfg = LoopConfigRaw {
        control_port: u32::from(PORT.to_be()),
        loops: 2,
        ..Default::default()
    };
    cfg.classid[0] = 0x00cf_0010;
    cfg.classid[1] = 0x00cf_0011;
    p.set_loop_config(&cfg).unwrap();
    p.add_loop_prefix(key_v4([10, 0, 5, 0], 24), 0).unwrap();
    p.add_loop_prefix(key_v4([10, 0, 6, 0], 24), 1).unwrap();
    p
}

fn data(dst: [u8; 4], frame_len: usize) -> Vec<u8> {
    V4 {
        dst,
        frame_len,
        ..Default::default()
    }
    .frame()
}

/// A control message of `loop_index` to `dst`:PORT, with UDP checksum `check`.
fn control(dst: [u8; 4], loop_index: u16, k: u64, check: u16) -> Vec<u8> {
    let msg = Message::Control {
        loop_index,
        control: Control {
            k,
            sent_bytes: 5000,
            lambda_bps: 1e6,
        },
        tau_ns: 10_000_000,
        tag: 0,
        rx_bytes: 0,
        rx_ns: 0,
    }
    .encode();
    let mut f = V4 {
        dst,
        sport: 40000,
        dport: PORT,
        frame_len: 14 + 20 + 8 + msg.len(),
        ..Default::default()
    }
    .frame();
    f[38..40].copy_from_slice(&((8 + msg.len()) as u16).to_be_bytes());
    f[40..42].copy_from_slice(&check.to_be_bytes());
    f[42..].copy_from_slice(&msg);
    f
}

fn stamps(frame: &[u8]) -> (u64, u64) {
    match Message::decode(&frame[42..]) {
        Some(Message::Control {
            rx_bytes, rx_ns, ..
        }) => (rx_bytes, rx_ns),
        other => panic!("not a control message: {other:?}"),
    }
}

#[test]
fn ingress_puts_each_loop_in_its_class_and_leaves_controls_alone() {
    if !dataplane_or_skip("ingress_puts_each_loop_in_its_class_and_leaves_controls_alone") {
        return;
    }
    let p = program(Role::LoopIngress);
    let (r, out, prio) = p.run_priority(&data([10, 0, 6, 9], 1000)).unwrap();
    assert_eq!((r, prio), (-1, 0x00cf_0011));
    assert_eq!(out, data([10, 0, 6, 9], 1000), "the packet is not changed");
    let (_, _, prio) = p.run_priority(&data([10, 0, 5, 200], 600)).unwrap();
    assert_eq!(prio, 0x00cf_0010);
    // Outside every loop: no class, not counted.
    let (_, _, prio) = p.run_priority(&data([10, 0, 7, 1], 800)).unwrap();
    assert_eq!(prio, 0);
    // A control message stays unclassified (htb's direct path) and is not data, even to
    // a loop's prefix.
    let (_, _, prio) = p.run_priority(&control([10, 0, 5, 1], 0, 3, 0)).unwrap();
    assert_eq!(prio, 0);
    let c0 = p.loop_count(0).unwrap();
    let c1 = p.loop_count(1).unwrap();
    assert_eq!((c0.packets, c0.bytes), (1, 600));
    assert_eq!((c1.packets, c1.bytes), (1, 1000));
}

#[test]
fn egress_stamps_each_control_with_the_bytes_received_before_it() {
    if !dataplane_or_skip("egress_stamps_each_control_with_the_bytes_received_before_it") {
        return;
    }
    let p = program(Role::LoopEgress);
    for _ in 0..3 {
        p.run(&data([10, 0, 5, 7], 1514)).unwrap();
    }
    p.run(&data([10, 0, 6, 7], 700)).unwrap();
    p.run(&data([10, 0, 9, 7], 900)).unwrap(); // no loop's
    let (r, out) = p.run(&control([10, 0, 3, 2], 0, 1, 0)).unwrap();
    assert_eq!(r, -1);
    let (bytes, ns) = stamps(&out);
    assert_eq!(bytes, 3 * 1514, "loop 0's bytes before the control");
    assert!(ns > 0, "the arrival time is written");
    // Only the two stamps changed.
    let before = control([10, 0, 3, 2], 0, 1, 0);
    assert!(changed(&before, &out)
        .iter()
        .all(|&i| (42 + 32..42 + 48).contains(&i)));
    let (_, out) = p.run(&control([10, 0, 3, 2], 1, 1, 0)).unwrap();
    assert_eq!(stamps(&out).0, 700, "loop 1's");
    // The control is not counted as the loop's data.
    assert_eq!(p.loop_count(0).unwrap().bytes, 3 * 1514);
    // With a UDP checksum, left as it came (a write would break it); a loop not
    // configured, and a feedback message, likewise.
    for f in [
        control([10, 0, 3, 2], 0, 2, 0xbeef),
        control([10, 0, 3, 2], 5, 2, 0),
    ] {
        assert_eq!(p.run(&f).unwrap().1, f);
    }
    let mut fb = control([10, 0, 3, 2], 0, 2, 0);
    fb[42 + 4] = 2;
    assert_eq!(p.run(&fb).unwrap().1, fb);
    // Truncated: shorter than a message.
    let short = control([10, 0, 3, 2], 0, 2, 0)[..60].to_vec();
    assert_eq!(p.run(&short).unwrap().1, short);
}
