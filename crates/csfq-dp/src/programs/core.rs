//! The core (`bpf/core.bpf.c`): keeps only aggregate state (`A`, `F`, `alpha`, a virtual
//! queue modeling the shaper it sits in front of) and drops with probability
//! `max(0, 1 - alpha/label)`, relabeling to `min(label, alpha)` (the CSFQ paper's Eqs. 2,
//! 4 and 5, Fig. 2).

use crate::abi::{CoreConfigRaw, CoreStateRaw, EST_HISTOGRAM, EST_PAPER, MAX_TRUSTED};
use crate::abi::{TRUST_ANY, TRUST_LISTED};
use crate::attach::{attach_bottleneck, AttachOutcome};
use crate::error::{AttachError, SysError};
use crate::pins::{read_entry, BPF_F_LOCK};
use crate::program::{nothing_after, nothing_before, Pinned, Program};
use crate::report::{CoreSite, CoreStats, InterfaceStats, ShaperNow};
use crate::role::Role;
use crate::settings::{clock, clock_name, four_ticks, Clock, BYTES, RATE, WINDOW};
use crate::sys::{ifindex, ifname, monotonic_ns};

/// The core's program.
pub(crate) static CORE: Program = Program {
    role: Role::Core,
    object: aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/core.bpf.o")),
    function: "csfq_core",
    config: "core_config",
    flows: None,
    seeded: false,
    pins: &[
        ("core_config", "config"),
        ("counters", "counters"),
        ("core_state", "state"),
    ],
    read,
    before_detach: nothing_before,
    after_detach: nothing_after,
};

/// The core's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreSettings {
    /// `C`, bit/s: the rate of the shaper (tbf, htb) on this interface.
    pub rate_bps: u64,
    /// `K_alpha`, ns. Default: twice the limit's drain time at the rate, within 1 ms and
    /// 1 s (`csfq_algo::csfq::scaled_window`; 105 ms for 64 KiB at 10 Mbit/s).
    pub k_alpha_ns: u64,
    /// `K_c`, ns. Default as `k_alpha_ns`.
    pub k_c_ns: u64,
    /// The virtual queue's size, bytes: set it to the shaper's limit. Default 64 KiB.
    pub limit_bytes: u32,
    /// Queue below which the core keeps `alpha = 0`, bytes. Default half the limit.
    pub threshold_bytes: Option<u32>,
    /// Buffer-overflow decreases of `alpha` between two updates of it. Default 29.
    pub overflow_budget: u32,
    /// How `alpha` is estimated. Default: the label histogram.
    pub estimator: csfq_algo::csfq::Estimator,
    /// Whose labels count. Default [`CoreTrust::Any`]; `csfq dp core attach` makes the
    /// operator choose.
    pub trust: CoreTrust,
    /// The clock the core reads. The coarse one (the kernel's tick counter, see
    /// [`crate::tick_ns`]) drains the virtual queue once a tick, which then looks up to one
    /// tick at `C` fuller than it is, so it is refused unless a tick is at most a quarter of
    /// the limit's drain time at `C`, of `K_alpha` and of `K_c`. Default: [`Clock::Auto`],
    /// the coarse clock where that holds (README "The programs' clock").
    pub clock: Clock,
    /// Drop what the core cannot parse (non-IP frames but ARP, truncated headers) instead
    /// of judging it as unlabeled traffic (`drop_unparsed`). Default: judge it.
    pub drop_unparsed: bool,
}

/// Whose labels the core believes. A label is only as good as the edge that wrote it: a
/// host wired to the core router, bypassing the edges, can write any label it likes, and
/// a low one is never dropped. Packets received on an interface that is not trusted are
/// judged as unlabeled traffic (one flow, priced by the rate of all of it) and leave with
/// their label overwritten; `untrusted` counts them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreTrust {
    /// Labels count whichever interface they arrive on.
    Any,
    /// Labels count only on packets received on these interfaces (those facing the
    /// island's edges and other cores), at most [`crate::abi::MAX_TRUSTED`].
    Interfaces(Vec<String>),
}

