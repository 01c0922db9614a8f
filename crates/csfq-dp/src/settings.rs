//! What the programs' settings share: the ranges `csfq dp` accepts (one table for the
//! bounds several settings have in common, used by the programs' validation and, for
//! bytes, by the command line; MAY's own bounds are in its module), address prefixes,
//! the clock.

use std::net::IpAddr;
use std::str::FromStr;

use crate::abi::{WeightKey, CLOCK_COARSE, CLOCK_FINE};
use crate::error::InvalidSetting;

/// A weight in thousandths, as the programs read it (at least 1).
pub(crate) fn milli(weight: f64) -> u32 {
    ((weight * 1000.0).round() as u32).max(1)
}

/// A flow table's size when none is given (the edge's and MAY's).
pub const DEFAULT_FLOWS: u32 = 65_536;

/// A range a setting must lie in, with its unit and its ends as `csfq dp` spells them.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    /// The least value.
    pub lo: u64,
    /// The greatest value.
    pub hi: u64,
    /// The unit of the value as checked (`bit/s`, `bytes`, `ns`, `entries`).
    pub unit: &'static str,
    /// The range in the command line's words, e.g. `from 8bit to 4tbit`.
    pub words: &'static str,
}

/// A link's or a policer's rate, bit/s.
pub const RATE: Bound = Bound {
    lo: 8,
    hi: 4_000_000_000_000,
    unit: "bit/s",
    words: "from 8bit to 4tbit",
};

/// A queue's limit or a bucket, bytes.
pub const BYTES: Bound = Bound {
    lo: 1500,
    hi: csfq_algo::policer::MAX_BURST_BYTES as u64,
    unit: "bytes",
    words: "from 1500 bytes to 1gb",
};

/// An averaging window (`K`, `K_alpha`, `K_c`), ns.
pub const WINDOW: Bound = Bound {
    lo: 1_000,
    hi: 1_000_000_000,
    unit: "ns",
    words: "from 1us to 1s",
};

/// A flow table's size, entries.
pub const TABLE: Bound = Bound {
    lo: 16,
    hi: 1 << 24,
    unit: "entries",
    words: "from 16 to 16777216",
};

impl Bound {
    /// `v` if it is in range, or the error naming `field`.
    pub fn check(&self, field: &'static str, v: u64) -> Result<u64, InvalidSetting> {
        if (self.lo..=self.hi).contains(&v) {
            Ok(v)
        } else {
            Err(self.error(field, v))
        }
    }

    /// The error for `v` out of range in `field`: `invalid FIELD: V UNIT is out of range:
    /// must be WORDS`.
    pub fn error(&self, field: &'static str, v: impl std::fmt::Display) -> InvalidSetting {
        InvalidSetting::new(
            field,
            format!("{v} {} is out of range: must be {}", self.unit, self.words),
        )
    }
}

/// The clock a program reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// `bpf_ktime_get_ns`: the fine clock, to the nanosecond.
    Fine,
    /// The kernel's tick counter ([`crate::tick_ns`]: one tick's resolution, cheaper to
    /// read); refused where the program's windows are too short for its tick.
    Coarse,
    /// The coarse clock where the program's windows allow it, else the fine one (the
    /// edge's and the core's default; stats show which one runs).
    Auto,
}

impl std::str::FromStr for Clock {
    type Err = InvalidSetting;

    fn from_str(s: &str) -> Result<Self, InvalidSetting> {
        match s {
            "fine" => Ok(Clock::Fine),
            "coarse" => Ok(Clock::Coarse),
            "auto" => Ok(Clock::Auto),
            _ => Err(InvalidSetting::new(
                "clock",
                format!("{s:?}: fine, coarse or auto"),
            )),
        }
    }
}

