//! The models without a network that some figures compare against: TUF's bufferless
//! filter (tuf-fig4), the max-min share behind tuf-fig13, MAY's sampling over a
//! population of flows (may-fig2/3), and the MAY paper's fluid model and parameters.

use csfq_algo::Nanos;
use csfq_sim::config::{FlowKind, ScenarioFile};

/// tuf-fig13's reference share for the main flow, Mbit/s: the max-min share it would get
/// at each instant, averaged over the ON/OFF states. On each of `links` 10 Mbit/s links, 10
/// cross flows are each ON (4 Mbit/s) half the time, independently; with `n` of them ON a
/// greedy main flow's share there is `10 - 4n` if that is at least 4, else `10 / (n + 1)`;
/// across the links it gets the smallest. Exact, by enumerating `n ~ Binomial(10, 1/2)` per
/// link: 1.827 Mbit/s for 1 link, 1.404 for 3, 1.304 for 5 (the 0.909 of the constant 2
/// Mbit/s cross traffic is the share at the mean load, which a flow only gets when it
/// cannot follow the ON/OFF changes).
pub fn onoff_reference_share_mbps(links: u32) -> f64 {
    const CROSS: u32 = 10;
    let share = |n: u32| {
        let left = 10.0 - 4.0 * n as f64;
        if left >= 4.0 {
            left
        } else {
            10.0 / (n as f64 + 1.0)
        }
    };
    let binom = |n: u32| (1..=n).fold(1.0, |c, i| c * (CROSS - i + 1) as f64 / i as f64);
    let p = |n: u32| binom(n) / 2f64.powi(CROSS as i32);
    // E[min] = sum over the distinct share values v (ascending) of (v - v_prev) P(share >= v)^links.
    let mut values: Vec<f64> = (0..=CROSS).map(share).collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    let mut prev = 0.0;
    let mut e = 0.0;
    for v in values {
        let tail: f64 = (0..=CROSS).filter(|&n| share(n) >= v).map(p).sum();
        e += (v - prev) * tail.powi(links as i32);
        prev = v;
    }
    e
}

/// The mean ON (= OFF) periods of tuf-fig13, ms.
pub const ONOFF_PERIODS_MS: [f64; 8] = [5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0];

/// tuf-fig4: per-tag loss probability of the TUF queue (M/D/1/64 at 2000 packets/s, 1 ms
/// service, tags uniform on 0..2047) over `secs`, and the bufferless filter model's
/// threshold: it admits the lowest tags up to the service rate, 1000 of the 2000 packets/s,
/// so tags below 1024 pass and the rest are lost.
pub fn tuf_filter_model(seed: u64, secs: f64) -> (Vec<f64>, u16) {
    use csfq_algo::tuf::{TufParams, TufQueue, TAGS};
    use csfq_algo::QueueDisc;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    use csfq_sim::packet::SimPacket;

    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut q: TufQueue<SimPacket> = TufQueue::new(TufParams::new(64 * 1000));
    let (mut arrivals, mut losses) = (vec![0u64; TAGS], vec![0u64; TAGS]);
    let service = Nanos::from_millis(1);
    let end = Nanos::from_secs_f64(secs);
    let mut next_arrival = Nanos::ZERO;
    let mut busy_until: Option<Nanos> = None;
    loop {
        // Serve departures due before the next arrival.
        while let Some(t) = busy_until.filter(|&t| t <= next_arrival) {
            busy_until = q.dequeue(t).map(|_| t + service);
        }
        if next_arrival >= end {
            break;
        }
        let now = next_arrival;
        let tag = rng.random_range(0..TAGS as u16);
        arrivals[tag as usize] += 1;
        let mut p = SimPacket::data(csfq_algo::FlowId(0), 1000, 0, now);
        p.tag = tag;
        if let Some(d) = q.enqueue(p, now, &mut rng) {
            losses[d.packet.tag as usize] += 1;
        }
        if busy_until.is_none() {
            busy_until = q.dequeue(now).map(|_| now + service);
        }
        let u = 1.0 - rng.random::<f64>();
        next_arrival = now + Nanos::from_secs_f64(-u.ln() / 2000.0);
    }
    let loss = arrivals
        .iter()
        .zip(&losses)
        .map(|(&a, &l)| if a > 0 { l as f64 / a as f64 } else { 0.0 })
        .collect();
    (loss, 1024)
}

