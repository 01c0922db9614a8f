//! The overlay paper's networks (Harrison, Kalyanaraman and Ramakrishnan, Section 7),
//! generated for each point of a sweep. The paper gives capacities, buffers and the
//! controller's parameters; rates of the sources, delays and durations it leaves out are
//! ours and stated on each generator.

use csfq_sim::config::{FlowSpec, LinkSpec, LoopSpec, ScenarioBuilder, ScenarioFile};
use csfq_sim::DisciplineKind;

/// overlay-fig6's cross loops per bottleneck.
pub const LINEAR_K: u32 = 4;
/// overlay-fig6's bottleneck capacity, Mbit/s.
pub const LINEAR_C_MBPS: f64 = 100.0;
/// overlay-fig7's numbers of loops.
pub const DUMBBELL_LOOPS: [u32; 4] = [0, 2, 5, 10];
/// overlay-fig7's numbers of TCP flows.
pub const DUMBBELL_FLOWS: [u32; 5] = [10, 50, 100, 250, 500];
/// overlay-fig10's leased shares `b = A / C` of the 100 Mbps bottleneck.
pub const LEASED_SHARES: [f64; 5] = [0.2, 0.4, 0.5, 0.6, 0.8];

fn built(b: ScenarioBuilder) -> ScenarioFile {
    b.build()
        .expect("generated overlay scenarios are valid")
        .into_file()
}

/// Fig. 5/6: routers r0..rM in a line of 100 Mbps, 5 ms links with 1 MB buffers; on each
/// link K = 4 one-hop loops, and one loop from r0 to rM. Every loop carries one greedy
/// source (UDP at 40 Mbps, above any share it can get, so its shaper is always backlogged;
/// 64 KB shaper queues). 20 s; shares are measured over the last 10 s.
pub fn linear(m: u32) -> ScenarioFile {
    let mut b = ScenarioBuilder::new("overlay-fig6", 20.0, DisciplineKind::Fifo)
        .description(format!(
            "linear network: {m} bottlenecks of 100 Mbps, {LINEAR_K} one-hop loops on each, \
             one loop across all"
        ))
        .routers((0..=m).map(|i| format!("r{i}")));
    for i in 1..=m {
        b = b.link(
            LinkSpec::new(&format!("r{}", i - 1), &format!("r{i}"), LINEAR_C_MBPS)
                .delay_ms(5.0)
                .buffer_bytes(1_000_000),
        );
    }
    // One loop and its greedy source.
    let greedy = |b: ScenarioBuilder, name: &str, from: &str, to: &str| {
        b.overlay_loop(LoopSpec::new(name, from, to)).flow(
            FlowSpec::udp(from, to, 40.0)
                .jitter(0.0)
                .via_loop(name)
                .access(1000.0, 0.0),
        )
    };
    b = greedy(b, "long", "r0", &format!("r{m}"));
    for i in 1..=m {
        for k in 0..LINEAR_K {
            let (from, to) = (format!("r{}", i - 1), format!("r{i}"));
            b = greedy(b, &format!("x{i}.{k}"), &from, &to);
        }
    }
    built(b)
}

