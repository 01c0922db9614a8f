//! The CS-FNE core (`bpf/csfne.bpf.c`): no per-flow state; the number of active flows
//! estimated from how often an arrival matches a packet drawn from the queue (Kim's
//! thesis, Eqs. 3-2 to 3-4), `CL = C / N_act`, and above the target queue a drop with
//! probability `max(0, 1 - CL/label)` (Section 3.2.3). The queue is a virtual one at `C`
//! with a ring of the fingerprints it holds (`csfq_algo::csfne_fixed`). Its edges are the
//! CSFQ edge with the TSW meter (`EdgeSettings::meter`).

use crate::abi::{CsfneConfigRaw, CsfneStateRaw, CSFNE_RING_MAX};
use crate::attach::{attach_bottleneck, AttachOutcome};
use crate::error::{AttachError, SysError};
use crate::pins::{read_entry, BPF_F_LOCK};
use crate::program::{nothing_after, nothing_before, Pinned, Program};
use crate::programs::core::{site_of, vq_bytes_at, CoreTrust};
use crate::report::{CsfneStats, InterfaceStats};
use crate::role::Role;
use crate::settings::{clock, clock_name, four_ticks, Clock, BYTES, RATE, WINDOW};
use crate::sys::monotonic_ns;

/// The CS-FNE core's program.
pub(crate) static CSFNE: Program = Program {
    role: Role::Csfne,
    object: aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/csfne.bpf.o")),
    function: "csfq_csfne",
    config: "csfne_config",
    flows: None,
    seeded: true,
    pins: &[
        ("csfne_config", "config"),
        ("counters", "counters"),
        ("csfne_state", "state"),
    ],
    read,
    before_detach: nothing_before,
    after_detach: nothing_after,
};

/// The CS-FNE core's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct CsfneSettings {
    /// `C`, bit/s: the rate of the shaper (tbf, htb) on this interface.
    pub rate_bps: u64,
    /// The virtual queue's size, bytes: the shaper's limit (`csfq dp csfne attach` reads it).
    pub limit_bytes: u32,
    /// `K` of `r_hit`, `r_miss` and the unlabeled price, ns. Default 100 ms (CSFQ's `K`; the
    /// thesis gives none).
    pub k_ns: u64,
    /// The target queue, bytes: below it nothing is dropped by Eq. (2). Default 16 KB or
    /// half the limit, the smaller (the thesis gives no value; 16 KB is RED's first
    /// threshold in its simulations: `csfq_algo::csfne::CsfneParams::new`).
    pub target_bytes: Option<u32>,
    /// Ring entries: the most queued packets an arrival is compared with (the queue's
    /// newest, when it holds more). A power of two up to [`CSFNE_RING_MAX`], the default
    /// (the map holds that many whatever is used) on a new attach; `None` keeps an attached
    /// core's, whose size cannot change in place (another is refused).
    pub ring: Option<u32>,
    /// Whose labels count, as for the CSFQ core.
    pub trust: CoreTrust,
    /// The clock it reads: the coarse one is refused unless a tick is at most a quarter of
    /// the limit's drain time at `C` and of `K`, as for the CSFQ core. Default:
    /// [`Clock::Fine`].
    pub clock: Clock,
    /// Drop what the core cannot parse (non-IP frames but ARP, truncated headers) instead
    /// of judging it as unlabeled traffic (`drop_unparsed`). Default: judge it.
    pub drop_unparsed: bool,
}

impl CsfneSettings {
    /// Defaults for a link of `rate_bps` whose shaper holds `limit_bytes`.
    pub fn with_limit(rate_bps: u64, limit_bytes: u32) -> Self {
        CsfneSettings {
            rate_bps,
            limit_bytes,
            k_ns: 100_000_000,
            target_bytes: None,
            ring: None,
            trust: CoreTrust::Any,
            clock: Clock::Fine,
            drop_unparsed: false,
        }
    }

    /// The target queue these settings give, bytes.
    pub fn target(&self) -> u32 {
        self.target_bytes.unwrap_or(
            csfq_algo::csfne::CsfneParams::new(self.rate_bps as f64, self.limit_bytes).target_bytes,
        )
    }

    /// The program's configuration, after the ranges the command line offers.
    pub(crate) fn raw(&self) -> Result<CsfneConfigRaw, AttachError> {
        RATE.check("rate", self.rate_bps)?;
        BYTES.check("limit", self.limit_bytes.into())?;
        WINDOW.check("k", self.k_ns)?;
        let target = self.target();
        if target > self.limit_bytes {
            return Err(AttachError::invalid("target", "must not exceed the limit"));
        }
        let ring = self.ring.unwrap_or(CSFNE_RING_MAX as u32);
        if !ring.is_power_of_two() || ring as usize > CSFNE_RING_MAX {
            return Err(AttachError::invalid(
                "ring",
                format!("{ring} entries: a power of two from 1 to {CSFNE_RING_MAX}"),
            ));
        }
        let (clock, tick) = clock(self.clock, |tick| {
            four_ticks(
                tick,
                self.rate_bps,
                self.limit_bytes,
                &[("k", "K", self.k_ns)],
            )
        })?;
        let (trust, trusted) = self.trust.raw()?;
        Ok(CsfneConfigRaw {
            capacity_bps: self.rate_bps,
            k_ns: self.k_ns,
            target_bytes: target,
            limit_bytes: self.limit_bytes,
            ring,
            trust,
            trusted,
            clock,
            tick_ns: tick,
            drop_unparsed: u32::from(self.drop_unparsed),
            ..Default::default()
        })
    }
}

