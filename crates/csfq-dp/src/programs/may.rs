//! MAY at a bottleneck (`bpf/may.bpf.c`), with no edge and no labels: a bounded table of
//! the flows that lost a packet, each dropped in proportion to its past drops (the MAY
//! paper's Eqs. 1-3; parameters from its Table I and Section IV).

use aya::maps::{Array, Map, MapData};

use crate::abi::{MayConfigRaw, MaySlotRaw, MayStateRaw};
use crate::attach::{attach_bottleneck, check_pinned_table, AttachOutcome};
use crate::error::{AttachError, InvalidSetting, SysError};
use crate::pins::{read_entry, BPF_F_LOCK};
use crate::program::{nothing_after, nothing_before, Pinned, Program};
use crate::report::{InterfaceStats, MayStats};
use crate::role::Role;
use crate::settings::{clock, clock_name, Bound, Clock, DEFAULT_FLOWS, TABLE};

/// MAY's program.
pub(crate) static MAY: Program = Program {
    role: Role::May,
    object: aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/may.bpf.o")),
    function: "csfq_may",
    config: "may_config",
    flows: Some("may_flows"),
    seeded: true,
    pins: &[
        ("may_config", "config"),
        ("counters", "counters"),
        ("may_state", "state"),
        ("may_flows", "flows"),
    ],
    read,
    before_detach: nothing_before,
    after_detach: nothing_after,
};

/// MAY's link rate, bit/s: at least 1 kbit/s (its fixed point's least rate).
const MAY_RATE: Bound = Bound {
    lo: 1_000,
    hi: crate::settings::RATE.hi,
    unit: "bit/s",
    words: "from 1kbit to 4tbit",
};

/// `Delta`, ns.
const INTERVAL: Bound = Bound {
    lo: 1_000_000,
    hi: 60_000_000_000,
    unit: "ns",
    words: "from 1ms to 60s",
};

/// `T0`, ns.
const TIMEOUT: Bound = Bound {
    lo: 1_000_000,
    hi: 3_600_000_000_000,
    unit: "ns",
    words: "from 1ms to 1h",
};

/// MAY's settings (the MAY paper's Table I; defaults from its Section IV).
#[derive(Debug, Clone, PartialEq)]
pub struct MaySettings {
    /// `C`, bit/s: the rate of the shaper (tbf, htb) on this interface.
    pub rate_bps: u64,
    /// The table's size, entries, rounded up to whole sets of [`crate::abi::FLOW_WAYS`] (a flow sampled
    /// into a full set takes the entry of the flow, of its two sets' eight, whose last
    /// drop is the oldest) [default: [`crate::DEFAULT_FLOWS`] on a new attach; an attached MAY
    /// keeps its table].
    pub table: Option<u32>,
    /// `Delta`, ns (1 s).
    pub interval_ns: u64,
    /// `u0` (0.98).
    pub target_utilization: f64,
    /// `kappa` (0.1).
    pub gain: f64,
    /// `q_w` (0.05).
    pub q_w: f64,
    /// `T0`, ns (64 s).
    pub timeout_ns: u64,
    /// `S0`: a packet of a flow not in the table is sampled with probability `1/S0`
    /// (1000).
    pub s0: f64,
    /// Count only the bytes MAY passes in the utilization (the default: Eq. 3's rate into
    /// the queue); off, every arriving byte counts, MAY's own drops included.
    pub passed_only: bool,
    /// Keep `v` at or below the `v` that drops every packet of the flow with the largest
    /// `delta` the interval's arrivals found (the default; `csfq_algo::may`, "v's
    /// ceiling"); off, the paper's controller, which winds up under a flow at several
    /// times the link and then drops every flow in the table for some fifteen intervals.
    pub ceiling: bool,
    /// The clock it reads. On the coarse one (the kernel's tick counter, see
    /// [`crate::tick_ns`]) each interval's length and each entry's age are known to a tick,
    /// so it is refused unless `Delta` and `T0` are each at least a hundred ticks (the
    /// utilization within 1%). Default: [`Clock::Fine`].
    pub clock: Clock,
}