/// Fig. 7: `n` TCP flows spread evenly over `loops` edge-to-edge loops (none: plain
/// FIFO everywhere, flows entering at one edge), through one 10 Mbps bottleneck c -> d.
/// Every buffer holds one bandwidth-delay product, 50 packets (50 KB): the RTT is 40 ms
/// (1 ms access, 1 ms edge link, 17 ms bottleneck each way). `fred` puts FRED (our
/// FRED-2, with `minq`) in the loops' shaper queues, or at the bottleneck when there are
/// no loops. 60 s.
pub fn dumbbell(loops: u32, n: u32, fred: bool) -> ScenarioFile {
    let edges = loops.max(1);
    let mut b = ScenarioBuilder::new("overlay-fig7", 60.0, DisciplineKind::Fifo)
        .description(format!(
            "{n} TCP flows over {loops} edge-to-edge loops, 10 Mbps bottleneck, 50-packet buffers"
        ))
        .routers((1..=edges).map(|i| format!("e{i}")))
        .routers(["c", "d"]);
    for i in 1..=edges {
        b = b.link(LinkSpec::new(&format!("e{i}"), "c", 100.0).buffer_bytes(50_000));
    }
    let mut bottleneck = LinkSpec::new("c", "d", 10.0)
        .delay_ms(17.0)
        .buffer_bytes(50_000);
    if fred && loops == 0 {
        bottleneck = bottleneck.discipline(DisciplineKind::Fred2);
    }
    b = b.link(bottleneck);
    let queue = if fred {
        DisciplineKind::Fred2
    } else {
        DisciplineKind::Fifo
    };
    for i in 1..=edges {
        // Flows spread as evenly as the count allows.
        let count = n / edges + u32::from(i <= n % edges);
        if count == 0 {
            continue;
        }
        let edge = format!("e{i}");
        let mut flows = FlowSpec::tcp(&edge, "d").count(count);
        if loops > 0 {
            let name = format!("l{i}");
            b = b.overlay_loop(LoopSpec::new(&name, &edge, "d").shaper(queue, 50_000));
            flows = flows.via_loop(&name);
        }
        b = b.flow(flows.access(100.0, 1.0));
    }
    built(b)
}

/// Fig. 10: a best-effort loop with a greedy source (UDP at 100 Mbps) from t = 0, and from
/// t = 2 s a quasi-leased line of `b` x 100 Mbps whose source sends exactly that rate,
/// both through one 100 Mbps bottleneck (10 ms; 4 MB of buffer, so the transient queue is
/// seen whole rather than cut by drops). 6 s.
pub fn leased(b: f64) -> ScenarioFile {
    let a = b * 100.0;
    let s = ScenarioBuilder::new("overlay-fig10", 6.0, DisciplineKind::Fifo)
        .description(format!(
            "a best-effort loop, then at 2 s a quasi-leased line of {a} Mbps, on a 100 Mbps \
             bottleneck"
        ))
        .with(|s| s.sample_interval = Some(20.0))
        .routers(["i1", "i2", "c", "e"])
        .link(
            LinkSpec::new("i1", "c", 1000.0)
                .delay_ms(0.0)
                .buffer_bytes(1_000_000),
        )
        .link(
            LinkSpec::new("i2", "c", 1000.0)
                .delay_ms(0.0)
                .buffer_bytes(1_000_000),
        )
        .link(
            LinkSpec::new("c", "e", 100.0)
                .delay_ms(10.0)
                .buffer_bytes(4_000_000),
        )
        .overlay_loop(LoopSpec::new("best-effort", "i1", "e"))
        .overlay_loop(LoopSpec::new("leased", "i2", "e").quasi_leased(a, 2.0))
        .flow(
            FlowSpec::udp("i1", "e", 100.0)
                .jitter(0.0)
                .via_loop("best-effort")
                .access(1000.0, 0.0),
        )
        .flow(
            FlowSpec::udp("i2", "e", a)
                .jitter(0.0)
                .between_s(2.0, None)
                .via_loop("leased")
                .access(1000.0, 0.0),
        );
    built(s)
}

/// The same network with no loops: every flow enters the FIFO network directly.
pub fn without_loops(s: &ScenarioFile) -> ScenarioFile {
    let mut s = s.clone();
    s.loops.clear();
    for f in &mut s.flows {
        f.get_mut().overlay_loop = None;
    }
    s
}

/// The single-bottleneck bound on the transient queue when a quasi-leased line of share
/// `b` appears (the overlay paper, Section 7.4): `b / (1 - b)`, in units of `C tau`.
/// Derived here: with `beta -> 1` the best-effort loop's rate (over `C`) follows
/// `x' = x / (x + b)` from `x = 1`, i.e. `x_k = (1 - b) / (1 - b^(k+1))`, and the excess
/// `x_k + b - 1` summed over the intervals is `(1 - b) sum b^(k+1) / (1 - b^(k+1))`, at most
/// `sum b^(k+1) = b / (1 - b)`.
pub fn leased_queue_bound(b: f64) -> f64 {
    b / (1.0 - b)
}
