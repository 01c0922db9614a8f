//! Edge-to-edge overlay loops between two Linux edges (`csfq dp loop ingress` and
//! `csfq dp loop egress`): [`csfq_algo::overlay`]'s controllers on real packets.
//!
//! - **Ingress** (the router where the loops' traffic enters): an htb root qdisc on the
//!   interface towards the interior with one class per loop at rate `lambda`, its queue the
//!   loop's ingress queue ([`crate::htb`]); `bpf/loop.bpf.c`'s `csfq_loop_in` puts each
//!   packet whose destination is in a loop's prefix into that loop's class. Every `tau`
//!   the daemon reads each class's departures from the kernel (the input rate the
//!   controller measures) and sends the loop's [`Control`](csfq_algo::overlay::Control) as a UDP message on htb's
//!   direct path, which bypasses the loops' queues and is served first: the message
//!   enters the network right behind the last byte the shaper released, in band from
//!   the shaper's output on (where the paper's loop begins), delayed and lost as the data
//!   is. Each [`Feedback`](csfq_algo::overlay::Feedback) sets the class's rate to what AIMD-ER (Eqs. 6 and 7) gives.
//! - **Egress** (the router where they leave): `csfq_loop_out` on the interface from the
//!   interior counts each loop's bytes and writes into each control message the count and
//!   the time it arrived; the daemon runs [`Egress`](csfq_algo::overlay::Egress) on those (intervals `T` from the first
//!   control) and answers each interval with `mu(k)` and `a(k)`.
//!
//! The interior routers run nothing: a plain FIFO. Both daemons publish their state in a
//! pinned map that `csfq dp stats` reads, and remove everything they made when they stop
//! (Ctrl-C, SIGTERM or `--duration`).
//!
//! Byte counts are Ethernet frames on both sides (htb counts frames), so a loop's packet
//! `sigma` defaults to a full-size frame, 1514 bytes.

mod egress;
mod ingress;
mod pins;
mod wire;

pub use crate::report::LoopStats;
pub use egress::run_egress;
pub use ingress::run_ingress;
pub(crate) use pins::{EGRESS, INGRESS};
pub use wire::Message;

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::time::Duration;

use csfq_algo::overlay::{LoopParams, Service};
use csfq_algo::time::Nanos;

use crate::abi::{WeightKey, LOOP_MAX};
use crate::error::InvalidSetting;
use crate::settings::Prefix;

/// The htb root's major number at the ingress (`cf:`); loop `i`'s class is `cf:(10 + i)`.
pub const HTB_MAJOR: u16 = 0xcf;

/// A loop: the destinations whose traffic it carries, and what it sells.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopSpec {
    /// The destination prefix.
    pub prefix: IpAddr,
    /// Its length in bits.
    pub len: u8,
    /// Best effort, an assured rate or a quasi-leased line.
    pub service: Service,
}

impl FromStr for LoopSpec {
    type Err = String;

