//! Open-loop traffic sources: the papers' "UDP" (constant bit rate with jittered
//! inter-arrivals) and exponential ON-OFF.

use csfq_algo::Nanos;
use rand::Rng;

/// Constant bit rate: inter-arrival times uniform on `[1 - jitter, 1 + jitter]` x the mean
/// (the CSFQ paper's UDP source uses jitter 0.5).
#[derive(Debug, Clone)]
pub struct CbrSource {
    mean_gap_ns: f64,
    jitter: f64,
    /// Packet size, bytes.
    pub size: u32,
}

impl CbrSource {
    /// A source of `rate_bps` in packets of `size` bytes.
    pub fn new(rate_bps: f64, size: u32, jitter: f64) -> Self {
        CbrSource {
            mean_gap_ns: size as f64 * 8e9 / rate_bps,
            jitter,
            size,
        }
    }

    /// The time to the next packet.
    #[inline]
    pub fn next_gap<R: Rng + ?Sized>(&self, rng: &mut R) -> Nanos {
        let f = if self.jitter > 0.0 {
            rng.random_range(1.0 - self.jitter..1.0 + self.jitter)
        } else {
            1.0
        };
        Nanos((self.mean_gap_ns * f).round().max(1.0) as u64)
    }
}

/// Exponential ON-OFF: sends like a [`CbrSource`] during ON periods.
#[derive(Debug, Clone)]
pub struct OnOffSource {
    /// The source while ON.
    pub cbr: CbrSource,
    on_mean_ns: f64,
    off_mean_ns: f64,
    /// The current ON period ends here.
    on_until: Nanos,
}

fn exponential<R: Rng + ?Sized>(mean_ns: f64, rng: &mut R) -> Nanos {
    let u = 1.0 - rng.random::<f64>(); // (0, 1]
    Nanos((-mean_ns * u.ln()).round() as u64)
}

impl OnOffSource {
    /// An ON-OFF source; ON and OFF periods have the given means.
    pub fn new(cbr: CbrSource, on_mean: Nanos, off_mean: Nanos) -> Self {
        OnOffSource {
            cbr,
            on_mean_ns: on_mean.0 as f64,
            off_mean_ns: off_mean.0 as f64,
            on_until: Nanos::ZERO,
        }
    }

    /// Starts with an ON period at `now`.
    pub fn start<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R) {
        self.on_until = now + exponential(self.on_mean_ns, rng);
    }

    /// At a tick at `now`: `Ok(next)` means send a packet now and tick again at `next`;
    /// `Err(next)` means the ON period is over: send nothing, the next ON starts at `next`.
    pub fn tick<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R) -> Result<Nanos, Nanos> {
        if now < self.on_until {
            return Ok(now + self.cbr.next_gap(rng));
        }
        let next_on = self.on_until + exponential(self.off_mean_ns, rng);
        let next_on = next_on.max(now);
        self.on_until = next_on + exponential(self.on_mean_ns, rng);
        Err(next_on)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    #[test]
    fn cbr_mean_rate_and_jitter_bounds() {
        let s = CbrSource::new(1e6, 1000, 0.5);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let n = 100_000;
        let mut total = 0u64;
        for _ in 0..n {
            let g = s.next_gap(&mut rng).0;
            assert!((4_000_000..=12_000_000).contains(&g), "{g}");
            total += g;
        }
        let mean = total as f64 / n as f64;
        assert!((mean / 8e6 - 1.0).abs() < 0.005, "{mean}");
    }

    #[test]
    fn onoff_duty_cycle_matches_means() {
        // ON 100 ms, OFF 300 ms: ON a quarter of the time.
        let mut s = OnOffSource::new(
            CbrSource::new(8e6, 1000, 0.0),
            Nanos::from_millis(100),
            Nanos::from_millis(300),
        );
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        s.start(Nanos::ZERO, &mut rng);
        let mut t = Nanos::ZERO;
        let mut sent = 0u64;
        let end = Nanos::from_millis(400_000);
        while t < end {
            match s.tick(t, &mut rng) {
                Ok(next) => {
                    sent += 1;
                    t = next;
                }
                Err(next) => t = next,
            }
        }
        // 8 Mbps of 1000-byte packets = 1000 pkt/s while ON: about 100_000 packets.
        let expect = 400.0 * 0.25 * 1000.0;
        assert!((sent as f64 / expect - 1.0).abs() < 0.05, "{sent}");
    }
}
