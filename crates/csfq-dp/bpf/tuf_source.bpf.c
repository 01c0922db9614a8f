// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * TUF's TCP tagger at the source (Clerget and Dabbous, INRIA RR-3846, Section 3.4.1; SPEC
 * Section 2), as a tc classifier on a sending host's egress. Each TCP packet of a local
 * socket is tagged T(B(X_n) / w) with Padhye's B computed from the kernel's own state for
 * the socket (bpf_tcp_sock: the smoothed round trip and the MSS), X_n the bits of the
 * socket's counter reversed, the counter starting at a random offset. The tag is carried
 * as the edge carries it (tuf.h): the IPv4 Identification of atomic datagrams, the IPv6
 * flow label. tuf_source.rs is the model, operation for operation; the vector program
 * below runs the same function on inputs from a test packet, since BPF_PROG_TEST_RUN
 * gives a program no socket.
 *
 * Packets of no full TCP socket (forwarded, UDP, a listener's SYN-ACK, a timewait's ACK)
 * pass untagged, for the edge to tag; so do GSO super-packets (segmentation would copy
 * or advance the Identification), which Linux's TCP builds whatever the offloads: set the
 * interface's gso_max_segs to 1 before the connections open (`csfq dp tuf-source attach`
 * warns). A TCP packet passed untagged has its code's top bit cleared (unmark), so that
 * it never reads as tagged. The edge behind it keeps these tags with `csfq dp edge
 * attach --tuf --keep-source-tags`.
 */
#include "csfq.h"
#include "tuf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_tuf_source_config);
} tuf_source_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CSFQ_TUF_SOURCE_SOCKETS);
	__type(key, __u64); /* the socket's cookie */
	__type(value, struct csfq_tuf_source_socket);
} tuf_source_sockets SEC(".maps");

/* tuf_source.rs isqrt: floor(sqrt(x)) bit by bit, without branches (x below 2^62). Its
 * own function, verified once: the 32 steps are not walked again on each of the paths
 * through its caller's clamps. */
__noinline __u64 tuf_isqrt(__u64 x)
{
	__u64 rem = x & ((1ULL << 62) - 1), root = 0, bit = 1ULL << 62, trial, take;
	int i;

#pragma unroll
	for (i = 0; i < 32; i++) {
		trial = root + bit;
		/* 1 when rem >= trial (both below 2^63) */
		take = ((rem - trial) >> 63) ^ 1;
		asm volatile("" : "+r"(take));
		/* Products, not masks by -take: the verifier splits its state on a value in
		 * [-1, 0] that is and-ed, which would make 2^32 states of these 32 steps. */
		rem -= trial * take;
		root = (root >> 1) + bit * take;
		bit >>= 2;
	}
	return root;
}

/* tuf_source.rs padhye_bps: B(X), bit/s, for X = x / 2^32 (x below 2^32), times in us
 * held at most TUF_SOURCE_MAX_TIME_US (rtt at least 1), the MSS at most 65535. A
 * function of its own, so that the verifier walks its branches once, not once for each
 * way its caller reached it. */
__noinline __u64 tuf_padhye_bps(__u64 x, __u64 rtt, __u64 t0, __u64 mss,
				const struct csfq_tuf_source_params *p)
{
	__u64 one = 1ULL << 24, s, x24, a, m, x3, d, b;

	if (!p)
		return 0;
	x &= 0xffffffffULL;
	mss = mss < 65535 ? mss : 65535;
	rtt = rtt < TUF_SOURCE_MAX_TIME_US ? rtt : TUF_SOURCE_MAX_TIME_US;
	rtt = rtt ? rtt : 1;
	t0 = t0 < TUF_SOURCE_MAX_TIME_US ? t0 : TUF_SOURCE_MAX_TIME_US;
	s = tuf_isqrt(x << 16);
	x24 = x >> 8;
	a = (p->c1_q24 * s) >> 24;
	m = (p->c2_q24 * s) >> 24;
	m = m < one ? m : one;
	x3 = (((x24 * x24) >> 24) * x24) >> 24;
	d = rtt * a + t0 * ((m * (x24 + 32 * x3)) >> 24);
	b = d ? mss * 8 * 1000000 * (1ULL << 24) / d : ~0ULL;
	if (p->max_window) {
		__u64 w = p->max_window < TUF_SOURCE_MAX_WINDOW ? p->max_window
								: TUF_SOURCE_MAX_WINDOW;
		__u64 cap = w * mss * 8 * 1000000 / rtt;

		b = b < cap ? b : cap;
	}
	return b < TUF_SOURCE_MAX_RATE_BPS ? b : TUF_SOURCE_MAX_RATE_BPS;
}

/* tuf_source.rs source_tag: T(B(I(n)) / w), Padhye's B from the socket's smoothed round
 * trip (srtt8_us: the kernel's, times 8), t0 = RTT + rto_min (before a sample, both
 * Linux's initial RTO), segments of `mss`; its code as the packet carries it. One function
 * for the program and the vector program. */
