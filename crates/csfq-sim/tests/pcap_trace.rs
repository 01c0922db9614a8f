//! Packet traces (`csfq_sim::observe::pcap`): read back, a trace agrees with the simulator's own
//! counters, and its labels carry the rates the edge measured.

use std::collections::HashMap;
use std::path::Path;

use csfq_algo::label_codec::LabelCodec;
use csfq_sim::observe::pcap::{host_address, PcapTrace};
use csfq_sim::observe::trace::link_ports;
use csfq_sim::{Scenario, ScenarioFile, Simulation};
use etherparse::{LaxNetSlice, LaxSlicedPacket, TransportSlice};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketOption;
use pcap_file::pcapng::{Block, PcapNgReader};

/// One packet of a trace.
struct Record {
    interface: u32,
    time_ns: u128,
    flow: usize,
    tcp: bool,
    label_bps: f64,
    dropped: Option<String>,
    wire_len: u32,
}

fn read(path: &Path, flows: usize) -> (Vec<String>, Vec<Record>) {
    let mut r = PcapNgReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let by_src: HashMap<[u8; 4], usize> = (0..flows)
        .flat_map(|i| [(host_address(i, false), i), (host_address(i, true), i)])
        .collect();
    let (mut names, mut out) = (Vec::new(), Vec::new());
    while let Some(block) = r.next_block() {
        match block.unwrap() {
            Block::InterfaceDescription(idb) => names.push(format!("{:?}", idb.options)),
            Block::EnhancedPacket(epb) => {
                // Headers only: the payload is not captured.
                let p = LaxSlicedPacket::from_ip(&epb.data).unwrap();
                let Some(LaxNetSlice::Ipv4(ip)) = p.net else {
                    panic!("not IPv4")
                };
                let h = ip.header();
                assert!(h.dont_fragment() && !h.more_fragments());
                assert_eq!(h.total_len() as u32, epb.original_len);
                let dropped = epb.options.iter().find_map(|o| match o {
                    EnhancedPacketOption::Comment(c) => {
                        Some(c.strip_prefix("dropped: ").unwrap().to_string())
                    }
                    _ => None,
                });
                out.push(Record {
                    interface: epb.interface_id,
                    time_ns: epb.timestamp.as_nanos(),
                    flow: by_src[&h.source()],
                    tcp: matches!(p.transport, Some(TransportSlice::Tcp(_))),
                    label_bps: match h.identification() {
                        0 => 0.0,
                        code => LabelCodec::FLOAT16.decode(code as u32),
                    },
                    dropped,
                    wire_len: epb.original_len,
                });
            }
            _ => {}
        }
    }
    (names, out)
}

fn scenario(name: &str, duration_s: f64) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name);
    ScenarioFile::load(&path)
        .unwrap()
        .variant(|s| s.duration_s = duration_s)
        .unwrap()
}

fn traced_run(
    s: &Scenario,
    link: &str,
    file: &str,
) -> (csfq_sim::SimReport, Vec<String>, Vec<Record>) {
    let path = std::env::temp_dir().join(format!("csfq-{}-{file}", std::process::id()));
    let mut sim = Simulation::new(s).unwrap();
    let ports = link_ports(s, link).unwrap();
    let trace =
        PcapTrace::create(&path, sim.topology(), &ports, s.tcp.segment_bytes, u64::MAX).unwrap();
    sim.trace(&ports, Box::new(trace)).unwrap();
    sim.run_until(sim.end());
    let end = sim.finish_trace().unwrap();
    let report = sim.report();
    let (names, records) = read(&path, report.flows.len());
    std::fs::remove_file(&path).unwrap();
    assert_eq!(end.packets, records.len() as u64);
    assert_eq!(end.stopped_at, None);
    (report, names, records)
}

/// A size limit stops recording at a block boundary: the file stays whole (every block in
/// it reads), within one packet's block of the limit, and says when it stopped.
#[test]
fn a_trace_stops_whole_at_its_size_limit() {
    let s = scenario("csfq-fig3b.toml", 3.0);
    let path = std::env::temp_dir().join(format!("csfq-{}-limit.pcapng", std::process::id()));
    let mut sim = Simulation::new(&s).unwrap();
    let ports = link_ports(&s, "r1-r2").unwrap();
    let limit = 50_000;
    let trace =
        PcapTrace::create(&path, sim.topology(), &ports, s.tcp.segment_bytes, limit).unwrap();
    sim.trace(&ports, Box::new(trace)).unwrap();
    sim.run_until(sim.end());
    let end = sim.finish_trace().unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    let (_, records) = read(&path, 32);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(end.packets, records.len() as u64);
    let stopped = end.stopped_at.expect("3 s of fig3b is more than 50 kB");
    assert!(stopped.0 > 0 && stopped < sim.end());
    // Header and interface blocks, then whole packet blocks: at most one past the limit.
    assert!(size >= limit && size < limit + 300, "{size}");
}

