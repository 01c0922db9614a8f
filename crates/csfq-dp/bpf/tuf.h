/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * TUF's tags (Clerget and Dabbous, INRIA RR-3846; SPEC Section 2), as tuf_fixed.rs
 * computes them: what the edge's tagger and the TUF core share.
 *
 * A tag travels in the IPv4 Identification of an atomic datagram, or in the low 16 bits of
 * the IPv6 flow label (the 4 above them 0), as (TUF_TAG_MARKER << 11) | tag: the marker
 * tells a tag from a CSFQ label or a host's own Identification.
 */
#ifndef CSFQ_TUF_H
#define CSFQ_TUF_H
#include "csfq.h"
#include "csfq_tuf_thresholds.h" /* generated from tuf_fixed.rs tag_thresholds */

/* tuf_fixed.rs tag_of_rate: the thresholds at or below `rate`, less one (0 below the
 * first); the search's steps select by mask, with no branch for the verifier to walk. */
static __always_inline __u32 tuf_tag_of_rate(__u64 rate)
{
	__u64 pos = 0, half, le;
	int s;

#pragma unroll
	for (s = 0; s < TUF_SEARCH_STEPS; s++) {
		half = TUF_TAGS >> (s + 1);
		/* 1 when the threshold is at or below the rate (thresholds are below 2^63) */
		le = (rate >> 63) | ((TUF_THRESHOLDS[(pos + half - 1) & (TUF_TAGS - 1)] - rate - 1) >> 63);
		asm volatile("" : "+r"(le));
		pos += half & -le;
	}
	le = (rate >> 63) | ((TUF_THRESHOLDS[pos & (TUF_TAGS - 1)] - rate - 1) >> 63);
	asm volatile("" : "+r"(le));
	pos += le;
	return pos > 0 ? (__u32)pos - 1 : 0;
}

/* The 32 bits of `x` reversed: X_n = I(n) (van der Corput). */
static __always_inline __u32 tuf_rev32(__u32 x)
{
	x = ((x >> 1) & 0x55555555U) | ((x & 0x55555555U) << 1);
	x = ((x >> 2) & 0x33333333U) | ((x & 0x33333333U) << 2);
	x = ((x >> 4) & 0x0f0f0f0fU) | ((x & 0x0f0f0f0fU) << 4);
	x = ((x >> 8) & 0x00ff00ffU) | ((x & 0x00ff00ffU) << 8);
	return (x >> 16) | (x << 16);
}

/* tuf_fixed.rs tag_for: T(R (1 - I(n)) / w), w in thousandths. */
static __always_inline __u32 tuf_tag_for(__u64 r, __u32 n, __u32 w_milli)
{
	__u64 x = tuf_rev32(n), b;

	b = r - ((r >> 32) * x + (((r & 0xffffffffULL) * x) >> 32));
	if (w_milli != 1000)
		b = b * 1000 / (w_milli ? w_milli : 1);
	return tuf_tag_of_rate(b);
}

/* The carried form of a tag, and a tag from a carried code (-1: not a tag). */
static __always_inline __u32 tuf_code_of(__u32 tag)
{
	return ((__u32)TUF_TAG_MARKER << 11) | (tag & (TUF_TAGS - 1));
}

static __always_inline int tuf_tag_of_code(__u32 code)
{
	return (code >> 11) == TUF_TAG_MARKER ? (int)(code & (TUF_TAGS - 1)) : -1;
}

#endif
