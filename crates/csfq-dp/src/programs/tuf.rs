//! The TUF core (`bpf/tuf.bpf.c`): the bufferless filter the TUF report validates its queue
//! against (its Fig. 4). Each window's arriving bytes are counted by tag; at its end the
//! threshold becomes the highest tag whose bytes at or below it fit the link; arrivals
//! tagged above it are dropped (`csfq_algo::tuf_fixed`). Its edges are the CSFQ edge
//! writing TUF tags (`EdgeSettings::tuf`).

use crate::abi::{TufConfigRaw, TufStateRaw};
use crate::attach::{attach_bottleneck, AttachOutcome};
use crate::error::{AttachError, SysError};
use crate::pins::read_entry;
use crate::program::{nothing_after, nothing_before, Pinned, Program};
use crate::programs::core::{site_of, vq_bytes_at, CoreTrust};
use crate::report::{InterfaceStats, TufStats};
use crate::role::Role;
use crate::settings::{clock, clock_name, four_ticks, Clock, BYTES, RATE, WINDOW};
use crate::sys::monotonic_ns;

/// The TUF core's program.
pub(crate) static TUF: Program = Program {
    role: Role::Tuf,
    object: aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/tuf.bpf.o")),
    function: "csfq_tuf",
    config: "tuf_config",
    flows: None,
    seeded: false,
    pins: &[
        ("tuf_config", "config"),
        ("counters", "counters"),
        ("tuf_state", "state"),
    ],
    read,
    before_detach: nothing_before,
    after_detach: nothing_after,
};

/// The TUF core's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct TufSettings {
    /// `C`, bit/s: the rate of the shaper (tbf, htb) on this interface.
    pub rate_bps: u64,
    /// The virtual queue's size, bytes: the shaper's limit (`csfq dp tuf attach` reads it).
    pub limit_bytes: u32,
    /// The window arrivals are counted over, ns. Default: as the CSFQ core's `K_c`, twice
    /// the limit's drain time at the rate, within 1 ms and 1 s (the report gives none: its
    /// queue needs no window).
    pub window_ns: u64,
    /// `K` of the untagged traffic's rate, ns. Default 100 ms (the report's `K`).
    pub k_ns: u64,
    /// Whose tags count, as for the CSFQ core.
    pub trust: CoreTrust,
    /// The clock it reads: the coarse one is refused unless a tick is at most a quarter of
    /// the limit's drain time and of the window, as for the CSFQ core. Default:
    /// [`Clock::Fine`].
    pub clock: Clock,
    /// Drop what the core cannot parse (non-IP frames but ARP, truncated headers) instead
    /// of judging it as unlabeled traffic (`drop_unparsed`). Default: judge it.
    pub drop_unparsed: bool,
}

impl TufSettings {
    /// Defaults for a link of `rate_bps` whose shaper holds `limit_bytes`.
    pub fn with_limit(rate_bps: u64, limit_bytes: u32) -> Self {
        TufSettings {
            rate_bps,
            limit_bytes,
            window_ns: csfq_algo::csfq::scaled_window(rate_bps.max(1) as f64, limit_bytes).0,
            k_ns: 100_000_000,
            trust: CoreTrust::Any,
            clock: Clock::Fine,
            drop_unparsed: false,
        }
    }

    /// The program's configuration, after the ranges the command line offers.
    pub(crate) fn raw(&self) -> Result<TufConfigRaw, AttachError> {
        RATE.check("rate", self.rate_bps)?;
        BYTES.check("limit", self.limit_bytes.into())?;
        WINDOW.check("window", self.window_ns)?;
        WINDOW.check("k", self.k_ns)?;
        let (clock, tick) = clock(self.clock, |tick| {
            four_ticks(
                tick,
                self.rate_bps,
                self.limit_bytes,
                &[("window", "the window", self.window_ns)],
            )
        })?;
        let (trust, trusted) = self.trust.raw()?;
        Ok(TufConfigRaw {
            capacity_bps: self.rate_bps,
            window_ns: self.window_ns,
            k_ns: self.k_ns,
            limit_bytes: self.limit_bytes,
            trust,
            trusted,
            clock,
            tick_ns: tick,
            drop_unparsed: u32::from(self.drop_unparsed),
            ..Default::default()
        })
    }
}

/// Attaches the TUF core to `dev`'s egress, or updates its settings if attached already
/// (its threshold, histograms and virtual queue kept).
pub fn attach_tuf(dev: &str, s: &TufSettings) -> Result<AttachOutcome, AttachError> {
    attach_bottleneck(&TUF, "csfq dp tuf attach", dev, s.raw()?, None, |_, _| {
        Ok(())
    })
}

/// Reads the configuration and state: the threshold, the windows, the untagged traffic's
/// rate, the virtual queue.
fn read(p: &Pinned<'_>, stats: &mut InterfaceStats) -> Result<(), SysError> {
    let c: TufConfigRaw = read_entry(&TUF.config_pin(p.dir), 0, "the TUF configuration")?;
    // Without BPF_F_LOCK: the words read are each written whole, and the histograms are
    // not read.
    let s: TufStateRaw = read_entry(&p.path(TUF.pin_of("tuf_state")), 0, "the TUF state")?;
    let threshold = s.threshold();
    stats.tuf = Some(TufStats {
        capacity_bps: c.capacity_bps,
        threshold,
        threshold_bps: csfq_algo::tuf::rate_of_tag(threshold as u16),
        window_ns: c.window_ns,
        windows: s.window,
        untagged_bps: s.untagged.rate_bps,
        queue_bytes: vq_bytes_at(s.vq_finish_ns, monotonic_ns(), c.capacity_bps),
        limit_bytes: u64::from(c.limit_bytes),
        clock: clock_name(c.clock),
        site: site_of(p, c.trust, &c.trusted, c.drop_unparsed),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InvalidSetting;

    /// The window follows the limit as the CSFQ core's `K_c` does; a window out of range
    /// is refused naming its field.
    #[test]
    fn settings_are_checked_naming_the_field() {
        let ok = TufSettings::with_limit(10_000_000, 65_536);
        let raw = ok.raw().unwrap();
        assert_eq!(
            raw.window_ns,
            crate::CoreSettings::with_limit(10_000_000, 65_536).k_c_ns
        );
        match (TufSettings {
            window_ns: 10,
            ..ok
        })
        .raw()
        {
            Err(AttachError::Invalid(InvalidSetting { field, .. })) => assert_eq!(field, "window"),
            other => panic!("{other:?}"),
        }
    }
}
