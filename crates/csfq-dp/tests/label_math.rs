//! The programs encode labels without a division (`encode_label` in `bpf/csfq.h`: the
//! exponent from one comparison, `floor(y / 1000)` as a multiply and a shift). This is that
//! arithmetic, transcribed line for line, checked against the model's `encode_label`
//! (`csfq_algo::fixed`, which divides) on every rate class: random rates over the whole
//! 64-bit range and the boundaries where the exponent or the rounding changes. The programs
//! themselves are checked against the model on the shared vectors (`programs.rs`). Needs
//! no root.

use csfq_algo::fixed::encode_label;
use csfq_algo::label_codec::LabelCodec;
use proptest::prelude::*;

const UNIT: u64 = 1000;

fn log2_floor(x: u64) -> u64 {
    63 - u64::from(x.leading_zeros())
}

/// `div1000_u32` in csfq.h.
fn div1000_u32(y: u64) -> u64 {
    assert!(y < 1 << 32, "the multiply is exact only below 2^32: {y}");
    (y * 274_877_907) >> 38
}

/// `encode_label` in csfq.h, kept in C's form (hence the allowed lints).
#[allow(clippy::int_plus_one, clippy::manual_div_ceil)]
fn encode_label_bpf(rate: u64, m_bits: u64, e_bits: u64) -> u32 {
    if rate <= UNIT {
        return 0;
    }
    let l = log2_floor(rate);
    let mut e = if (UNIT << (l - 9)) <= rate {
        l - 9
    } else {
        l - 10
    };
    let scaled = if e >= m_bits + 1 {
        div1000_u32(rate >> (e - (m_bits + 1)))
    } else {
        div1000_u32(rate << ((m_bits + 1) - e))
    };
    let mut m = (scaled + 1) / 2 - (1 << m_bits);
    if m == 1 << m_bits {
        m = 0;
        e += 1;
    }
    if e >= 1 << e_bits {
        return (1 << (e_bits + m_bits)) - 1;
    }
    ((e as u32) << m_bits) | m as u32
}

fn check(rate: u64) {
    for (codec, m, e) in [
        (LabelCodec::FLOAT16, 11, 5), // IPv4 Identification
        (LabelCodec::FLOAT20, 15, 5), // IPv6 flow label
    ] {
        assert_eq!((codec.mantissa_bits, codec.exponent_bits), (m, e));
        assert_eq!(codec.unit_bps, UNIT);
        assert_eq!(
            encode_label_bpf(rate, m.into(), e.into()),
            encode_label(&codec, rate),
            "rate {rate} bit/s, {m}-bit mantissa"
        );
    }
}

#[test]
fn division_free_encoding_equals_the_model_at_every_boundary() {
    for rate in 0..5000 {
        check(rate);
    }
    // Where floor(log2(rate / 1000)) steps (1000 2^e), where floor(log2 rate) steps (2^l),
    // and around each rounding point of both mantissas, up to the top of the range.
    for shift in 0..64u32 {
        for base in [UNIT.checked_shl(shift), 1u64.checked_shl(shift)]
            .into_iter()
            .flatten()
            .filter(|&b| b.leading_zeros() > 0 || shift < 54)
        {
            for d in 0..4 {
                check(base.saturating_add(d));
                check(base.saturating_sub(d));
            }
        }
    }
    check(u64::MAX);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn division_free_encoding_equals_the_model(rate in any::<u64>()) {
        check(rate);
    }

    #[test]
    fn division_free_encoding_equals_the_model_at_link_rates(rate in 0u64..4_000_000_000_000) {
        check(rate);
    }
}
