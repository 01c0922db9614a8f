//! Flow Random Early Drop: Lin and Morris, "Dynamics of Random Early Detection",
//! SIGCOMM 1997, Section 3 and the algorithm of its Fig. 7 (restated in the CS-FNE thesis,
//! Fig. 1-3, whose OCR is garbled; the 1997 paper wins).
//!
//! RED plus per-active-flow accounting: `qlen_i` (bytes the flow has queued) and
//! `strike_i` (times it tried to exceed `maxq`). `avgcq = avg / nactive` is a flow's fair
//! buffer share. Units are bytes throughout; `minq` and the drop-tail `maxq` are given in
//! packets of [`RedParams::mean_packet_bytes`].
//!
//! Two variants, as in the CSFQ paper (Section 3): FRED-1 is Lin and Morris's algorithm;
//! FRED-2 also "guarantees to each flow a minimum number of buffers": an arrival whose
//! flow holds fewer than `minq` packets is accepted whenever it fits in the buffer, even
//! in the drop-tail regime (`avg >= max_th`). This is our reading of the paper's one
//! sentence about FRED-2; the paper's FRED code is not published.

use rand::Rng;

use crate::packet::{FlowId, Packet};
use crate::queue::{ByteFifo, Held, InOrder, Keep};
use crate::red::{red_probability, RedAverage, RedParams};
use crate::time::Nanos;
use crate::verdict::{DropReason, Dropped};

/// Which FRED.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FredVariant {
    /// Lin and Morris's FRED.
    Fred1,
    /// FRED with a guaranteed `minq` buffers per flow.
    Fred2,
}

/// FRED configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FredParams {
    /// The RED part (thresholds, `w_q`, `max_p`, buffer).
    pub red: RedParams,
    /// `minq`: packets a flow may always queue (2, Lin and Morris for small buffers).
    pub min_q_packets: u32,
    /// FRED-1 or FRED-2.
    pub variant: FredVariant,
}