impl CoreTrust {
    /// `CSFQ_TRUST_*` and the trusted interfaces' indexes (0 ends the list), resolved here.
    pub(crate) fn raw(&self) -> Result<(u32, [u32; MAX_TRUSTED]), AttachError> {
        let mut trusted = [0u32; MAX_TRUSTED];
        let CoreTrust::Interfaces(names) = self else {
            return Ok((TRUST_ANY, trusted));
        };
        if names.is_empty() || names.len() > MAX_TRUSTED {
            return Err(AttachError::invalid(
                "trusted-from",
                format!("{} interfaces: name from 1 to {MAX_TRUSTED}", names.len()),
            ));
        }
        for (slot, name) in trusted.iter_mut().zip(names) {
            *slot = ifindex(name)?;
        }
        Ok((TRUST_LISTED, trusted))
    }
}

/// The virtual queue at `now_ns` of one whose last bit leaves at `finish_ns` at `rate_bps`.
pub(crate) fn vq_bytes_at(finish_ns: u64, now_ns: u64, rate_bps: u64) -> u64 {
    if finish_ns > now_ns {
        ((finish_ns - now_ns) as u128 * rate_bps as u128 / 8_000_000_000) as u64
    } else {
        0
    }
}

/// A core's place as its configuration (`trust`, `trusted`, `drop_unparsed`) and the
/// system now give it: the trusted interfaces' indexes and, where this process runs in the
/// program's namespace, each one's interface now by name and the shaper on its interface.
pub(crate) fn site_of(p: &Pinned<'_>, trust: u32, trusted: &[u32], drop_unparsed: u32) -> CoreSite {
    let listed = || trusted.iter().copied().take_while(|&i| i != 0);
    CoreSite {
        shaper_now: p
            .here()
            .then(|| crate::shaper::read_shaper(p.dev).ok())
            .flatten()
            .map(|s| ShaperNow {
                what: s.what,
                rate_bps: s.rate_bps,
                limit_bytes: s.limit_bytes,
            }),
        trusted_ifindexes: (trust == TRUST_LISTED).then(|| listed().collect()),
        trusted_now: if trust == TRUST_LISTED && p.here() {
            listed().map(|i| (i, ifname(i))).collect()
        } else {
            Vec::new()
        },
        drop_unparsed: drop_unparsed != 0,
    }
}

impl CoreSettings {
    /// Defaults for a link of `rate_bps` with a 64 KiB limit.
    pub fn new(rate_bps: u64) -> Self {
        Self::with_limit(rate_bps, 65_536)
    }

    /// Defaults for a link of `rate_bps` whose shaper holds `limit_bytes`.
    pub fn with_limit(rate_bps: u64, limit_bytes: u32) -> Self {
        let k = csfq_algo::csfq::scaled_window(rate_bps.max(1) as f64, limit_bytes).0;
        CoreSettings {
            rate_bps,
            k_alpha_ns: k,
            k_c_ns: k,
            limit_bytes,
            threshold_bytes: None,
            overflow_budget: 29,
            estimator: csfq_algo::csfq::Estimator::Histogram,
            trust: CoreTrust::Any,
            clock: Clock::Auto,
            drop_unparsed: false,
        }
    }

    /// The program's configuration, after the ranges the command line offers; the
    /// trusted interfaces' names resolved to their indexes here.
    fn raw(&self) -> Result<CoreConfigRaw, AttachError> {
        RATE.check("rate", self.rate_bps)?;
        BYTES.check("limit", self.limit_bytes.into())?;
        WINDOW.check("k-alpha", self.k_alpha_ns)?;
        WINDOW.check("k-c", self.k_c_ns)?;
        let threshold = self.threshold_bytes.unwrap_or(self.limit_bytes / 2);
        if threshold > self.limit_bytes {
            return Err(AttachError::invalid(
                "threshold",
                "must not exceed the limit",
            ));
        }
        let (clock, tick) = clock(self.clock, |tick| {
            four_ticks(
                tick,
                self.rate_bps,
                self.limit_bytes,
                &[
                    ("k-alpha", "K_alpha", self.k_alpha_ns),
                    ("k-c", "K_c", self.k_c_ns),
                ],
            )
        })?;
        let (trust, trusted) = self.trust.raw()?;
        Ok(CoreConfigRaw {
            capacity_bps: self.rate_bps,
            k_alpha_ns: self.k_alpha_ns,
            k_c_ns: self.k_c_ns,
            threshold_bytes: threshold,
            limit_bytes: self.limit_bytes,
            overflow_budget: self.overflow_budget,
            estimator: match self.estimator {
                csfq_algo::csfq::Estimator::Paper => EST_PAPER,
                csfq_algo::csfq::Estimator::Histogram => EST_HISTOGRAM,
            },
            trust,
            trusted,
            clock,
            tick_ns: tick,
            drop_unparsed: u32::from(self.drop_unparsed),
            ..Default::default()
        })
    }
}