impl MaySettings {
    /// The paper's parameters for a link of `rate_bps`, with `v`'s ceiling.
    pub fn new(rate_bps: u64) -> Self {
        let p = csfq_algo::may::MayParams::new(rate_bps as f64, 0);
        MaySettings {
            rate_bps,
            table: None,
            interval_ns: p.update_interval.0,
            target_utilization: p.target_utilization,
            gain: p.gain,
            q_w: p.q_w,
            timeout_ns: p.timeout.0,
            s0: p.s0,
            passed_only: p.utilization == csfq_algo::may::MayUtilization::Passed,
            ceiling: p.ceiling == csfq_algo::may::MayCeiling::Heaviest,
            clock: Clock::Fine,
        }
    }

    /// The program's configuration: `csfq_algo::may_fixed`'s conversion, after the
    /// ranges the command line offers.
    pub fn raw(&self) -> Result<MayConfigRaw, InvalidSetting> {
        let invalid = InvalidSetting::new;
        MAY_RATE.check("rate", self.rate_bps)?;
        INTERVAL.check("interval", self.interval_ns)?;
        TIMEOUT.check("timeout", self.timeout_ns)?;
        // The interval's arrivals are counted up to 2^40 bytes: four times the link's rate
        // over an interval must fit.
        let bytes_at_4c = self.rate_bps as f64 / 8.0 * (self.interval_ns as f64 / 1e9) * 4.0;
        if bytes_at_4c > csfq_algo::may_fixed::ARRIVED_MAX as f64 {
            return Err(invalid(
                "interval",
                format!(
                    "{} ns at {} bit/s: an interval's arrivals could pass the 2^40 bytes it \
                     counts; shorten the interval",
                    self.interval_ns, self.rate_bps
                ),
            ));
        }
        let (clock, tick) = clock(self.clock, |tick| {
            for (field, what, v) in [
                ("interval", "Delta", self.interval_ns),
                ("timeout", "T0", self.timeout_ns),
            ] {
                if v < 100 * tick {
                    return Err(InvalidSetting::new(
                        field,
                        format!(
                            "with the coarse clock, whose tick is {} us here, {what} ({} us) \
                             must be at least a hundred ticks, so that it is measured to 1% \
                             (use the fine clock, or a larger value)",
                            tick / 1000,
                            v / 1000
                        ),
                    ));
                }
            }
            Ok(())
        })?;
        if let Some(n) = self.table {
            TABLE.check("table", n.into())?;
        }
        let p = csfq_algo::may::MayParams {
            update_interval: csfq_algo::Nanos(self.interval_ns),
            target_utilization: self.target_utilization,
            gain: self.gain,
            q_w: self.q_w,
            timeout: csfq_algo::Nanos(self.timeout_ns),
            s0: self.s0,
            ..csfq_algo::may::MayParams::new(self.rate_bps as f64, 0)
        };
        let fixed = csfq_algo::may_fixed::FixedMayParams::from_params(&p).map_err(|e| {
            let field = match e.field {
                "target_utilization" => "target-utilization",
                "q_w" => "q-w",
                "s0" => "s0",
                "gain" => "gain",
                other => other,
            };
            invalid(field, format!("must be {}", e.expected))
        })?;
        Ok(MayConfigRaw {
            params: csfq_algo::may_fixed::FixedMayParams {
                passed_only: u32::from(self.passed_only),
                ceiling: u32::from(self.ceiling),
                ..fixed
            },
            clock,
            tick_ns: tick,
            ..MayConfigRaw::default()
        })
    }
}

