//! CHOKe: Pan, Prabhakar and Psounis, "CHOKe: a stateless active queue management scheme
//! for approximating fair bandwidth allocation", INFOCOM 2000, Section II.
//!
//! RED's averaged queue, plus one comparison per arrival once `avg > min_th`: a packet
//! drawn at random from the queue is compared with the arrival, and if both belong to the
//! same flow both are dropped ("ChOose and Keep for responsive flows, ChOose and Kill for
//! unresponsive flows"). Otherwise the arrival meets RED's decision: dropped with
//! probability `p_a` between the thresholds, always above `max_th`.

use rand::Rng;

use crate::packet::Packet;
use crate::queue::{ByteFifo, QueueDisc};
use crate::red::{red_probability, RedAverage, RedParams};
use crate::time::Nanos;
use crate::verdict::{DropReason, Dropped};

/// CHOKe queue (parameters: RED's).
#[derive(Debug, Clone)]
pub struct Choke<P> {
    params: RedParams,
    fifo: ByteFifo<P>,
    avg: RedAverage,
    count: i64,
    /// The queued victim of the last match, handed out by `take_extra_drop`.
    victim: Option<Dropped<P>>,
}

impl<P: Packet> Choke<P> {
    /// A CHOKe queue.
    pub fn new(params: RedParams) -> Self {
        Choke {
            fifo: ByteFifo::new(params.buffer_bytes),
            avg: RedAverage::new(&params),
            params,
            count: -1,
            victim: None,
        }
    }
}

impl<P: Packet> QueueDisc<P> for Choke<P> {
    fn enqueue<R: Rng + ?Sized>(&mut self, p: P, now: Nanos, rng: &mut R) -> Option<Dropped<P>> {
        self.avg.update(self.fifo.bytes(), now);
        let avg = self.avg.avg;
        let prm = self.params;
        if avg <= prm.min_th_bytes {
            self.count = -1;
        } else {
            if !self.fifo.is_empty() {
                let i = rng.random_range(0..self.fifo.len());
                if self.fifo.get(i).is_some_and(|q| q.flow() == p.flow()) {
                    let victim = self.fifo.remove(i).expect("index in range");
                    self.victim = Some(Dropped::new(victim, DropReason::ChokeMatch));
                    return Some(Dropped::new(p, DropReason::ChokeMatch));
                }
            }
            if avg >= prm.max_th_bytes {
                self.count = 0;
                return Some(Dropped::new(p, DropReason::RedForced));
            }
            self.count += 1;
            if rng.random::<f64>() < red_probability(avg, self.count, &prm) {
                self.count = 0;
                return Some(Dropped::new(p, DropReason::RedEarly));
            }
        }
        self.fifo
            .push(p)
            .err()
            .map(|p| Dropped::new(p, DropReason::BufferOverflow))
    }

    fn take_extra_drop(&mut self) -> Option<Dropped<P>> {
        self.victim.take()
    }

    fn dequeue(&mut self, now: Nanos) -> Option<P> {
        let p = self.fifo.pop();
        if self.fifo.is_empty() {
            self.avg.mark_idle(now);
        }
        p
    }
    fn len_bytes(&self) -> u32 {
        self.fifo.bytes()
    }
    fn len_packets(&self) -> usize {
        self.fifo.len()
    }
    fn reserved_slots(&self) -> usize {
        self.fifo.reserved_slots()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_packet::TestPacket;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    /// A flood from one flow against a trickle from another, into a queue drained at a fixed
    /// rate: matches drop the flood's packets in pairs and never the trickle's, since it has
    /// no packet of its own queued to match.
    #[test]
    fn a_dominant_flow_is_killed_in_pairs() {
        let mut q: Choke<TestPacket> = Choke::new(RedParams::new(10e6, 64_000));
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let (mut matches, mut pairs_ok, mut trickle_matched) = (0, true, 0);
        for i in 0..20_000u64 {
            let now = Nanos(i * 100_000);
            let flow = if i % 10 == 0 { 1 } else { 0 };
            if let Some(d) = q.enqueue(TestPacket::new(flow, 1000, 0.0), now, &mut rng) {
                if d.reason == DropReason::ChokeMatch {
                    matches += 1;
                    let v = q.take_extra_drop();
                    pairs_ok &= v.is_some_and(|v| v.packet.flow == d.packet.flow);
                    if flow == 1 {
                        trickle_matched += 1;
                    }
                }
            }
            if i % 2 == 0 {
                q.dequeue(now);
            }
        }
        assert!(matches > 100, "{matches}");
        assert!(pairs_ok);
        // The trickle holds a tenth of the queue, so it matches about a tenth as often.
        assert!(
            trickle_matched * 5 < matches,
            "{trickle_matched} of {matches}"
        );
    }
}