/// Attaches the core to `dev`'s egress, or updates its settings if attached already.
pub fn attach_core(dev: &str, s: &CoreSettings) -> Result<AttachOutcome, AttachError> {
    attach_bottleneck(&CORE, "csfq dp core attach", dev, s.raw()?, None, |_, _| {
        Ok(())
    })
}

/// `A`, `F`, `alpha` and whether congested as of `idle_ns` after the virtual queue last
/// emptied, from the state the last packet left: the program updates them only at a packet,
/// so after traffic stops they would read as they were forever. `A` and `F` decay as Eq.
/// (3) decays a rate over a gap with no packet, `r e^(-T/K_alpha)`, over the time since the
/// queue emptied, not since the last arrival (which the state does not keep; it is at most
/// one drain of the limit earlier, so the reading is at most `e^(drain/K_alpha)` high). With
/// the histogram estimator a gap of `2 K_c` ends congestion and `alpha` as the program ends
/// a window that long; with the paper's estimator congestion ends once the decayed `A` is
/// below `C`, and `alpha` stays what the program keeps (it drops with it when traffic
/// resumes).
pub(crate) fn as_of_idle(
    s: &CoreStateRaw,
    c: &CoreConfigRaw,
    idle_ns: u64,
) -> (u64, u64, u64, bool) {
    let decay = (-(idle_ns as f64) / c.k_alpha_ns.max(1) as f64).exp();
    let a = (s.arrival.rate_bps as f64 * decay) as u64;
    let f = (s.accepted.rate_bps as f64 * decay) as u64;
    let congested = s.congested != 0
        && if c.estimator == EST_PAPER {
            a >= c.capacity_bps
        } else {
            idle_ns < 2 * c.k_c_ns
        };
    let alpha = if c.estimator != EST_PAPER && idle_ns >= 2 * c.k_c_ns {
        0
    } else {
        s.alpha_bps
    };
    (a, f, alpha, congested)
}