/// Attaches MAY to `dev`'s egress, or updates its settings if attached already (its
/// table and `v` kept).
pub fn attach_may(dev: &str, s: &MaySettings) -> Result<AttachOutcome, AttachError> {
    let table = Some(s.table.unwrap_or(DEFAULT_FLOWS));
    attach_bottleneck(&MAY, "csfq dp may attach", dev, s.raw()?, table, |d, _| {
        check_pinned_table(dev, d, "MAY", "table", s.table)
    })
}

/// Reads MAY's configuration, `v`, the utilization and its table's occupancy.
fn read(p: &Pinned<'_>, stats: &mut InterfaceStats) -> Result<(), SysError> {
    let config: MayConfigRaw = read_entry(&MAY.config_pin(p.dir), 0, "the MAY configuration")?;
    let c = &config.params;
    let state = p.path(MAY.pin_of("may_state"));
    let s: MayStateRaw = read_entry(&state, BPF_F_LOCK, "the MAY state")?;
    let flows = MapData::from_pin(p.path(MAY.pin_of("may_flows")))
        .map_err(|e| SysError::kernel("opening MAY's table", e))?;
    let table_size = flows
        .info()
        .map_err(|e| SysError::kernel("reading the table's size", e))?
        .max_entries();
    let flows =
        Map::from_map_data(flows).map_err(|e| SysError::kernel("opening MAY's table", e))?;
    let slots: Array<&MapData, MaySlotRaw> =
        Array::try_from(&flows).map_err(|e| SysError::kernel("opening MAY's table", e))?;
    let (mut entries, mut live) = (0u64, 0u64);
    for i in 0..table_size {
        let slot = slots
            .get(&i, 0)
            .map_err(|e| SysError::kernel("reading MAY's table", e))?;
        if slot.key.family == 0 {
            continue;
        }
        entries += 1;
        if s.last_update_ns.saturating_sub(slot.entry.ts_ns) <= c.timeout_ns {
            live += 1;
        }
    }
    stats.may = Some(MayStats {
        capacity_bps: c.capacity_bps,
        v: s.v_q32 as f64 / (1u64 << 32) as f64,
        utilization: s.util_q16 as f64 / 65536.0,
        target_utilization: c.u0_q16 as f64 / 65536.0,
        utilization_counts: if c.counts_passed_only() {
            "passed"
        } else {
            "arrivals"
        },
        ceiling: c.ceiling != 0,
        interval_ns: c.interval_ns,
        intervals: s.epoch,
        table_entries: entries,
        table_live: live,
        table_size,
        clock: clock_name(config.clock),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{CLOCK_COARSE, CLOCK_FINE};
    use crate::sys::tick_ns;
    use crate::InvalidSetting;

    /// MAY on the coarse clock: the paper's `Delta` (1 s) and `T0` (64 s) are far above a
    /// hundred ticks; one tick short of a hundred, each is refused, naming its field, and
    /// accepted on the fine clock.
    #[test]
    fn may_on_the_coarse_clock_needs_a_hundred_ticks() {
        let tick = tick_ns();
        assert!(tick > 0);
        let ok = MaySettings {
            clock: Clock::Coarse,
            ..MaySettings::new(10_000_000)
        };
        let raw = ok.raw().unwrap();
        assert_eq!((raw.clock, raw.tick_ns), (CLOCK_COARSE, tick));
        assert_eq!(
            MaySettings::new(10_000_000).raw().unwrap().clock,
            CLOCK_FINE
        );
        let field = |s: &MaySettings| match s.raw() {
            Err(InvalidSetting { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        let short = 100 * tick - 1;
        for (s, want) in [
            (
                MaySettings {
                    interval_ns: short,
                    ..ok.clone()
                },
                "interval",
            ),
            (
                MaySettings {
                    timeout_ns: short,
                    ..ok.clone()
                },
                "timeout",
            ),
        ] {
            assert_eq!(field(&s), want);
            assert!(MaySettings {
                clock: Clock::Fine,
                ..s
            }
            .raw()
            .is_ok());
        }
    }
}