/// The configuration's clock for `choice`, and the kernel's tick: the coarse clock when
/// asked for, refused if the tick cannot be read or `fits` refuses it (the program's own
/// rule for its windows against the tick, in ns); with [`Clock::Auto`], the coarse clock
/// where it would be accepted, else the fine one.
pub(crate) fn clock(
    choice: Clock,
    fits: impl FnOnce(u64) -> Result<(), InvalidSetting>,
) -> Result<(u32, u64), InvalidSetting> {
    let tick = crate::sys::tick_ns();
    let coarse = |tick| {
        if tick == 0 {
            return Err(InvalidSetting::new(
                "clock",
                "the kernel's tick could not be read",
            ));
        }
        fits(tick)
    };
    let clock = match choice {
        Clock::Fine => CLOCK_FINE,
        Clock::Coarse => {
            coarse(tick)?;
            CLOCK_COARSE
        }
        Clock::Auto if coarse(tick).is_ok() => CLOCK_COARSE,
        Clock::Auto => CLOCK_FINE,
    };
    Ok((clock, tick))
}

/// A core with a virtual queue on the coarse clock, whose tick is `tick` ns: the queue
/// drains once a tick, so the limit's drain time at the rate and each of `windows` (field,
/// name, ns) must be at least four ticks; the first that is not is refused, naming its
/// field.
pub(crate) fn four_ticks(
    tick: u64,
    rate_bps: u64,
    limit_bytes: u32,
    windows: &[(&'static str, &str, u64)],
) -> Result<(), InvalidSetting> {
    let drain_ns = u64::from(limit_bytes) * 8_000_000_000 / rate_bps;
    let limit = ("limit", "the limit's drain time at the rate", drain_ns);
    for &(field, what, v) in std::iter::once(&limit).chain(windows) {
        if v < 4 * tick {
            return Err(InvalidSetting::new(
                field,
                format!(
                    "with the coarse clock, whose tick is {} us here, {what} ({} us) must be \
                     at least four ticks: the virtual queue drains once a tick (use the fine \
                     clock, or a larger value)",
                    tick / 1000,
                    v / 1000
                ),
            ));
        }
    }
    Ok(())
}

/// `fine` or `coarse`, as stats show a configuration's clock.
pub(crate) fn clock_name(clock: u32) -> &'static str {
    if clock == CLOCK_COARSE {
        "coarse"
    } else {
        "fine"
    }
}

/// An address prefix as the programs match it (longest prefix; IPv4 as ::ffff:a.b.c.d).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix {
    /// The network's address.
    pub addr: IpAddr,
    /// Its length in bits.
    pub len: u8,
}

impl FromStr for Prefix {
    type Err = String;

    /// `ADDR/LEN`, e.g. `10.0.1.0/24` or `2001:db8::/32`. Bits past the length are
    /// refused (as `ip route` refuses them): the kernel's match reads only the first `len`
    /// bits, so `10.0.1.1/24` would silently be `10.0.1.0/24`, and replace an entry given
    /// that way.
    fn from_str(net: &str) -> Result<Self, String> {
        let expected = "expected ADDR/LEN, e.g. 10.0.1.0/24";
        let (addr, len) = net
            .split_once('/')
            .ok_or_else(|| format!("`{net}`: {expected}"))?;
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| format!("`{addr}` is not an IP address; {expected}"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let len: u8 = len
            .parse()
            .ok()
            .filter(|&l| l <= max)
            .ok_or_else(|| format!("`{len}` is not a prefix length of 0..={max}"))?;
        let octets = match addr {
            IpAddr::V4(a) => a.octets().to_vec(),
            IpAddr::V6(a) => a.octets().to_vec(),
        };
        let host_bits = octets.iter().enumerate().any(|(i, &b)| {
            let keep = (len as usize).saturating_sub(8 * i).min(8);
            b & !(0xffu8.checked_shl(8 - keep as u32).unwrap_or(0)) != 0
        });
        if host_bits {
            return Err(format!(
                "`{net}` has bits set past its prefix length; give the network's address"
            ));
        }
        Ok(Prefix { addr, len })
    }
}

impl Prefix {
    /// The programs' key for it.
    pub fn key(&self) -> WeightKey {
        match self.addr {
            IpAddr::V4(a) => {
                let mut addr = [0u8; 16];
                addr[10] = 0xff;
                addr[11] = 0xff;
                addr[12..].copy_from_slice(&a.octets());
                WeightKey {
                    prefixlen: 96 + self.len as u32,
                    addr,
                }
            }
            IpAddr::V6(a) => WeightKey {
                prefixlen: self.len as u32,
                addr: a.octets(),
            },
        }
    }
}
