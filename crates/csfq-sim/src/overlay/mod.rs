//! Edge-to-edge overlay loops at run time (the overlay paper; SPEC §5): each loop's
//! shaper queue and ingress controller at its ingress router, its egress's accounting, and
//! the control and feedback packets between them. The controllers themselves are
//! `csfq_algo::overlay`; the loops' plan (routes, parameters) is `crate::net::LoopDef`.
//!
//! Control and feedback packets are real packets that cross the network like any other;
//! they carry only their number, and each loop keeps the payloads of those in flight. A
//! loop's messages travel as a flow of their own, numbered after the scenario's flows
//! (`Loops::message_flow`).
//!
//! Like hosts, loops return `Action`s for the engine to carry out in order.

use std::collections::VecDeque;

use csfq_algo::overlay::{Control, Egress, Feedback, Ingress};
use csfq_algo::{Dropped, FlowId, Nanos};
use rand_pcg::Pcg64Mcg;

use crate::config::Scenario;
use crate::discipline::{Departure, Discipline};
use crate::events::{Action, EventKind};
use crate::net::{BuildError, LoopDef, Topology};
use crate::observe::report::LoopReport;
use crate::packet::{Kind, SimPacket};
use crate::rng::{stream, Stream};

/// One overlay loop at run time: its shaper queue and ingress, its egress, and the payloads
/// of its control and feedback packets in flight (packets carry only their number).
#[derive(Debug)]
struct LoopRt {
    ingress: Ingress,
    egress: Egress,
    queue: Discipline,
    /// The packets an in-order shaper queue holds, as they will leave (the queue keeps
    /// only a record of each).
    held: VecDeque<SimPacket>,
    rng: Pcg64Mcg,
    /// The pending `LoopSend` event's time, if any.
    send_at: Option<Nanos>,
    /// The pending `LoopInterval` event's time, if any.
    interval_at: Option<Nanos>,
    controls: VecDeque<Control>,
    feedbacks: VecDeque<Feedback>,
    sent_pkts: u64,
    ingress_drops: u64,
    peak_queue: u32,
    control_sent: u64,
    control_lost: u64,
    feedback_sent: u64,
    feedback_lost: u64,
    lambda_series: Vec<f64>,
    mu_series: Vec<f64>,
    acc_series: Vec<f64>,
    queue_series: Vec<u32>,
}

/// Every loop of the run.
#[derive(Debug)]
pub(crate) struct Loops {
    loops: Vec<LoopRt>,
    /// The flow number of loop 0's messages: the scenario's flow count.
    first_message_flow: u32,
}