    /// `PREFIX/LEN[,assured=RATE[,gamma=G][,backoff=mu|lambda]]` or `PREFIX/LEN,leased=RATE`,
    /// e.g. `10.0.6.0/24,assured=4mbit`. `backoff`: what an assured loop's decrease scales,
    /// the egress rate `mu` (Section 7.4's formula, the default) or the ingress rate
    /// `lambda` (its prose).
    fn from_str(s: &str) -> Result<Self, String> {
        let expected = "expected PREFIX/LEN[,assured=RATE[,gamma=G][,backoff=mu|lambda]] or \
             PREFIX/LEN,leased=RATE, e.g. 10.0.6.0/24,assured=4mbit";
        let mut parts = s.split(',');
        let Prefix { addr: prefix, len } = parts
            .next()
            .unwrap_or_default()
            .parse::<Prefix>()
            .map_err(|e| format!("{e}; {expected}"))?;
        let (mut assured, mut gamma, mut leased, mut on_ingress) = (None, None, None, None);
        for p in parts {
            let (k, v) = p
                .split_once('=')
                .ok_or_else(|| format!("`{p}`: {expected}"))?;
            let rate = || {
                crate::units::parse_rate(v)
                    .map_err(|e| format!("`{v}`: {e}"))
                    .and_then(|r| {
                        if r == 0 {
                            Err(format!("`{k}={v}`: a rate above 0"))
                        } else {
                            Ok(r as f64)
                        }
                    })
            };
            match k {
                "assured" => assured = Some(rate()?),
                "leased" => leased = Some(rate()?),
                "gamma" => {
                    gamma = Some(
                        v.parse::<f64>()
                            .ok()
                            .filter(|g| *g > 0.0 && *g < 1.0)
                            .ok_or_else(|| format!("gamma `{v}` is not in (0, 1)"))?,
                    )
                }
                "backoff" => {
                    on_ingress = Some(match v {
                        "mu" => false,
                        "lambda" => true,
                        _ => return Err(format!("backoff `{v}`: `mu` or `lambda`")),
                    })
                }
                _ => return Err(format!("`{k}` is not a loop option; {expected}")),
            }
        }
        let service = match (assured, leased) {
            (Some(_), Some(_)) => return Err(format!("`{s}`: assured or leased, not both")),
            (Some(rate_bps), None) => Service::Assured {
                rate_bps,
                // Section 7.4 asks beta < gamma < 1 and gives no value; the simulator's
                // default (crates/csfq-sim/src/config/overlay.rs says why).
                gamma: gamma.unwrap_or(0.99),
                on_ingress_rate: on_ingress.unwrap_or(false),
            },
            (None, Some(rate_bps)) => Service::QuasiLeased { rate_bps },
            (None, None) => Service::BestEffort,
        };
        if (gamma.is_some() || on_ingress.is_some()) && assured.is_none() {
            return Err(format!("`{s}`: gamma and backoff go with assured=RATE"));
        }
        Ok(LoopSpec {
            prefix,
            len,
            service,
        })
    }
}

impl LoopSpec {
    /// A byte that tells loops apart (FNV-1a of the prefix and its length), carried by
    /// each control so that an egress listing the loops in another order notices.
    pub fn tag(&self) -> u8 {
        let k = self.key();
        let mut h: u32 = 0x811c_9dc5;
        for b in k.addr.iter().chain(&k.prefixlen.to_le_bytes()) {
            h = (h ^ u32::from(*b)).wrapping_mul(0x0100_0193);
        }
        (h ^ (h >> 8) ^ (h >> 16) ^ (h >> 24)) as u8
    }

    fn key(&self) -> WeightKey {
        Prefix {
            addr: self.prefix,
            len: self.len,
        }
        .key()
    }
}

/// The ingress daemon's settings.
#[derive(Debug, Clone)]
pub struct IngressSettings {
    /// The interface towards the interior.
    pub dev: String,
    /// The egress daemon's address.
    pub egress: SocketAddr,
    /// The loops, in the order the egress lists them.
    pub loops: Vec<LoopSpec>,
    /// `tau`.
    pub tau: Duration,
    /// The highest rate a loop may reach (the interface's), bit/s.
    pub max_rate_bps: u64,
    /// `sigma`, bytes.
    pub packet_bytes: u32,
    /// Each loop's ingress queue, packets.
    pub queue_packets: u32,
    /// Stop after this long.
    pub duration: Option<Duration>,
}

/// The egress daemon's settings.
#[derive(Debug, Clone)]
pub struct EgressSettings {
    /// The interface from the interior.
    pub dev: String,
    /// Where control messages come to.
    pub listen: SocketAddr,
    /// The loops, in the order the ingress lists them.
    pub loops: Vec<LoopSpec>,
    /// `T`.
    pub interval: Duration,
    /// Stop after this long.
    pub duration: Option<Duration>,
}

pub(super) fn check_loops(loops: &[LoopSpec]) -> Result<(), InvalidSetting> {
    if loops.is_empty() || loops.len() > LOOP_MAX {
        return Err(InvalidSetting::new(
            "loop",
            format!("give 1 to {LOOP_MAX} loops (--loop PREFIX/LEN)"),
        ));
    }
    for (i, a) in loops.iter().enumerate() {
        if loops[..i].iter().any(|b| b.key() == a.key()) {
            return Err(InvalidSetting::new(
                "loop",
                format!("{}/{} is given twice", a.prefix, a.len),
            ));
        }
    }
    Ok(())
}

