//! Rates, sizes and times written as `tc(8)` reads them (iproute2's `get_rate64`,
//! `get_size` and `get_time`), so `--rate 10mbit` means what it means to `tc qdisc add ...
//! tbf rate 10mbit`.
//!
//! - Rate: a number and a case-insensitive unit. `bit` or none: bit/s; `kbit`, `mbit`,
//!   `gbit`, `tbit`: powers of 1000; `kibit`, `mibit`, `gibit`, `tibit`: powers of 1024;
//!   `bps`, `kbps`, `mbps`, `gbps`, `tbps`: *bytes* per second (powers of 1000);
//!   `kibps` ... `tibps`: bytes per second, powers of 1024. Like tc, a rate is kept in
//!   whole bytes per second, rounded down (`10` is 8 bit/s, `12bit` too).
//! - Size: bytes; `b`; `k`/`kb`, `m`/`mb`, `g`/`gb`: powers of 1024 bytes; `kbit`, `mbit`,
//!   `gbit`: powers of 1024 bits.
//! - Time: `s`/`sec`/`secs`, `ms`/`msec`/`msecs`, `us`/`usec`/`usecs`, or none: microseconds.

use thiserror::Error;

/// A value tc would not accept.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid {what} `{input}`: expected {expected}")]
pub struct UnitError {
    /// What was being parsed: "rate", "size" or "time".
    pub what: &'static str,
    /// The text given.
    pub input: String,
    /// What would have been accepted.
    pub expected: &'static str,
}

const RATE_EXPECTED: &str = "a number and a tc rate unit (bit, kbit, mbit, gbit, tbit, \
kibit..tibit, bps, kbps, mbps, gbps, tbps, kibps..tibps), e.g. 10mbit";
const SIZE_EXPECTED: &str = "a number and a tc size unit (b, k, kb, m, mb, g, gb, kbit, mbit, \
gbit), e.g. 64kb";
const TIME_EXPECTED: &str = "a number and a tc time unit (s, ms, us; none: us), e.g. 100ms";

/// Splits `str` like `strtod`: the longest prefix that is a decimal number, and the rest.
fn number(s: &str) -> Option<(f64, &str)> {
    let end = s
        .char_indices()
        .take_while(|&(i, c)| {
            c.is_ascii_digit()
                || c == '.'
                || ((c == '+' || c == '-')
                    && (i == 0 || matches!(s.as_bytes()[i - 1], b'e' | b'E')))
                || ((c == 'e' || c == 'E')
                    && i > 0
                    && s[i + 1..].starts_with(|d: char| d.is_ascii_digit() || d == '+' || d == '-'))
        })
        .last()
        .map_or(0, |(i, c)| i + c.len_utf8());
    let v: f64 = s[..end].parse().ok()?;
    Some((v, &s[end..]))
}

fn scale(unit: &str, table: &[(&str, f64)]) -> Option<f64> {
    table
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(unit))
        .map(|&(_, f)| f)
}

/// Parses a rate as tc does; returns bits per second.
pub fn parse_rate(input: &str) -> Result<u64, UnitError> {
    const K: f64 = 1024.0;
    const UNITS: &[(&str, f64)] = &[
        ("bit", 1.0),
        ("kibit", K),
        ("kbit", 1e3),
        ("mibit", K * K),
        ("mbit", 1e6),
        ("gibit", K * K * K),
        ("gbit", 1e9),
        ("tibit", K * K * K * K),
        ("tbit", 1e12),
        ("bps", 8.0),
        ("kibps", 8.0 * K),
        ("kbps", 8e3),
        ("mibps", 8.0 * K * K),
        ("mbps", 8e6),
        ("gibps", 8.0 * K * K * K),
        ("gbps", 8e9),
        ("tibps", 8.0 * K * K * K * K),
        ("tbps", 8e12),
    ];
    let err = || UnitError {
        what: "rate",
        input: input.to_string(),
        expected: RATE_EXPECTED,
    };
    let (v, unit) = number(input.trim()).ok_or_else(err)?;
    let bits = if unit.is_empty() {
        v
    } else {
        v * scale(unit, UNITS).ok_or_else(err)?
    };
    // tc keeps whole bytes per second, rounding down (`10` is 8 bit/s to tc, as to us).
    // Ranges (zero included) are the caller's to check, with its own message.
    let bytes = (bits / 8.0).floor();
    if !(bytes >= 0.0 && bytes < (u64::MAX / 8) as f64) {
        return Err(err());
    }
    Ok(bytes as u64 * 8)
}

