//! Rate labels in packet headers: small binary floats.
//!
//! Section 2.7 of the CSFQ paper encodes a label in 8 bits as a float, a 4-bit exponent
//! `e` and a 4-bit mantissa `m`: `rate = (1 + m/16) * 2^e` Kbps, 1 Kbps .. ~63 Mbps at
//! 6.25% resolution. The same shape scales to the wider carriers a real deployment has:
//! the 16-bit IPv4 Identification field of atomic datagrams (RFC 6864) and the 20-bit
//! IPv6 flow label.
//!
//! Encoding rounds the mantissa to nearest, so a rate inside the range comes back within
//! `2^-(mantissa_bits+1)` of itself (relative), and encoding is monotone: codes compare as
//! the rates they stand for. Rates below the range encode as the smallest code, above it
//! as the largest (saturation).

/// A float format `(1 + m / 2^M) * 2^e * unit` with `E` exponent and `M` mantissa bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabelCodec {
    /// Exponent bits `E`.
    pub exponent_bits: u32,
    /// Mantissa bits `M`.
    pub mantissa_bits: u32,
    /// The rate of code 0, bits/s.
    pub unit_bps: u64,
}

impl LabelCodec {
    /// The paper's 8-bit label: 4-bit exponent, 4-bit mantissa, in Kbps (1 Kbps..63.488 Mbps).
    pub const FLOAT8: LabelCodec = LabelCodec {
        exponent_bits: 4,
        mantissa_bits: 4,
        unit_bps: 1000,
    };
    /// 16 bits for the IPv4 Identification field: 5-bit exponent, 11-bit mantissa, in Kbps
    /// (1 Kbps..~4.29 Tbps, 0.024% worst-case error).
    pub const FLOAT16: LabelCodec = LabelCodec {
        exponent_bits: 5,
        mantissa_bits: 11,
        unit_bps: 1000,
    };
    /// 20 bits for the IPv6 flow label: 5-bit exponent, 15-bit mantissa, in Kbps
    /// (1 Kbps..~4.29 Tbps, 0.0015% worst-case error).
    pub const FLOAT20: LabelCodec = LabelCodec {
        exponent_bits: 5,
        mantissa_bits: 15,
        unit_bps: 1000,
    };

    /// Total bits of a code.
    pub const fn bits(&self) -> u32 {
        self.exponent_bits + self.mantissa_bits
    }

    /// The largest code.
    pub const fn max_code(&self) -> u32 {
        (1 << self.bits()) - 1
    }

    /// The smallest representable rate, bits/s.
    pub fn min_rate_bps(&self) -> f64 {
        self.unit_bps as f64
    }

    /// The largest representable rate, bits/s.
    pub fn max_rate_bps(&self) -> f64 {
        self.decode(self.max_code())
    }

    /// The worst-case relative round-trip error inside the range: half a mantissa step.
    pub fn max_relative_error(&self) -> f64 {
        0.5 / (1u64 << self.mantissa_bits) as f64
    }

    /// Encodes a rate (bits/s), rounding to the nearest code and saturating at the ends.
    pub fn encode(&self, rate_bps: f64) -> u32 {
        let x = rate_bps / self.unit_bps as f64;
        if x.is_nan() || x <= 1.0 {
            return 0;
        }
        if x >= self.max_rate_bps() / self.unit_bps as f64 {
            return self.max_code();
        }
        let scale = (1u64 << self.mantissa_bits) as f64;
        let e = x.log2().floor() as i64;
        // log2 can be off by one ulp near powers of two: correct e so 1 <= x / 2^e < 2.
        let mut e = e.max(0);
        if x / (2f64).powi(e as i32) >= 2.0 {
            e += 1;
        } else if x / (2f64).powi(e as i32) < 1.0 {
            e -= 1;
        }
        let mut m = ((x / (2f64).powi(e as i32) - 1.0) * scale).round() as u64;
        if m == 1 << self.mantissa_bits {
            m = 0;
            e += 1;
        }
        if e >= 1 << self.exponent_bits {
            return self.max_code();
        }
        ((e as u32) << self.mantissa_bits) | m as u32
    }

    /// Decodes a code (bits above `bits()` are ignored) to a rate, bits/s.
    pub fn decode(&self, code: u32) -> f64 {
        let code = code & self.max_code();
        let m = code & ((1 << self.mantissa_bits) - 1);
        let e = code >> self.mantissa_bits;
        let scale = (1u64 << self.mantissa_bits) as f64;
        (1.0 + m as f64 / scale) * (2f64).powi(e as i32) * self.unit_bps as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CODECS: [LabelCodec; 3] = [LabelCodec::FLOAT8, LabelCodec::FLOAT16, LabelCodec::FLOAT20];

    #[test]
    fn float8_range_matches_the_paper() {
        let c = LabelCodec::FLOAT8;
        assert_eq!(c.min_rate_bps(), 1e3);
        assert_eq!(c.max_rate_bps(), 63.488e6); // (1 + 15/16) * 2^15 Kbps
        assert_eq!(c.decode(0x10), 2e3);
        assert_eq!(c.encode(1.5e3), 0x08);
        assert_eq!(c.encode(10e6), c.encode(9.99e6).max(c.encode(10e6)));
    }

    #[test]
    fn codes_decode_in_order_and_round_trip_exactly() {
        for c in CODECS {
            let mut prev = 0.0;
            for code in 0..=c.max_code() {
                let r = c.decode(code);
                assert!(r > prev, "{c:?}: decode not increasing at {code}");
                assert_eq!(c.encode(r), code, "{c:?}: code {code}");
                prev = r;
            }
        }
    }

    #[test]
    fn saturates_outside_the_range() {
        for c in CODECS {
            assert_eq!(c.encode(0.0), 0);
            assert_eq!(c.encode(-5.0), 0);
            assert_eq!(c.encode(f64::NAN), 0);
            assert_eq!(c.encode(c.max_rate_bps() * 4.0), c.max_code());
            assert_eq!(c.encode(f64::INFINITY), c.max_code());
        }
    }

    proptest! {
        #[test]
        fn round_trip_error_is_bounded(log_rate in 3.0f64..12.6, which in 0usize..3) {
            let c = CODECS[which];
            let rate = 10f64.powf(log_rate).min(c.max_rate_bps());
            let back = c.decode(c.encode(rate));
            let err = (back - rate).abs() / rate;
            prop_assert!(err <= c.max_relative_error() * (1.0 + 1e-9), "{rate} -> {back}: {err}");
        }

        #[test]
        fn encoding_is_monotone(a in 0.0f64..5e12, b in 0.0f64..5e12, which in 0usize..3) {
            let c = CODECS[which];
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(c.encode(lo) <= c.encode(hi));
        }
    }
}