impl Loops {
    /// The loops of `topo`, their shaper queues configured as the scenario says.
    pub(crate) fn build(topo: &Topology, s: &Scenario) -> Result<Self, BuildError> {
        let tables = s.discipline_tables();
        let loops =
            topo.loops
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    let rate_bps = topo.ports[l.fwd[0]].rate_bps;
                    let queue = Discipline::build(l.queue, &tables, rate_bps, l.buffer_bytes)
                        .map_err(|source| BuildError::Parameters {
                            from: topo.nodes[l.ingress].name().into_owned(),
                            to: topo.nodes[l.egress].name().into_owned(),
                            source,
                        })?;
                    Ok(LoopRt {
                        ingress: Ingress::new(l.params, l.start),
                        egress: Egress::new(l.params.interval),
                        queue,
                        rng: stream(s.seed, Stream::Loop, i as u64),
                        send_at: None,
                        interval_at: None,
                        held: VecDeque::new(),
                        controls: VecDeque::new(),
                        feedbacks: VecDeque::new(),
                        sent_pkts: 0,
                        ingress_drops: 0,
                        peak_queue: 0,
                        control_sent: 0,
                        control_lost: 0,
                        feedback_sent: 0,
                        feedback_lost: 0,
                        lambda_series: Vec::new(),
                        mu_series: Vec::new(),
                        acc_series: Vec::new(),
                        queue_series: Vec::new(),
                    })
                })
                .collect::<Result<_, BuildError>>()?;
        Ok(Loops {
            loops,
            first_message_flow: topo.flows.len() as u32,
        })
    }

    /// The flow number loop `l`'s control and feedback packets travel as.
    pub(crate) fn message_flow(&self, l: usize) -> FlowId {
        FlowId(self.first_message_flow + l as u32)
    }

    /// The loop whose message `p` is.
    pub(crate) fn of_message(&self, p: &SimPacket) -> usize {
        debug_assert!(matches!(p.kind, Kind::Control | Kind::Feedback));
        (p.flow.0 - self.first_message_flow) as usize
    }

    /// A data packet reaches its loop's ingress: into the shaper queue. Drops there go to
    /// `on_drop`.
    pub(crate) fn enqueue(
        &mut self,
        l: usize,
        p: SimPacket,
        now: Nanos,
        out: &mut Vec<Action>,
        mut on_drop: impl FnMut(&Dropped<SimPacket>),
    ) {
        let lp = &mut self.loops[l];
        let drops = &mut lp.ingress_drops;
        let queued = lp.queue.enqueue(p, now, &mut lp.rng, &mut |d| {
            *drops += 1;
            on_drop(&d);
        });
        lp.held.extend(queued);
        lp.peak_queue = lp.peak_queue.max(lp.queue.len_bytes());
        self.reschedule(l, now, out);
    }

    /// Keeps one `LoopSend` event pending, at the time the bucket next allows a packet.
    fn reschedule(&mut self, l: usize, now: Nanos, out: &mut Vec<Action>) {
        let lp = &mut self.loops[l];
        if lp.queue.is_empty() {
            lp.send_at = None;
            return;
        }
        let at = lp.ingress.ready_at(now);
        if lp.send_at != Some(at) {
            lp.send_at = Some(at);
            out.push(Action::At(at, EventKind::LoopSend(l as u32)));
        }
    }

    /// The shaper may release its next packet (unless a rate change moved the time).
    pub(crate) fn send(&mut self, l: usize, now: Nanos, out: &mut Vec<Action>) {
        let lp = &mut self.loops[l];
        if lp.send_at != Some(now) {
            return; // superseded by a rate change
        }
        lp.send_at = None;
        if lp.ingress.ready_at(now) > now {
            self.reschedule(l, now, out);
            return;
        }
        // The disciplines a shaper queue may run (`DisciplineKind::shapes_loops`) drop
        // only on arrival.
        let mut head_drop = |d: Dropped<SimPacket>| {
            debug_assert!(false, "a loop's shaper queue dropped at its head: {d:?}");
        };
        let next = match lp.queue.dequeue(now, &mut head_drop) {
            Some(Departure::Packet(p)) => Some(p),
            Some(Departure::Kept(_)) => lp.held.pop_front(),
            None => None,
        };
        if let Some(mut p) = next {
            lp.ingress.on_send(p.size, now);
            lp.sent_pkts += 1;
            p.shaped = true;
            out.push(Action::Send(p));
        }
        self.reschedule(l, now, out);
    }

    /// The ingress closes an interval: a control packet to the egress, and the next tick.
    pub(crate) fn tick(&mut self, l: usize, def: &LoopDef, now: Nanos, out: &mut Vec<Action>) {
        let id = self.message_flow(l);
        let lp = &mut self.loops[l];
        let c = lp.ingress.tick(now);
        lp.controls.push_back(c);
        lp.control_sent += 1;
        out.push(Action::Send(SimPacket::loop_message(
            id,
            Kind::Control,
            def.control_bytes,
            c.k as u32,
            now,
        )));
        out.push(Action::At(
            now + def.params.tau,
            EventKind::LoopTick(l as u32),
        ));
    }

    /// The egress's interval ends (unless it re-synchronized): maybe feedback.
    pub(crate) fn interval(&mut self, l: usize, def: &LoopDef, now: Nanos, out: &mut Vec<Action>) {
        let lp = &mut self.loops[l];
        if lp.interval_at != Some(now) {
            return; // the egress re-synchronized
        }
        lp.interval_at = None;
        let fb = lp.egress.on_interval_end(now);
        self.schedule_interval(l, out);
        if let Some(fb) = fb {
            self.feedback(l, def, fb, now, out);
        }
    }

    /// Keeps one `LoopInterval` event pending at the egress's next interval end.
    fn schedule_interval(&mut self, l: usize, out: &mut Vec<Action>) {
        let lp = &mut self.loops[l];
        if let Some(at) = lp.egress.next_interval_end() {
            if lp.interval_at != Some(at) {
                lp.interval_at = Some(at);
                out.push(Action::At(at, EventKind::LoopInterval(l as u32)));
            }
        }
    }

    /// The egress sends feedback back to the ingress over the reverse route.
    fn feedback(
        &mut self,
        l: usize,
        def: &LoopDef,
        fb: Feedback,
        now: Nanos,
        out: &mut Vec<Action>,
    ) {
        let id = self.message_flow(l);
        let lp = &mut self.loops[l];
        lp.feedbacks.push_back(fb);
        lp.feedback_sent += 1;
        out.push(Action::Send(SimPacket::loop_message(
            id,
            Kind::Feedback,
            def.control_bytes,
            fb.k as u32,
            now,
        )));
    }

    /// A data packet of loop `l` reaches the egress.
    pub(crate) fn egress_data(&mut self, l: usize, size: u32) {
        self.loops[l].egress.on_data(size);
    }

    /// A control packet reaches the egress, or a feedback packet the ingress. Messages
    /// numbered below it that never came were lost.
    pub(crate) fn deliver(
        &mut self,
        p: SimPacket,
        def: &LoopDef,
        now: Nanos,
        out: &mut Vec<Action>,
    ) {
        let l = self.of_message(&p);
        let k = p.seq as u64;
        let lp = &mut self.loops[l];
        match p.kind {
            Kind::Control => {
                while lp.controls.front().is_some_and(|c| c.k < k) {
                    lp.controls.pop_front();
                    lp.control_lost += 1;
                }
                let Some(c) = lp.controls.pop_front() else {
                    return;
                };
                let fb = lp.egress.on_control(&c, now);
                self.schedule_interval(l, out);
                if let Some(fb) = fb {
                    self.feedback(l, def, fb, now, out);
                }
            }
            Kind::Feedback => {
                while lp.feedbacks.front().is_some_and(|f| f.k < k) {
                    lp.feedbacks.pop_front();
                    lp.feedback_lost += 1;
                }
                let Some(fb) = lp.feedbacks.pop_front() else {
                    return;
                };
                lp.ingress.on_feedback(&fb, now);
                self.reschedule(l, now, out);
            }
            Kind::Data | Kind::Ack => unreachable!("loop messages only"),
        }
    }

    /// Records each loop's rate, `mu`, accumulation and shaper queue.
    pub(crate) fn sample(&mut self) {
        for l in &mut self.loops {
            let e = l.egress.stats();
            l.lambda_series.push(l.ingress.rate_bps() / 1e6);
            l.mu_series.push(e.mu_bps / 1e6);
            l.acc_series
                .push(e.accumulation_bytes / l.ingress.params().packet_bytes as f64);
            l.queue_series.push(l.queue.len_bytes());
        }
    }

    /// Each loop's results.
    pub(crate) fn report(&self, topo: &Topology) -> Vec<LoopReport> {
        use csfq_algo::overlay::Service;
        self.loops
            .iter()
            .zip(&topo.loops)
            .map(|(rt, d)| {
                let (e, i) = (rt.egress.stats(), rt.ingress.stats());
                LoopReport {
                    name: d.name.clone(),
                    ingress: topo.nodes[d.ingress].name().into_owned(),
                    egress: topo.nodes[d.egress].name().into_owned(),
                    service: match d.params.service {
                        Service::BestEffort => "best-effort",
                        Service::Assured { .. } => "assured",
                        Service::QuasiLeased { .. } => "quasi-leased",
                    },
                    rate_mbps: match d.params.service {
                        Service::BestEffort => None,
                        Service::Assured { rate_bps, .. } | Service::QuasiLeased { rate_bps } => {
                            Some(rate_bps / 1e6)
                        }
                    },
                    tau_ms: d.params.tau.as_secs_f64() * 1e3,
                    sent_pkts: rt.sent_pkts,
                    ingress_drops: rt.ingress_drops,
                    peak_ingress_queue_bytes: rt.peak_queue,
                    network_lost_bytes: e.lost_bytes,
                    control_sent: rt.control_sent,
                    control_lost: rt.control_lost,
                    feedback_sent: rt.feedback_sent,
                    feedback_lost: rt.feedback_lost,
                    epochs: i.epochs,
                    resyncs: e.resyncs,
                    lambda_mbps: rt.lambda_series.clone(),
                    mu_mbps: rt.mu_series.clone(),
                    accumulation_pkts: rt.acc_series.clone(),
                    ingress_queue_bytes: rt.queue_series.clone(),
                }
            })
            .collect()
    }
}
