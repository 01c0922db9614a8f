//! Per-packet cost of each discipline: one enqueue and one dequeue of a 1000-byte packet,
//! 32 flows interleaved, a 10 Mbps link's parameters, the queue held about half full.
//! Also the CSFQ edge (Eq. 3 estimate + label) and the label codecs.
//! Compare the disciplines as ratios to `fifo` from the same run.

use criterion::{criterion_group, criterion_main, Criterion};
use csfq_algo::ared::{Ared, AredParams};
use csfq_algo::choke::Choke;
use csfq_algo::csfne::{CsfneCore, CsfneParams, TswMeter};
use csfq_algo::csfq::{CsfqCore, CsfqEdge, CsfqParams};
use csfq_algo::drr::{Drr, DrrParams};
use csfq_algo::fifo::DropTail;
use csfq_algo::fred::{Fred, FredParams, FredVariant};
use csfq_algo::label_codec::LabelCodec;
use csfq_algo::las::Las;
use csfq_algo::may::{May, MayParams};
use csfq_algo::red::{Red, RedParams};
use csfq_algo::tuf::{Tagged, TufParams, TufQueue, TufTagger};
use csfq_algo::{FlowId, Nanos, Packet, QueueDisc};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::hint::black_box;

#[derive(Clone, Copy)]
struct Pkt {
    flow: FlowId,
    label: f64,
}

impl Tagged for Pkt {
    fn tag(&self) -> Option<u16> {
        // The label stands in for a rate; its tag is what a TUF edge would write.
        Some(csfq_algo::tuf::tag_of_rate(self.label))
    }
}

impl Packet for Pkt {
    fn flow(&self) -> FlowId {
        self.flow
    }
    fn size_bytes(&self) -> u32 {
        1000
    }
    fn label(&self) -> f64 {
        self.label
    }
    fn set_label(&mut self, l: f64) {
        self.label = l;
    }
}

const C: f64 = 10e6;
const BUF: u32 = 64_000;

fn drive<Q: QueueDisc<Pkt>>(c: &mut Criterion, name: &str, mut q: Q) {
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let mut now = Nanos::ZERO;
    let mut i = 0u32;
    // Warm up to a standing queue.
    for _ in 0..40 {
        let flow = i % 32;
        let _ = q.enqueue(
            Pkt {
                flow: FlowId(flow),
                label: (flow + 1) as f64 * 0.3125e6,
            },
            now,
            &mut rng,
        );
        i += 1;
    }
    c.bench_function(name, |b| {
        b.iter(|| {
            now += Nanos::from_micros(800);
            let flow = i % 32;
            i = i.wrapping_add(1);
            let p = Pkt {
                flow: FlowId(flow),
                label: (flow + 1) as f64 * 0.3125e6,
            };
            black_box(q.enqueue(p, now, &mut rng));
            black_box(q.dequeue(now));
        })
    });
}

fn disciplines(c: &mut Criterion) {
    drive(c, "fifo", DropTail::<Pkt>::new(BUF));
    drive(c, "red", Red::<Pkt>::new(RedParams::new(C, BUF)));
    drive(
        c,
        "fred1",
        Fred::<Pkt>::new(FredParams::new(C, BUF, FredVariant::Fred1)),
    );
    drive(
        c,
        "fred2",
        Fred::<Pkt>::new(FredParams::new(C, BUF, FredVariant::Fred2)),
    );
    drive(c, "drr", Drr::<Pkt>::new(DrrParams::new(BUF)));
    drive(
        c,
        "csfq_core",
        CsfqCore::<Pkt>::new(CsfqParams::new(C, BUF)),
    );
    drive(
        c,
        "csfne_core",
        CsfneCore::<Pkt>::new(CsfneParams::new(C, BUF)),
    );
    drive(c, "tuf_queue", TufQueue::<Pkt>::new(TufParams::new(BUF)));
    drive(c, "choke", Choke::<Pkt>::new(RedParams::new(C, BUF)));
    drive(
        c,
        "ared",
        Ared::<Pkt>::new(AredParams::automatic(C, BUF, 1000)),
    );
    drive(c, "las", Las::<Pkt>::new(BUF));
    // MAY with every flow in its table (S0 = 1: each flow's first packet enters it), so
    // each arrival pays the table lookup and the v * delta draw.
    drive(
        c,
        "may",
        May::<Pkt>::new(MayParams {
            s0: 1.0,
            ..MayParams::new(C, BUF)
        })
        .expect("valid parameters"),
    );
}

fn edge(c: &mut Criterion) {
    let mut e = CsfqEdge::new(Nanos::from_millis(100));
    let mut now = Nanos::ZERO;
    let mut i = 0u32;
    c.bench_function("csfq_edge_label", |b| {
        b.iter(|| {
            now += Nanos::from_micros(25);
            let mut p = Pkt {
                flow: FlowId(i % 1024),
                label: 0.0,
            };
            i = i.wrapping_add(1);
            e.label(&mut p, now);
            black_box(p.label)
        })
    });
}

fn other_edges(c: &mut Criterion) {
    let mut m = TswMeter::new(Nanos::from_millis(100));
    let mut now = Nanos::ZERO;
    let mut i = 0u32;
    c.bench_function("csfne_edge_label", |b| {
        b.iter(|| {
            now += Nanos::from_micros(25);
            let mut p = Pkt {
                flow: FlowId(i % 1024),
                label: 0.0,
            };
            i = i.wrapping_add(1);
            m.label(&mut p, now);
            black_box(p.label)
        })
    });
    let mut t = TufTagger::new(Nanos::from_millis(100));
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    c.bench_function("tuf_edge_tag", |b| {
        b.iter(|| {
            now += Nanos::from_micros(25);
            let p = Pkt {
                flow: FlowId(i % 1024),
                label: 0.0,
            };
            i = i.wrapping_add(1);
            black_box(t.tag(&p, now, &mut rng))
        })
    });
}

fn codecs(c: &mut Criterion) {
    let mut r = 1.0e3;
    c.bench_function("label_float16_round_trip", |b| {
        b.iter(|| {
            r = if r > 1e12 { 1.0e3 } else { r * 1.37 };
            black_box(LabelCodec::FLOAT16.decode(LabelCodec::FLOAT16.encode(black_box(r))))
        })
    });
}

criterion_group!(benches, disciplines, edge, other_edges, codecs);
criterion_main!(benches);