/// Parses a size as tc does; returns bytes.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    const UNITS: &[(&str, f64)] = &[
        ("b", 1.0),
        ("kbit", 1024.0 / 8.0),
        ("k", 1024.0),
        ("kb", 1024.0),
        ("mbit", 1024.0 * 1024.0 / 8.0),
        ("m", 1024.0 * 1024.0),
        ("mb", 1024.0 * 1024.0),
        ("gbit", 1024.0 * 1024.0 * 1024.0 / 8.0),
        ("g", 1024.0 * 1024.0 * 1024.0),
        ("gb", 1024.0 * 1024.0 * 1024.0),
    ];
    let err = || UnitError {
        what: "size",
        input: input.to_string(),
        expected: SIZE_EXPECTED,
    };
    let (v, unit) = number(input.trim()).ok_or_else(err)?;
    let bytes = if unit.is_empty() {
        v
    } else {
        v * scale(unit, UNITS).ok_or_else(err)?
    };
    if !(bytes >= 0.0 && bytes < u64::MAX as f64) {
        return Err(err());
    }
    Ok(bytes as u64)
}

/// Parses a time as tc does; returns nanoseconds.
pub fn parse_time(input: &str) -> Result<u64, UnitError> {
    const UNITS: &[(&str, f64)] = &[
        ("s", 1e9),
        ("sec", 1e9),
        ("secs", 1e9),
        ("ms", 1e6),
        ("msec", 1e6),
        ("msecs", 1e6),
        ("us", 1e3),
        ("usec", 1e3),
        ("usecs", 1e3),
    ];
    let err = || UnitError {
        what: "time",
        input: input.to_string(),
        expected: TIME_EXPECTED,
    };
    let (v, unit) = number(input.trim()).ok_or_else(err)?;
    let ns = if unit.is_empty() {
        v * 1e3
    } else {
        v * scale(unit, UNITS).ok_or_else(err)?
    };
    if !(ns >= 0.0 && ns < u64::MAX as f64) {
        return Err(err());
    }
    Ok(ns.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cases worked out by hand from iproute2's tables.
    #[test]
    fn rates_as_tc_reads_them() {
        assert_eq!(parse_rate("10mbit"), Ok(10_000_000));
        assert_eq!(parse_rate("10Mbit"), Ok(10_000_000));
        assert_eq!(parse_rate("1.5gbit"), Ok(1_500_000_000));
        assert_eq!(parse_rate("1kibit"), Ok(1024));
        assert_eq!(parse_rate("1mbps"), Ok(8_000_000)); // bytes!
        assert_eq!(parse_rate("1MBps"), Ok(8_000_000));
        assert_eq!(parse_rate("2kibps"), Ok(16_384));
        assert_eq!(parse_rate("800"), Ok(800)); // a bare number is bit/s
        assert_eq!(parse_rate("1e3kbit"), Ok(1_000_000));
        // As `tc qdisc add ... tbf rate 10` shows `rate 8bit`: whole bytes, rounded down.
        assert_eq!(parse_rate("10"), Ok(8));
        assert_eq!(parse_rate("12bit"), Ok(8));
        assert_eq!(parse_rate("1001"), Ok(1000));
        // Zero parses; a range check is the caller's (the core's: 8bit..=4tbit).
        assert_eq!(parse_rate("0mbit"), Ok(0));
        for bad in ["", "mbit", "10 parsecs", "10mbits", "-1mbit", "100bit/s"] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.to_string().contains("expected"), "{bad}: {e}");
        }
    }

    #[test]
    fn sizes_and_times_as_tc_reads_them() {
        assert_eq!(parse_size("64kb"), Ok(65_536));
        assert_eq!(parse_size("64k"), Ok(65_536));
        assert_eq!(parse_size("1500"), Ok(1500));
        assert_eq!(parse_size("1mbit"), Ok(131_072));
        assert!(parse_size("64kib").is_err());
        assert_eq!(parse_time("100ms"), Ok(100_000_000));
        assert_eq!(parse_time("1s"), Ok(1_000_000_000));
        assert_eq!(parse_time("250"), Ok(250_000)); // us
        assert!(parse_time("1h").is_err());
    }
}
