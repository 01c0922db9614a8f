//! The engine driven by hand over one hop: every number below is worked out from the
//! scenario by hand, packet by packet, not taken from a run.
//!
//! One link a -> b of 8 Mbit/s, 2 ms, a 1500-byte drop-tail buffer (room for one 1000-byte
//! packet besides the one on the wire), and one UDP source of exactly periodic 1000-byte
//! packets at 16 Mbit/s: packet k leaves the source at k x 0.5 ms and takes 1 ms on the
//! wire. The port sends packet 0 at once (idle), queues packet 1, and from then on holds
//! one packet while sending another: at each whole millisecond it starts the packet that
//! waited (its `TxDone` was scheduled before the source's next tick, so it runs first),
//! then takes the arriving even packet; every odd packet from 3 on finds the queue full.
//! Packet j delivered (j = 0, 1, 2, ...) arrives at (3 + j) ms: 1 ms on the wire, 2 ms
//! of propagation, after the packets before it.

use csfq_algo::Nanos;

use crate::config::{FlowSpec, LinkSpec, ScenarioBuilder};
use crate::{DisciplineKind, Simulation};

/// The link a -> b above, carrying `flow`.
fn over_one_link(flow: FlowSpec) -> Simulation {
    let s = ScenarioBuilder::new("one-hop", 0.02, DisciplineKind::Fifo)
        .routers(["a", "b"])
        .link(
            LinkSpec::new("a", "b", 8.0)
                .delay_ms(2.0)
                .buffer_bytes(1500),
        )
        .flow(flow)
        .build()
        .unwrap();
    Simulation::new(&s).unwrap()
}

fn one_hop() -> Simulation {
    over_one_link(FlowSpec::udp("a", "b", 16.0).jitter(0.0))
}

const MS: u64 = 1_000_000;

#[test]
fn the_first_packet_arrives_after_transmission_and_propagation() {
    let mut sim = one_hop();
    sim.run_until(Nanos(3 * MS - 1));
    assert_eq!(sim.delivered(), (0, 0));
    sim.run_until(Nanos(3 * MS));
    assert_eq!(sim.delivered(), (1, 1000));
    let d = sim.flow_delay(0).unwrap();
    assert_eq!(d.base, Nanos(3 * MS));
    assert_eq!(d.max_ns, 0, "the idle port sent it at once");
}

#[test]
fn a_full_buffer_drops_every_other_packet() {
    let mut sim = one_hop();
    sim.run_until(Nanos(10 * MS));
    let r = sim.report();
    let f = &r.flows[0];
    // Sent at 0, 0.5, ..., 10 ms: 21 packets. Dropped: 3, 5, ..., 19: 9. Delivered by
    // 10 ms: those arriving at 3, 4, ..., 10 ms: 8. On the wire: 14, 16, 18; queued: 20.
    assert_eq!(f.sent_pkts, 21);
    assert_eq!(f.dropped_pkts, 9);
    assert_eq!(f.drops, vec![("overflow", 9)]);
    assert_eq!(f.delivered_pkts, 8);
    assert_eq!(r.links[0].dropped_pkts, 9);
    assert_eq!(r.links[0].peak_queue_pkts, 1);
    // The link carried packets 0..=18 of those kept: 0, 1, 2, 4, ..., 18 (11).
    assert_eq!(r.links[0].tx_pkts, 11);
    // Packet 1 waited 0.5 ms, every even packet from 2 on a whole 1 ms.
    let d = sim.flow_delay(0).unwrap();
    assert_eq!(d.max_ns, MS);
    assert_eq!(
        d.sum_ns,
        MS / 2 + 6 * MS,
        "packets 1, 2, 4, 6, 8, 10, 12 delivered"
    );
}

#[test]
fn runs_are_the_same_event_for_event() {
    let (mut a, mut b) = (one_hop(), one_hop());
    for t in (1..=20).map(|ms| Nanos(ms * MS)) {
        a.run_until(t);
        b.run_until(t);
        assert_eq!((a.events(), a.delivered()), (b.events(), b.delivered()));
    }
}

/// A private hop as fast as the link before it, worked out by hand: the same link and
/// source, with access links of 8 Mbit/s and 1 ms on both sides. The sender's access port
/// sends packet k at k ms (1 ms each, the source offering two a millisecond); it reaches
/// `a` at k + 2 ms, finds the link idle (each ends as the next arrives), reaches `b` at
/// k + 5 ms and is handed to the receiver's access port, where the packet before it has
/// just ended its transmission: it is sent at once and reaches its host at k + 7 ms. So
/// the 20 ms run delivers packets 0 to 13, each 7 ms after its access port sent it; the
/// source made packet k at k x 0.5 ms, so it waited k x 0.5 ms there (13 x 0.5 = 6.5 ms at
/// most, 0.5 x (0 + 1 + ... + 13) = 45.5 ms in all) and nowhere else. (Read after the run:
/// the receiver takes each packet as it is handed on, ahead of its arrival, so what it
/// counts between events runs ahead of the clock.)
#[test]
fn a_private_hop_as_fast_as_the_link_delivers_one_hop_later() {
    let mut sim = over_one_link(FlowSpec::udp("a", "b", 16.0).jitter(0.0).access(8.0, 1.0));
    sim.run_until(sim.end());
    let d = sim.flow_delay(0).unwrap();
    assert_eq!(d.base, Nanos(7 * MS));
    assert_eq!(
        (d.queueing.total(), d.max_ns, d.sum_ns),
        (14, 13 * MS / 2, 91 * MS / 2)
    );
    let r = sim.report();
    assert_eq!(r.flows[0].delivered_pkts, 14);
    assert_eq!(
        (r.links[0].dropped_pkts, r.links[0].peak_queue_pkts),
        (0, 1)
    );
}