__noinline __u32 tuf_source_code(__u32 n, __u32 srtt8_us, __u32 mss,
				 const struct csfq_tuf_source_params *p)
{
	__u64 rtt = srtt8_us >> 3, t0, b;

	if (!p)
		return 0;
	if (rtt == 0) {
		t0 = p->rto_min_us > TUF_SOURCE_INITIAL_RTO_US ? p->rto_min_us
							       : TUF_SOURCE_INITIAL_RTO_US;
		rtt = t0;
	} else {
		t0 = rtt + p->rto_min_us;
	}
	b = tuf_padhye_bps(tuf_rev32(n), rtt, t0, mss, p);
	if (p->weight_milli != 1000) {
		/* tuf_source.rs weighted: floor(b 1000 / w), saturating */
		__u64 w = p->weight_milli ? p->weight_milli : 1, q = b / w, r = b % w * 1000 / w;

		q = q > ~0ULL / 1000 ? ~0ULL : q * 1000;
		b = q + r < q ? ~0ULL : q + r;
	}
	return tuf_code_of(tuf_tag_of_rate(b));
}

/* A TCP packet passed untagged must not read as tagged to an edge that keeps its sources'
 * tags: the top bit of its code (IPv4 Identification, IPv6 flow label bit 15) cleared,
 * which the marker has set. An atomic datagram's Identification means nothing (RFC 6864);
 * a super-packet's segments count up from it and stay off the marker (they would need to
 * reach 0xb000 from below 0x8000). */
static __always_inline void unmark(struct __sk_buff *skb, const struct parsed *p)
{
	if (p->label_code & 0x8000)
		write_label(skb, p, p->label_code & ~0x8000U);
}

SEC("classifier")
int csfq_tuf_source(struct __sk_buff *skb)
{
	struct csfq_tuf_source_config *cfg;
	struct csfq_tuf_source_socket *f;
	struct bpf_tcp_sock *tp;
	struct bpf_sock *sk;
	__u32 zero = 0, bytes = skb->len, why, n, srtt8, mss, code;
	struct parsed p;
	__u64 cookie;

	cfg = bpf_map_lookup_elem(&tuf_source_config, &zero);
	if (!cfg)
		return TC_ACT_UNSPEC;
	__builtin_memset(&p, 0, sizeof(p));
	why = parse(skb, &p, 0);
	if (why) {
		count(why, bytes);
		return TC_ACT_UNSPEC;
	}
	if (p.key.proto != IPPROTO_TCP) {
		count(CNT_PASS_NOT_TCP_SOCKET, bytes);
		return TC_ACT_UNSPEC;
	}
	if (skb->gso_segs > 1) {
		unmark(skb, &p);
		count(CNT_PASS_SUPER_PACKET, bytes);
		return TC_ACT_UNSPEC;
	}
	sk = skb->sk;
	if (sk)
		sk = bpf_sk_fullsock(sk);
	tp = sk ? bpf_tcp_sock(sk) : 0;
	if (!tp) {
		unmark(skb, &p);
		count(CNT_PASS_NOT_TCP_SOCKET, bytes);
		return TC_ACT_UNSPEC;
	}
	srtt8 = tp->srtt_us;
	mss = tp->mss_cache;
	cookie = bpf_get_socket_cookie(skb);
	f = bpf_map_lookup_elem(&tuf_source_sockets, &cookie);
	if (!f) {
		struct csfq_tuf_source_socket fresh = { .n = bpf_get_prandom_u32() };

		bpf_map_update_elem(&tuf_source_sockets, &cookie, &fresh, BPF_NOEXIST);
		f = bpf_map_lookup_elem(&tuf_source_sockets, &cookie);
		if (!f) {
			unmark(skb, &p);
			count(CNT_WRITE_FAILED, bytes);
			return TC_ACT_UNSPEC;
		}
		count(CNT_NEW_FLOW, 0);
	}
	/* The socket's packets leave one at a time but for timers; no lock, as the edge's
	 * counter. */
	n = f->n + 1;
	code = tuf_source_code(n, srtt8, mss, &cfg->params);
	f->n = n;
	f->srtt8_us = srtt8;
	f->mss = mss;
	f->tag = code & (TUF_TAGS - 1);
	f->packets += 1;
	if (write_label(skb, &p, code) < 0) {
		count(CNT_WRITE_FAILED, bytes);
		return TC_ACT_UNSPEC;
	}
	count(CNT_SOURCE_TAGGED, bytes);
	return TC_ACT_UNSPEC;
}

/* The test vectors' program: n, srtt8_us and mss (host order) right after the Ethernet
 * header; returns the tag's code. */
SEC("classifier")
int csfq_tuf_source_vector(struct __sk_buff *skb)
{
	struct csfq_tuf_source_config *cfg;
	__u32 zero = 0, in[3];

	cfg = bpf_map_lookup_elem(&tuf_source_config, &zero);
	if (!cfg || bpf_skb_load_bytes(skb, ETH_HLEN, in, sizeof(in)) < 0)
		return -1;
	return tuf_source_code(in[0], in[1], in[2], &cfg->params);
}