/// Reads the core's configuration and state (`A`, `F`, `alpha`, the virtual queue, as of
/// now: [`as_of_idle`]), and, where this process runs in its namespace, the shaper and the
/// trusted interfaces now.
fn read(p: &Pinned<'_>, stats: &mut InterfaceStats) -> Result<(), SysError> {
    let c: CoreConfigRaw = read_entry(&CORE.config_pin(p.dir), 0, "the core configuration")?;
    let state = p.path(CORE.pin_of("core_state"));
    let s: CoreStateRaw = read_entry(&state, BPF_F_LOCK, "the core state")?;
    let now = monotonic_ns();
    let queue_bytes = vq_bytes_at(s.vq_finish_ns, now, c.capacity_bps);
    // Before the first packet the virtual queue never held anything: idle since attach is
    // unknown, and nothing is decayed (every estimate is 0 then anyway).
    let idle_ns = if s.vq_finish_ns == 0 {
        0
    } else {
        now.saturating_sub(s.vq_finish_ns)
    };
    let (arrival_bps, accepted_bps, alpha_bps, congested) = as_of_idle(&s, &c, idle_ns);
    stats.core = Some(CoreStats {
        capacity_bps: c.capacity_bps,
        arrival_bps,
        accepted_bps,
        alpha_bps,
        idle_ns,
        clock: clock_name(c.clock),
        congested,
        queue_bytes,
        limit_bytes: u64::from(c.limit_bytes),
        site: site_of(p, c.trust, &c.trusted, c.drop_unparsed),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{CLOCK_COARSE, CLOCK_FINE};
    use crate::sys::tick_ns;
    use crate::InvalidSetting;

    /// After traffic stops the estimates read as of now, by hand: `A` 12.2 Mbit/s and `F`
    /// 9.9 at `K_alpha` = 100 ms read 12.2 e^-1 = 4.488 and 9.9 e^-1 = 3.642 100 ms after
    /// the queue emptied, still congested with alpha 6 (the histogram's window is not yet
    /// `2 K_c` idle); 200 ms after, uncongested with alpha 0, `A` 12.2 e^-2 = 1.651. With
    /// the paper's estimator congestion ends as soon as the decayed `A` is below `C` (10).
    /// Idle 0 changes nothing.
    #[test]
    fn estimates_decay_while_idle() {
        let mut c = CoreSettings::new(10_000_000).raw().unwrap();
        c.k_alpha_ns = 100_000_000;
        c.k_c_ns = 100_000_000;
        let mut s = CoreStateRaw {
            alpha_bps: 6_000_000,
            congested: 1,
            ..Default::default()
        };
        s.arrival.rate_bps = 12_200_000;
        s.accepted.rate_bps = 9_900_000;
        assert_eq!(
            as_of_idle(&s, &c, 0),
            (12_200_000, 9_900_000, 6_000_000, true)
        );
        let (a, f, alpha, congested) = as_of_idle(&s, &c, 100_000_000);
        assert!((a as f64 - 4_488_129.0).abs() < 2.0, "{a}");
        assert!((f as f64 - 3_642_006.0).abs() < 2.0, "{f}");
        assert_eq!((alpha, congested), (6_000_000, true));
        let (a, _, alpha, congested) = as_of_idle(&s, &c, 200_000_000);
        assert!((a as f64 - 1_651_090.0).abs() < 2.0, "{a}");
        assert_eq!((alpha, congested), (0, false));
        c.estimator = EST_PAPER;
        assert!(
            as_of_idle(&s, &c, 1_000_000).3,
            "A 12.1 > C: still congested"
        );
        assert!(!as_of_idle(&s, &c, 30_000_000).3, "A 9.04 < C");
        // The paper's estimator keeps its alpha while idle: the program uses it again.
        assert_eq!(as_of_idle(&s, &c, 200_000_000).2, 6_000_000);
    }

    /// The coarse clock's virtual queue drains once a tick, so the core refuses it unless a
    /// tick is at most a quarter of the limit's drain time, `K_alpha` and `K_c`, naming the
    /// setting; at 10 Mbit/s with 64 KB (52 ms to drain) it is taken, and written with the
    /// tick. The default, [`Clock::Auto`], takes the coarse clock where it would be accepted
    /// and the fine one where it would be refused.
    #[test]
    fn the_coarse_clock_needs_a_limit_and_windows_of_four_ticks() {
        let tick = tick_ns();
        assert!(tick > 0);
        let ok = CoreSettings {
            clock: Clock::Coarse,
            ..CoreSettings::new(10_000_000)
        };
        let raw = ok.raw().unwrap();
        assert_eq!((raw.clock, raw.tick_ns), (CLOCK_COARSE, tick));
        let auto = |s: &CoreSettings| {
            CoreSettings {
                clock: Clock::Auto,
                ..s.clone()
            }
            .raw()
            .unwrap()
            .clock
        };
        assert_eq!(CoreSettings::new(10_000_000).clock, Clock::Auto);
        assert_eq!(auto(&ok), CLOCK_COARSE);
        let field = |s: &CoreSettings| match s.raw() {
            Err(AttachError::Invalid(InvalidSetting { field, .. })) => field,
            other => panic!("{other:?}"),
        };
        // The limit drains in just under four ticks.
        let limit = (4 * tick * ok.rate_bps / 8_000_000_000 - 1) as u32;
        let short = CoreSettings {
            limit_bytes: limit,
            ..ok.clone()
        };
        assert_eq!(field(&short), "limit");
        assert_eq!(auto(&short), CLOCK_FINE);
        assert!(CoreSettings {
            clock: Clock::Fine,
            ..short
        }
        .raw()
        .is_ok());
        let k = 4 * tick - 1;
        assert_eq!(
            auto(&CoreSettings {
                k_c_ns: k,
                ..ok.clone()
            }),
            CLOCK_FINE
        );
        assert_eq!(
            field(&CoreSettings {
                k_alpha_ns: k,
                ..ok.clone()
            }),
            "k-alpha"
        );
        assert_eq!(field(&CoreSettings { k_c_ns: k, ..ok }), "k-c");
    }
}