#[test]
fn a_trace_holds_every_packet_the_link_sent_or_dropped() {
    // 1 UDP at 10 Mbit/s and 31 TCP on 10 Mbit/s: drops of data at r1->r2 and ACKs back.
    let s = scenario("csfq-fig3b.toml", 3.0);
    let (report, names, records) = traced_run(&s, "r1-r2", "fig3b.pcapng");
    assert_eq!(names.len(), 2);
    assert!(names[0].contains("r1->r2") && names[1].contains("r2->r1"));
    for (i, l) in report.links.iter().enumerate() {
        let sent = records
            .iter()
            .filter(|r| r.interface == i as u32 && r.dropped.is_none())
            .count() as u64;
        let dropped = records
            .iter()
            .filter(|r| r.interface == i as u32 && r.dropped.is_some())
            .count() as u64;
        assert_eq!(
            (sent, dropped),
            (l.tx_pkts, l.dropped_pkts),
            "{}->{}",
            l.from,
            l.to
        );
    }
    // Every drop of the run is at r1->r2: the trace's drops are each flow's.
    for f in &report.flows {
        let dropped = records
            .iter()
            .filter(|r| r.flow == f.flow as usize && r.interface == 0 && r.dropped.is_some())
            .count() as u64;
        assert_eq!(dropped, f.dropped_pkts, "flow {}", f.flow);
        // Flow 0 is UDP; the rest TCP, with their ACKs on the way back.
        assert!(records
            .iter()
            .filter(|r| r.flow == f.flow as usize)
            .all(|r| r.tcp == (f.flow != 0)));
    }
    // Drops carry their reasons; the times run forward and stay within the run.
    assert!(records
        .iter()
        .filter_map(|r| r.dropped.as_deref())
        .all(|d| d == "csfq_prob" || d == "overflow"));
    assert!(records.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
    assert!(records.last().unwrap().time_ns <= 3_000_000_000);
    // Data segments and ACKs have their simulated sizes.
    assert!(records
        .iter()
        .all(|r| r.wire_len == if r.interface == 0 { 1000 } else { 40 }));
}

#[test]
fn labels_in_a_trace_are_the_rates_the_edge_measured() {
    // 32 CBR flows on 10 Mbit/s, flow i at (i + 1) x 0.3125 Mbit/s. The edge labels each
    // packet with its flow's rate as it measures it; the core drops with probability
    // 1 - alpha/label and relabels what it forwards min(label, alpha) (CSFQ Section 2.3).
    // So after the estimator's first second: a dropped packet carries its flow's rate,
    // and every forwarded packet of a flow far above the fair share carries alpha. Jitter
    // and the exponential averages move an estimate by a few percent; the codec, 0.025%.
    let s = scenario("csfq-fig3a.toml", 3.0);
    let (report, _, records) = traced_run(&s, "0", "fig3a.pcapng");
    let link = &report.links[0];
    let settled = link.alpha_mbps.len() / 3;
    let alpha = link.alpha_mbps[settled..].iter().sum::<f64>() * 1e6
        / (link.alpha_mbps.len() - settled) as f64;
    let median = |flow: u32, dropped: bool| {
        let mut labels: Vec<f64> = records
            .iter()
            .filter(|r| r.flow == flow as usize && r.time_ns > 1_000_000_000)
            .filter(|r| r.dropped.is_some() == dropped)
            .map(|r| r.label_bps)
            .collect();
        labels.sort_by(f64::total_cmp);
        labels[labels.len() / 2]
    };
    for f in report.flows.iter().skip(1) {
        let offered = f.offered_mbps.unwrap() * 1e6;
        let dropped = median(f.flow, true);
        assert!(
            (dropped / offered - 1.0).abs() < 0.03,
            "flow {}: median label of drops {dropped} vs {offered} bit/s",
            f.flow
        );
        if offered > 2.0 * alpha {
            let sent = median(f.flow, false);
            assert!(
                (sent / alpha - 1.0).abs() < 0.05,
                "flow {}: median label forwarded {sent} vs alpha {alpha} bit/s",
                f.flow
            );
        }
    }
    // Each flow's first packet has no estimate yet: unlabeled, and only it.
    for f in &report.flows {
        let unlabeled = records
            .iter()
            .filter(|r| r.flow == f.flow as usize && r.label_bps == 0.0)
            .count();
        assert_eq!(unlabeled, 1, "flow {}", f.flow);
    }
}

/// A trace started halfway holds what a trace from the start holds from then on: the
/// packets already queued at the link's in-order core when it starts (its queue keeps only
/// a record of each; the trace recovers them from the wire) are recorded when they are
/// sent, with their labels.
#[test]
fn a_trace_started_halfway_records_the_packets_already_queued() {
    let s = scenario("csfq-fig3b.toml", 3.0);
    let (_, _, whole) = traced_run(&s, "r1-r2", "whole.pcapng");
    // 1 ns past 1.5 s, the core's queue busy: a packet recorded at exactly `start` would
    // be left out of the halfway trace (what has started by then is not traced).
    let start = 1_500_000_001u128;
    let path = std::env::temp_dir().join(format!("csfq-{}-half.pcapng", std::process::id()));
    let mut sim = Simulation::new(&s).unwrap();
    sim.keep_for_a_later_trace();
    let ports = link_ports(&s, "r1-r2").unwrap();
    sim.run_until(csfq_algo::Nanos(start as u64));
    let trace =
        PcapTrace::create(&path, sim.topology(), &ports, s.tcp.segment_bytes, u64::MAX).unwrap();
    sim.trace(&ports, Box::new(trace)).unwrap();
    sim.run_until(sim.end());
    let end = sim.finish_trace().unwrap();
    let (_, half) = read(&path, 32);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(end.packets, half.len() as u64);
    let key = |r: &Record| {
        (
            r.interface,
            r.time_ns,
            r.flow,
            r.label_bps.to_bits(),
            r.dropped.clone(),
            r.wire_len,
        )
    };
    let expected: Vec<_> = whole
        .iter()
        .filter(|r| r.time_ns > start)
        .map(key)
        .collect();
    let got: Vec<_> = half.iter().map(key).collect();
    assert!(expected.len() > 1000);
    let first = got.iter().zip(&expected).position(|(a, b)| a != b);
    assert_eq!(
        (got.len(), first),
        (expected.len(), None),
        "first difference: {:?}",
        first.map(|i| (&got[i], &expected[i]))
    );
}