/// may-fig2/3's Pareto shapes and `S0` values.
pub const MAY_MODEL_SHAPES: [f64; 5] = [1.1, 1.25, 1.5, 1.75, 2.0];
/// may-fig2/3's `S0` values.
pub const MAY_MODEL_S0: [f64; 3] = [500.0, 1000.0, 2000.0];

/// What the MAY algorithm's sampling does to a population of flows, measured by running
/// them through the real [`csfq_algo::may::May`] queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaySampling {
    /// Flows that entered the table, over all flows (`E(z(f))`).
    pub hashed_share: f64,
    /// Short flows (fewer than `S0` packets) that never entered it, over short flows.
    pub lossless_short_share: f64,
}

/// may-fig2/3 by simulation: `flows` flows with Pareto sizes (`shape`, mean `mean_pkts`,
/// whole packets) cross a MAY queue with `S0 = s0`, one after another; a flow counts as
/// hashed if the table gained an entry while its packets went through. Nothing is
/// dropped here (the link is never above `u0`): what is measured is which flows would be
/// exposed to MAY's drops.
pub fn may_sampling(seed: u64, shape: f64, mean_pkts: f64, s0: f64, flows: u32) -> MaySampling {
    use csfq_algo::may::{May, MayParams};
    use csfq_algo::{FlowId, QueueDisc};
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    use csfq_sim::packet::SimPacket;

    let mut sizes = Pcg64Mcg::seed_from_u64(seed);
    let mut draws = Pcg64Mcg::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
    let params = MayParams {
        s0,
        table_capacity: usize::MAX,
        ..MayParams::new(1e9, 1 << 20)
    };
    let mut q: May<SimPacket> = May::new(params).expect("valid parameters");
    let (mut hashed, mut short, mut short_lossless) = (0u64, 0u64, 0u64);
    for f in 0..flows {
        let n = csfq_sim::net::pareto(mean_pkts, shape, &mut sizes);
        let before = q.stats().inserts;
        for seq in 0..n {
            let p = SimPacket::data(FlowId(f), 1000, seq, Nanos::ZERO);
            if q.enqueue(p, Nanos::ZERO, &mut draws).is_none() {
                q.dequeue(Nanos::ZERO);
            }
        }
        let was_hashed = q.stats().inserts > before;
        hashed += was_hashed as u64;
        if (n as f64) < s0 {
            short += 1;
            short_lossless += !was_hashed as u64;
        }
    }
    MaySampling {
        hashed_share: hashed as f64 / flows as f64,
        lossless_short_share: short_lossless as f64 / short.max(1) as f64,
    }
}

/// The MAY paper's fluid model (Eqs. 1-4, [`csfq_algo::may::FluidModel`]) of a one-link
/// scenario's long-lived TCP flows, with each flow's round-trip propagation time (its two
/// access links, each way, and the link) and the scenario's `[may]` parameters; `None`
/// for a scenario of more than one link or with flows of other kinds or without access
/// links.
pub fn may_fluid_model(s: &ScenarioFile) -> Option<csfq_algo::may::FluidModel> {
    use csfq_algo::may::FluidModel;
    let [link] = s.links.as_slice() else {
        return None;
    };
    let link = link.get_ref();
    let mut rtts = Vec::new();
    for f in &s.flows {
        let f = f.get_ref();
        let access = f.access?;
        if f.kind != FlowKind::Tcp || f.size_pkts.is_some() {
            return None;
        }
        for j in 0..f.count {
            let one_way =
                2.0 * (access.delay_ms + f64::from(j) * access.delay_step_ms) + link.delay_ms;
            rtts.push(2.0 * one_way / 1e3);
        }
    }
    Some(FluidModel::from_rtts(&rtts, &may_params(s)?))
}

/// MAY's parameters on a one-link scenario's link, from its `[may]` table; `None` for a
/// scenario of more than one link.
pub fn may_params(s: &ScenarioFile) -> Option<csfq_algo::may::MayParams> {
    use csfq_algo::may::MayParams;
    let [link] = s.links.as_slice() else {
        return None;
    };
    let link = link.get_ref();
    let m = &s.may;
    Some(MayParams {
        update_interval: Nanos::from_secs_f64(m.update_interval_ms / 1e3),
        target_utilization: m.target_utilization,
        gain: m.gain,
        q_w: m.q_w,
        packet_bytes: s.tcp.segment_bytes,
        ..MayParams::new(link.rate_mbps * 1e6, link.buffer_bytes)
    })
}