impl FredParams {
    /// FRED with the CSFQ paper's RED parameters and `minq = 2`.
    pub fn new(capacity_bps: f64, buffer_bytes: u32, variant: FredVariant) -> Self {
        FredParams {
            red: RedParams::new(capacity_bps, buffer_bytes),
            min_q_packets: 2,
            variant,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct FlowState {
    qlen: u32,
    strike: u32,
}

/// FRED queue.
#[derive(Debug, Clone)]
pub struct Fred<K> {
    params: FredParams,
    fifo: ByteFifo<K>,
    avg: RedAverage,
    count: i64,
    /// Per-flow state indexed by `FlowId`; only flows with queued packets are active, and a
    /// flow's state is reset when its last packet leaves.
    flows: Vec<FlowState>,
    nactive: u32,
    min_q: f64,
}

impl<K: Held> Fred<K> {
    /// A FRED queue.
    pub fn new(params: FredParams) -> Self {
        Fred {
            fifo: ByteFifo::new(params.red.buffer_bytes),
            avg: RedAverage::new(&params.red),
            count: -1,
            flows: Vec::new(),
            nactive: 0,
            min_q: (params.min_q_packets * params.red.mean_packet_bytes) as f64,
            params,
        }
    }

    fn flow(&mut self, f: FlowId) -> &mut FlowState {
        let i = f.index();
        if i >= self.flows.len() {
            self.flows.resize(i + 1, FlowState::default());
        }
        &mut self.flows[i]
    }

    fn accept<P: Packet>(&mut self, p: P, now: Nanos) -> Result<P, Dropped<P>>
    where
        K: Keep<P>,
    {
        let f = p.flow();
        let size = p.size_bytes();
        let p = self
            .fifo
            .admit(p, now)
            .map_err(|p| Dropped::new(p, DropReason::BufferOverflow))?;
        let st = self.flow(f);
        if st.qlen == 0 {
            self.nactive += 1;
        }
        self.flow(f).qlen += size;
        Ok(p)
    }
}

impl<P: Packet, K: Keep<P>> InOrder<P> for Fred<K> {
    type Kept = K;

    fn admit<R: Rng + ?Sized>(&mut self, p: P, now: Nanos, rng: &mut R) -> Result<P, Dropped<P>> {
        self.avg.update(self.fifo.bytes(), now);
        let avg = self.avg.avg;
        let red = self.params.red;
        let pkt = red.mean_packet_bytes as f64;
        let maxq = if avg >= red.max_th_bytes {
            2.0 * pkt
        } else {
            red.min_th_bytes
        };
        let avgcq = if self.nactive > 0 {
            (avg / self.nactive as f64).max(pkt)
        } else {
            avg.max(pkt)
        };
        let fred2 = self.params.variant == FredVariant::Fred2;
        let min_q = self.min_q;
        let st = *self.flow(p.flow());
        let qlen = st.qlen as f64;
        if fred2 && qlen < min_q {
            // FRED-2: a flow below minq buffers is always admitted if it fits.
            return self.accept(p, now);
        }
        // Non-adaptive flows: over maxq, over twice the fair share when the average is
        // high, or over the share with a history of strikes.
        if qlen >= maxq
            || (avg >= red.max_th_bytes && qlen > 2.0 * avgcq)
            || (qlen >= avgcq && st.strike > 1)
        {
            self.flow(p.flow()).strike += 1;
            return Err(Dropped::new(p, DropReason::FredFlowLimit));
        }
        if avg >= red.min_th_bytes && avg < red.max_th_bytes {
            self.count += 1;
            // Only flows holding at least max(minq, avgcq) are subject to random drop.
            if qlen >= min_q.max(avgcq)
                && rng.random::<f64>() < red_probability(avg, self.count, &red)
            {
                self.count = 0;
                return Err(Dropped::new(p, DropReason::RedEarly));
            }
        } else if avg < red.min_th_bytes {
            self.count = -1;
        } else {
            self.count = 0;
            return Err(Dropped::new(p, DropReason::RedForced));
        }
        self.accept(p, now)
    }

    fn depart(&mut self, now: Nanos) -> Option<K> {
        let p = self.fifo.pop()?;
        // Lin and Morris update the average on departures too.
        self.avg.update(self.fifo.bytes(), now);
        let size = p.held_bytes();
        let st = self.flow(p.held_flow());
        st.qlen -= size;
        if st.qlen == 0 {
            *st = FlowState::default();
            self.nactive -= 1;
        }
        if self.fifo.is_empty() {
            self.avg.mark_idle(now);
        }
        Some(p)
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
    fn flow_slots(&self) -> usize {
        self.flows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_packet::TestPacket;
    use crate::queue::QueueDisc;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    /// One flow floods a queue that is never served while another sends a packet now and
    /// then: FRED caps the flood at `maxq = min_th` and keeps admitting the light flow.
    #[test]
    fn flooding_flow_is_capped_and_light_flow_admitted() {
        for variant in [FredVariant::Fred1, FredVariant::Fred2] {
            let mut q: Fred<TestPacket> = Fred::new(FredParams::new(10e6, 64_000, variant));
            let mut rng = Pcg64Mcg::seed_from_u64(3);
            let mut light_dropped = 0;
            for i in 0..200u64 {
                q.enqueue(TestPacket::new(0, 1000, 0.0), Nanos(i * 1000), &mut rng);
                if i % 50 == 0
                    && q.enqueue(TestPacket::new(1, 1000, 0.0), Nanos(i * 1000), &mut rng)
                        .is_some()
                {
                    light_dropped += 1;
                }
            }
            assert!(
                q.flows[0].qlen <= 16_000,
                "{variant:?}: {}",
                q.flows[0].qlen
            );
            assert!(q.flows[0].strike > 0);
            assert_eq!(light_dropped, 0, "{variant:?}");
        }
    }

    #[test]
    fn state_is_released_when_flow_drains() {
        let mut q: Fred<TestPacket> = Fred::new(FredParams::new(10e6, 64_000, FredVariant::Fred1));
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        q.enqueue(TestPacket::new(5, 1000, 0.0), Nanos(0), &mut rng);
        assert_eq!(q.nactive, 1);
        q.dequeue(Nanos(1000));
        assert_eq!(q.nactive, 0);
        assert_eq!(q.flows[5].qlen, 0);
    }
}