pub(super) fn check_period(field: &'static str, d: Duration) -> Result<Nanos, InvalidSetting> {
    if d < Duration::from_millis(1) || d > Duration::from_secs(10) {
        return Err(InvalidSetting::new(field, "must be between 1 ms and 10 s"));
    }
    Ok(Nanos(d.as_nanos() as u64))
}

impl IngressSettings {
    /// Each loop's parameters: the paper's (Section 7), with `sigma` and the top rate set.
    pub fn params(&self) -> Result<Vec<LoopParams>, InvalidSetting> {
        check_loops(&self.loops)?;
        let tau = check_period("tau", self.tau)?;
        if !(64..=65_535).contains(&self.packet_bytes) {
            return Err(InvalidSetting::new(
                "packet-bytes",
                "must be 64 to 65535 bytes",
            ));
        }
        if self.max_rate_bps < 100_000 || self.max_rate_bps > 1_000_000_000_000 {
            return Err(InvalidSetting::new(
                "rate",
                "must be 100 kbit/s to 1 Tbit/s",
            ));
        }
        if !(1..=100_000).contains(&self.queue_packets) {
            return Err(InvalidSetting::new("queue", "must be 1 to 100000 packets"));
        }
        let max = self.max_rate_bps as f64;
        self.loops
            .iter()
            .map(|l| {
                let per_tau = self.packet_bytes as f64 * 8.0 / tau.as_secs_f64();
                let floor = per_tau.min(max);
                if let Service::Assured { rate_bps, .. } | Service::QuasiLeased { rate_bps } =
                    l.service
                {
                    if rate_bps > max {
                        return Err(InvalidSetting::new(
                            "loop",
                            format!("{}/{}: its rate is above --rate", l.prefix, l.len),
                        ));
                    }
                }
                Ok(LoopParams {
                    packet_bytes: self.packet_bytes,
                    alpha_bps: per_tau,
                    initial_rate_bps: floor,
                    min_rate_bps: floor,
                    service: l.service,
                    ..LoopParams::new(tau, max)
                })
            })
            .collect()
    }
}

pub(super) fn classid(i: usize) -> u32 {
    (u32::from(HTB_MAJOR) << 16) | (0x10 + i as u32)
}

pub(super) fn pid() -> u32 {
    std::process::id()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_specs_parse_and_refuse_clearly() {
        let l: LoopSpec = "10.0.6.0/24,assured=4mbit".parse().unwrap();
        assert_eq!(l.len, 24);
        assert!(matches!(l.service, Service::Assured { rate_bps, .. } if rate_bps == 4e6));
        let l: LoopSpec = "2001:db8::/32,leased=1gbit".parse().unwrap();
        assert!(matches!(l.service, Service::QuasiLeased { rate_bps } if rate_bps == 1e9));
        assert_eq!(
            "10.0.6.0/24".parse::<LoopSpec>().unwrap().service,
            Service::BestEffort
        );
        // Prefixes (shared with the edge's weight classes): no bits past the length.
        for good in ["0.0.0.0/0", "::/0", "10.0.0.128/25", "2001:db8:8000::/33"] {
            assert!(good.parse::<Prefix>().is_ok(), "{good}");
        }
        for bad in [
            "10.0.0.64/25",
            "2001:db8:4000::/33",
            "10.0.0.1/33",
            "10.0.0.1",
        ] {
            assert!(bad.parse::<Prefix>().is_err(), "{bad}");
        }
        assert!("10.0.1.1/24=2".parse::<crate::WeightClass>().is_err());
        for bad in [
            "10.0.6.0",
            "10.0.6.0/33",
            "10.0.6.0/24,assured=4mbit,leased=1mbit",
            "10.0.6.0/24,gamma=0.9",
            "10.0.6.0/24,backoff=lambda",
            "10.0.6.0/24,assured=4mbit,backoff=ingress",
            "10.0.6.0/24,assured=4mbit,gamma=1.5",
            "10.0.6.0/24,weight=2",
            "10.0.6.1/24",
            "2001:db8::1/32",
            "10.0.6.0/24,assured=0",
        ] {
            assert!(bad.parse::<LoopSpec>().is_err(), "{bad}");
        }
    }
}
