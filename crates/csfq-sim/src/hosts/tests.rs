//! Hosts alone, without an engine: what each handler asks for, in order.

use super::*;
use crate::config::{FlowSpec, LinkSpec, ScenarioBuilder};
use crate::DisciplineKind;

fn hosts(flow: FlowSpec) -> (Hosts, Topology, TcpParams) {
    let s = ScenarioBuilder::new("h", 1.0, DisciplineKind::Fifo)
        .routers(["a", "b"])
        .link(LinkSpec::new("a", "b", 10.0))
        .flow(flow)
        .build()
        .unwrap();
    let topo = Topology::build(&s).unwrap();
    let tcp = TcpParams::from(&s.tcp);
    (
        Hosts::build(&topo, tcp, s.seed, 11, Precision::DEFAULT, |_| false),
        topo,
        tcp,
    )
}

/// A CBR source's tick sends one packet and asks for the next tick one gap later (8
/// Mbit/s of 1000-byte packets: 1 ms); once stopped it asks for nothing.
#[test]
fn a_cbr_tick_sends_one_packet_then_schedules_the_next() {
    let flow = FlowSpec::udp("a", "b", 8.0)
        .jitter(0.0)
        .between_s(0.0, Some(0.5));
    let (mut h, topo, _) = hosts(flow);
    let mut out = Vec::new();
    h.source_tick(0, &topo.flows[0], Nanos(7), &mut out);
    let [Action::Send(p), Action::At(at, EventKind::Source(0))] = out[..] else {
        panic!("{out:?}");
    };
    assert_eq!((p.seq, p.size, p.kind, p.hop), (0, 1000, Kind::Data, 0));
    assert_eq!(at, Nanos(7 + 1_000_000));
    out.clear();
    h.source_tick(0, &topo.flows[0], Nanos::from_millis(500), &mut out);
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(h.flows[0].stats.sent_pkts, 1);
}

/// A TCP sender starts with its retransmission timer (at the initial RTO), then its
/// initial window of segments 0, 1, ...
#[test]
fn tcp_starts_with_its_timer_then_its_initial_window() {
    let (mut h, topo, tcp) = hosts(FlowSpec::tcp("a", "b"));
    let mut out = Vec::new();
    h.start(0, &topo.flows[0], Nanos::ZERO, &mut out);
    let iw = tcp.initial_window as usize;
    assert_eq!(out.len(), 1 + iw, "{out:?}");
    assert_eq!(out[0], Action::At(tcp.initial_rto, EventKind::Rto(0)));
    for (k, a) in out[1..].iter().enumerate() {
        let Action::Send(p) = a else { panic!("{a:?}") };
        assert_eq!((p.seq as usize, p.kind), (k, Kind::Data));
    }
    assert_eq!(h.flows[0].stats.sent_pkts, iw as u64);
}