/// Attaches the CS-FNE core to `dev`'s egress, or updates its settings if attached
/// already (its rates, virtual queue and ring kept).
pub fn attach_csfne(dev: &str, s: &CsfneSettings) -> Result<AttachOutcome, AttachError> {
    attach_bottleneck(
        &CSFNE,
        "csfq dp csfne attach",
        dev,
        s.raw()?,
        None,
        |d, raw| {
            // The ring's entries are placed by the packets admitted modulo its size: another
            // size would read them out of order.
            let now: CsfneConfigRaw =
                read_entry(&CSFNE.config_pin(d), 0, "the CS-FNE configuration")?;
            if s.ring.is_some_and(|r| r != now.ring) {
                return Err(AttachError::invalid(
                    "ring",
                    format!(
                        "the CS-FNE core on {dev} has a ring of {} entries, which cannot change \
                     in place (--ring {} asks for another); detach it first (csfq dp detach \
                     --dev {dev}) or leave out --ring",
                        now.ring, raw.ring
                    ),
                ));
            }
            raw.ring = now.ring;
            Ok(())
        },
    )
}

/// Reads the configuration and state: `r_hit`, `r_miss`, `N_act`, `CL`, the virtual
/// queue and how many of the ring's packets it holds.
fn read(p: &Pinned<'_>, stats: &mut InterfaceStats) -> Result<(), SysError> {
    let c: CsfneConfigRaw = read_entry(&CSFNE.config_pin(p.dir), 0, "the CS-FNE configuration")?;
    let state = p.path(CSFNE.pin_of("csfne_state"));
    let s: CsfneStateRaw = read_entry(&state, BPF_F_LOCK, "the CS-FNE state")?;
    let now = monotonic_ns();
    let model = csfq_algo::csfne_fixed::FixedCsfneCore {
        hit: csfq_algo::fixed::FixedRate {
            rate_bps: s.hit.rate_bps,
            ..Default::default()
        },
        miss: csfq_algo::fixed::FixedRate {
            rate_bps: s.miss.rate_bps,
            ..Default::default()
        },
        unlabeled: Default::default(),
        vq_finish_ns: s.vq_finish_ns,
        admitted: s.admitted,
        ring: s
            .ring
            .iter()
            .map(|e| csfq_algo::csfne_fixed::RingEntry {
                fingerprint: e.fingerprint,
                finish_ns: e.finish_ns,
            })
            .collect(),
    };
    let params = c.params();
    stats.csfne = Some(CsfneStats {
        capacity_bps: c.capacity_bps,
        hit_bps: s.hit.rate_bps,
        miss_bps: s.miss.rate_bps,
        active_flows: model.active_flows(),
        cl_bps: model.cl_bps(&params),
        k_ns: c.k_ns,
        target_bytes: u64::from(c.target_bytes),
        queue_bytes: vq_bytes_at(s.vq_finish_ns, now, c.capacity_bps),
        limit_bytes: u64::from(c.limit_bytes),
        ring: c.ring,
        ring_queued: model.queued(&params, now),
        admitted: s.admitted,
        clock: clock_name(c.clock),
        site: site_of(p, c.trust, &c.trusted, c.drop_unparsed),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InvalidSetting;

    /// The ring's size is a power of two up to the map's; the target within the limit; each
    /// refusal names its field.
    #[test]
    fn settings_are_checked_naming_the_field() {
        let ok = CsfneSettings::with_limit(10_000_000, 65_536);
        let raw = ok.raw().unwrap();
        assert_eq!(
            (raw.ring, raw.target_bytes, raw.k_ns),
            (4096, 16_000, 100_000_000)
        );
        let field = |s: CsfneSettings| match s.raw() {
            Err(AttachError::Invalid(InvalidSetting { field, .. })) => field,
            other => panic!("{other:?}"),
        };
        for ring in [0, 3, 8192] {
            assert_eq!(
                field(CsfneSettings {
                    ring: Some(ring),
                    ..ok.clone()
                }),
                "ring"
            );
        }
        assert_eq!(
            field(CsfneSettings {
                target_bytes: Some(70_000),
                ..ok.clone()
            }),
            "target"
        );
        // A small limit: the target is half of it.
        assert_eq!(
            CsfneSettings::with_limit(10_000_000, 20_000)
                .raw()
                .unwrap()
                .target_bytes,
            10_000
        );
    }
}
