//! Receiver-driven Layered Multicast, after McCanne, Jacobson and Vetterli, SIGCOMM 1996:
//! a source sends its signal as cumulative layers, each to its own group; the receiver
//! adds a layer by a *join experiment* when a randomized join timer fires, and drops its
//! top layer when it sees congestion (loss above a threshold). A failed experiment backs
//! that layer's join timer off exponentially, so receivers settle near the largest level
//! the path can carry.
//!
//! Modeled here for one receiver per session on a unicast path, which is what the CSFQ
//! paper's experiment needs (Section 3.3, Figure 7): layer subscription takes effect at
//! once (the first router prunes unsubscribed layers), loss is measured over fixed windows
//! from the packets sent in subscribed layers and those received, and the shared learning
//! among receivers of one group is not modeled.

use csfq_algo::Nanos;
use rand::Rng;

/// RLM parameters (defaults after McCanne et al. 1996, Section 4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RlmParams {
    /// Number of layers.
    pub layers: u8,
    /// Rate of layer 1, bits/s; layer i sends `base * 2^(i-1)` (the CSFQ paper: 32 Kbps,
    /// so layer i sends 2^(i+4) Kbps and five layers make 0.992 Mbps).
    pub base_bps: f64,
    /// Loss window: loss is measured over this interval.
    pub window: Nanos,
    /// Loss fraction in a window above which the receiver drops its top layer.
    pub loss_threshold: f64,
    /// Fewest packets a loss measurement needs: windows are pooled until this many were
    /// sent, so one drop among the 4 packets a second of layer 1 is not read as 25% loss.
    pub min_sample: u64,
    /// Detection time: how long a join experiment lasts, and how long after any level
    /// change losses are not acted on again (the queue needs time to respond).
    pub detection: Nanos,
    /// Smallest join timer.
    pub join_min: Nanos,
    /// Largest join timer.
    pub join_max: Nanos,
    /// Join-timer multiplier after a failed experiment.
    pub backoff: f64,
}

impl Default for RlmParams {
    fn default() -> Self {
        RlmParams {
            layers: 7,
            base_bps: 32e3,
            window: Nanos::from_millis(1000),
            loss_threshold: 0.10,
            min_sample: 20,
            detection: Nanos::from_millis(2000),
            join_min: Nanos::from_millis(5000),
            join_max: Nanos::from_millis(120_000),
            backoff: 2.0,
        }
    }
}

impl RlmParams {
    /// Rate of layer `i` (1-based), bits/s.
    pub fn layer_bps(&self, i: u8) -> f64 {
        self.base_bps * 2f64.powi(i as i32 - 1)
    }
}

/// The receiver's subscription state machine.
#[derive(Debug, Clone)]
pub struct RlmReceiver {
    params: RlmParams,
    level: u8,
    /// Join timer of each layer (index = layer).
    join_timer: Vec<Nanos>,
    next_join: Nanos,
    /// A join experiment of the current top layer runs until then.
    experiment_until: Option<Nanos>,
    /// Last level change.
    changed_at: Nanos,
    sent_mark: u64,
    received_mark: u64,
    /// Counters of experiments.
    pub joins: u32,
    /// Failed experiments and other layer drops.
    pub drops: u32,
}

impl RlmReceiver {
    /// A receiver subscribed to layer 1, its first join due after a randomized timer.
    pub fn new<R: Rng + ?Sized>(params: RlmParams, now: Nanos, rng: &mut R) -> Self {
        let mut r = RlmReceiver {
            params,
            level: 1,
            join_timer: vec![params.join_min; params.layers as usize + 2],
            next_join: now,
            experiment_until: None,
            changed_at: now,
            sent_mark: 0,
            received_mark: 0,
            joins: 0,
            drops: 0,
        };
        r.schedule_join(now, rng);
        r
    }

    /// Layers subscribed (1..=layers).
    pub fn level(&self) -> u8 {
        self.level
    }

    fn schedule_join<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R) {
        let t = self.join_timer[self.level as usize + 1].0 as f64;
        self.next_join = now + Nanos((t * rng.random_range(1.0..2.0)) as u64);
    }

    /// End of a loss window at `now`: `sent` and `received` are the session's cumulative
    /// packet counts (sent in subscribed layers; received at the receiver).
    pub fn on_window<R: Rng + ?Sized>(
        &mut self,
        now: Nanos,
        sent: u64,
        received: u64,
        rng: &mut R,
    ) {
        let (s, r) = (
            sent - self.sent_mark,
            received.saturating_sub(self.received_mark),
        );
        let loss = if s >= self.params.min_sample {
            self.sent_mark = sent;
            self.received_mark = received;
            1.0 - (r as f64 / s as f64).min(1.0)
        } else {
            0.0 // too few packets yet: keep pooling
        };
        let settled = now >= self.changed_at + self.params.detection;
        if loss > self.params.loss_threshold && (settled || self.experiment_until.is_some()) {
            if self.experiment_until.take().is_some() {
                // Failed join experiment: back this layer's timer off.
                let l = self.level as usize;
                let t = (self.join_timer[l].0 as f64 * self.params.backoff) as u64;
                self.join_timer[l] = Nanos(t).min(self.params.join_max);
            }
            if self.level > 1 {
                self.level -= 1;
                self.drops += 1;
            }
            self.changed_at = now;
            self.schedule_join(now, rng);
            return;
        }
        if let Some(until) = self.experiment_until {
            if now >= until {
                self.experiment_until = None; // the experiment succeeded
                self.schedule_join(now, rng);
            }
            return;
        }
        if now >= self.next_join && self.level < self.params.layers {
            self.level += 1;
            self.joins += 1;
            self.changed_at = now;
            self.experiment_until = Some(now + self.params.detection);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    /// A fluid path of capacity `c`: the receiver settles at the largest level whose
    /// cumulative rate fits, and stays near it.
    #[test]
    fn settles_at_the_largest_level_that_fits() {
        let p = RlmParams::default();
        let c = 1.0e6; // levels: 1 -> 32 K, ..., 5 -> 992 K, 6 -> 2016 K
        let mut rng = Pcg64Mcg::seed_from_u64(4);
        let mut rx = RlmReceiver::new(p, Nanos::ZERO, &mut rng);
        let (mut sent, mut recv) = (0u64, 0u64);
        let mut levels = Vec::new();
        for sec in 1..=600u64 {
            let rate: f64 = (1..=rx.level()).map(|i| p.layer_bps(i)).sum();
            let pkts = rate / 8000.0;
            sent += pkts as u64;
            recv += (pkts.min(c / 8000.0)) as u64;
            rx.on_window(Nanos::from_millis(sec * 1000), sent, recv, &mut rng);
            if sec > 300 {
                levels.push(rx.level());
            }
        }
        let at5 = levels.iter().filter(|&&l| l == 5).count() as f64 / levels.len() as f64;
        assert!(
            at5 > 0.9,
            "level 5 only {:.0}% of the time: {levels:?}",
            at5 * 100.0
        );
        assert!(levels.iter().all(|&l| (4..=6).contains(&l)));
        assert!(
            rx.drops > 0,
            "join experiments above the fair level must fail"
        );
    }

    #[test]
    fn layer_rates_follow_the_paper() {
        let p = RlmParams::default();
        let five: f64 = (1..=5).map(|i| p.layer_bps(i)).sum();
        assert_eq!(five, 992e3);
        assert_eq!(p.layer_bps(7), 2048e3);
    }
}
