/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * csfq dataplane: what the edge and core programs share.
 *
 * The arithmetic is that of crates/csfq-algo/src/fixed.rs, operation for operation; the
 * shared vectors in testdata/csfq-fixed-vectors.csv keep the two equal. Every number is an
 * integer: rates in bit/s, times in ns, probabilities in Q0.32, e^-x tables in Q16.
 *
 * Labels (CSFQ paper, Section 2.2) travel in
 *   - the IPv4 Identification field of atomic datagrams (DF set, not a fragment), as a
 *     16-bit float (5-bit exponent, 11-bit mantissa, unit 1 kbit/s), with the header
 *     checksum fixed incrementally (RFC 1624);
 *   - the IPv6 flow label, as a 20-bit float (5-bit exponent, 15-bit mantissa).
 */
#ifndef CSFQ_H
#define CSFQ_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "csfq_shared.h"
#include "csfq_tables.h" /* generated from csfq-algo's ExpTables at build time */
#include "csfq_drop_reasons.h" /* generated from csfq-algo's DropReason at build time */

#define NSEC_PER_SEC 1000000000ULL

/* One load or store of a word other CPUs write or read without a lock. */
#define READ_ONCE(x) (*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

/* Per-CPU packet and byte counters, indexed by enum csfq_counter. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CSFQ_COUNTERS);
	__type(key, __u32);
	__type(value, struct csfq_count);
} counters SEC(".maps");

static __always_inline void count(__u32 which, __u32 bytes)
{
	struct csfq_count *c = bpf_map_lookup_elem(&counters, &which);

	if (c) {
		c->packets += 1;
		c->bytes += bytes;
	}
}

/*
 * The coarse clock (CSFQ_CLOCK_COARSE): jiffies, which the verifier turns into one load,
 * times the tick, plus the offset `c` holds (set by the first caller: the fine clock then
 * minus jiffies x tick), so it is within a tick of the fine clock, either way.
 */
static __always_inline __u64 coarse_now(struct csfq_clock *c, __u64 tick_ns)
{
	__u64 t = bpf_jiffies64() * tick_ns, off;

	off = READ_ONCE(c->offset_ns);
	if (off == 0) {
		off = bpf_ktime_get_ns() - t;
		off = off ? off : 1;
		/* the first CPU's offset holds for every CPU */
		__sync_val_compare_and_swap(&c->offset_ns, 0, off);
		off = READ_ONCE(c->offset_ns);
	}
	return t + off;
}

/*
 * The clock a program reads outside test mode: the coarse one when the operator chose it
 * (CSFQ_CLOCK_COARSE with a tick), from the program's own clock map `clock_map` (an array
 * of one struct csfq_clock), or the fine one.
 */
static __always_inline __u64 csfq_now(void *clock_map, __u32 clock, __u64 tick_ns)
{
	__u32 zero = 0;
	struct csfq_clock *c;

	if (clock == CSFQ_CLOCK_COARSE && tick_ns) {
		c = bpf_map_lookup_elem(clock_map, &zero);
		if (c)
			return coarse_now(c, tick_ns);
	}
	return bpf_ktime_get_ns();
}

/* ---- Flow caches (the edge's flow table, MAY's table H): a flow's key, hashed ---- */

/* The key as five 64-bit words (little-endian: bytes 8i..8i+8), read as 32-bit halves: the
 * key sits at a 4-byte offset on the stack. */
static __always_inline __u64 key_word(const struct csfq_flow_key *k, int i)
{
	const __u32 *x = (const __u32 *)k;

	return ((__u64)x[2 * i + 1] << 32) | x[2 * i];
}

/* flow_table.rs flow_hash: each word xored in, multiplied by 2^64 / phi and its high half
 * folded into its low (a product carries differences only upwards), then SplitMix64's
 * finalizer, so that both halves depend on every bit of the key. */
static __always_inline __u64 csfq_flow_hash(const struct csfq_flow_key *k, __u64 seed)
{
	__u64 h = seed;
	int i;

#pragma unroll
	for (i = 0; i < 5; i++) {
		h = (h ^ key_word(k, i)) * 0x9E3779B97F4A7C15ULL;
		h ^= h >> 32;
	}
	h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
	h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
	return h ^ (h >> 31);
}

static __always_inline int key_equal(const struct csfq_flow_key *a,
				     const struct csfq_flow_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;
	__u32 d = 0;
	int i;

#pragma unroll
	for (i = 0; i < 10; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

/* flow_table.rs sets_of: a flow's entry number `w` of its 2 x CSFQ_FLOW_WAYS, those of its
 * first set then those of its second, in a table of `sets` sets; each half of the hash `h`
 * is scaled to the sets by a multiply, not a division, the low half naming the first set. */
static __always_inline __u32 flow_slot(__u64 h, __u32 sets, int w)
{
	__u64 half = w < CSFQ_FLOW_WAYS ? (h & 0xffffffffULL) : (h >> 32);

	return (__u32)((half * sets) >> 32) * CSFQ_FLOW_WAYS + w % CSFQ_FLOW_WAYS;
}

/*
 * A flow cache's lookup: `map` an array of entries in sets of CSFQ_FLOW_WAYS, each entry
 * beginning with its flow's key (all zeros: empty) and holding, at `seen_off`, the u64 time
 * by which its flow is evicted (the oldest first); `sets` sets, hashed with `seed`. Returns
 * the flow's entry in its two sets (*found = 1) or, if it has none, the entry it is to
 * take (*found = 0): the first empty one of its first set, else of its second, else the
 * one whose time is the smallest, the first such on a tie (csfq_dp::flow_table). NULL only
 * if a set is out of the array, which the loader's sizes rule out.
 */
static __always_inline void *flow_cache_entry(void *map, __u32 sets, __u64 seed,
					      const struct csfq_flow_key *k, __u32 seen_off,
					      int *found)
{
	__u64 h = csfq_flow_hash(k, seed);
	__u64 oldest = ~0ULL, seen;
	void *e, *victim = NULL;
	__u32 i;
	int w;

#pragma unroll
	for (w = 0; w < 2 * CSFQ_FLOW_WAYS; w++) {
		i = flow_slot(h, sets, w);
		e = bpf_map_lookup_elem(map, &i);
		if (!e)
			return NULL;
		if (key_equal((const struct csfq_flow_key *)e, k)) {
			*found = 1;
			return e;
		}
		seen = ((const struct csfq_flow_key *)e)->family ? *(__u64 *)((char *)e + seen_off) : 0;
		if (!victim || seen < oldest) {
			oldest = seen;
			victim = e;
		}
	}
	*found = 0;
	return victim;
}

/* ---- Label codecs: fixed.rs encode_label / decode_label ---- */

/* floor(log2 x) for x > 0, by halving (eBPF has no count-leading-zeros). */
static __always_inline __u32 log2_floor(__u64 x)
{
	__u32 e = 0;

	if (x >> 32) { x >>= 32; e += 32; }
	if (x >> 16) { x >>= 16; e += 16; }
	if (x >> 8) { x >>= 8; e += 8; }
	if (x >> 4) { x >>= 4; e += 4; }
	if (x >> 2) { x >>= 2; e += 2; }
	if (x >> 1) { e += 1; }
	return e;
}

/* floor(y / 1000) for y < 2^32, without a division: with c = ceil(2^38 / 1000), y c / 2^38
 * exceeds y / 1000 by y 56 / (1000 2^38) < 0.001, too little to reach the next integer. */
static __always_inline __u64 div1000_u32(__u64 y)
{
	return (y * 274877907ULL) >> 38;
}

/*
 * Rate (bit/s) to label code: round to nearest, saturating. fixed.rs encode_label, with
 * no division on the packet path: for x = floor(rate / 1000), floor(log2 x) is L - 10 or
 * L - 9 where L = floor(log2 rate) (1000 is in [2^9, 2^10)), decided by one comparison;
 * and `scaled` below is under 1000 * 2^(M + 2) < 2^32, where the multiply is exact.
 */
static __always_inline __u32 encode_label(__u64 rate, __u32 m_bits, __u32 e_bits)
{
	__u64 scaled, m, e, l;

	if (rate <= LABEL_UNIT_BPS) /* x == 0, or x == 1 with no remainder */
		return 0;
	l = log2_floor(rate);
	/* 1000 << (l - 9) <= 1000 << 54 < 2^64. */
	e = (LABEL_UNIT_BPS << (l - 9)) <= rate ? l - 9 : l - 10;
	/* floor(rate 2^(M+1) / (unit 2^e)) as one shift and one exact multiply. */
	if (e >= m_bits + 1)
		scaled = div1000_u32(rate >> (e - (m_bits + 1)));
	else
		scaled = div1000_u32(rate << ((m_bits + 1) - e));
	m = (scaled + 1) / 2 - (1ULL << m_bits);
	if (m == (1ULL << m_bits)) {
		m = 0;
		e += 1;
	}
	if (e >= (1ULL << e_bits))
		return (1U << (e_bits + m_bits)) - 1;
	return ((__u32)e << m_bits) | (__u32)m;
}

/* Label code to bit/s, rounding down. */
static __always_inline __u64 decode_label(__u32 code, __u32 m_bits, __u32 e_bits)
{
	__u64 m, e;

	code &= (1U << (e_bits + m_bits)) - 1;
	m = code & ((1U << m_bits) - 1);
	e = code >> m_bits;
	return ((((1ULL << m_bits) + m) * LABEL_UNIT_BPS) << e) >> m_bits;
}

/* fixed.rs drop_probability_q32: max(0, 1 - share/label) in Q0.32 (CSFQ's Eq. 2 with
 * alpha, CS-FNE's with CL). */
static __always_inline __u32 drop_probability_q32(__u64 share, __u64 label)
{
	__u64 l = label, a = share, s = 0, q;

	if (share == 0 || label == 0 || label <= share)
		return 0;
	if (label >> 32) {
		s = log2_floor(label) + 1 - 32;
		l = label >> s;
		a = share >> s;
	}
	q = ((l - a) << 32) / l;
	return q > 0xffffffffULL ? 0xffffffffU : (__u32)q;
}

/* ---- Eq. (3) in integers: fixed.rs FixedRate::update ---- */

static __always_inline __u64 rate_update(struct fixed_rate *s, __u64 now, __u32 bytes, __u64 k)
{
	__u64 gap, bits, x, pos, frac, e0, e1, g0, g1, e, g, burst;
	__u32 i;

	if (s->last_ns == 0 && s->rate_bps == 0 && s->pending_bytes == 0) {
		s->last_ns = now > 1 ? now : 1;
		s->pending_bytes = bytes;
		return 0;
	}
	gap = now > s->last_ns ? now - s->last_ns : 0;
	if (gap == 0) {
		s->pending_bytes += bytes;
		return s->rate_bps;
	}
	bits = ((__u64)bytes + s->pending_bytes) * 8;
	if (k < 1)
		k = 1;
	if (k > K_MAX_NS)
		k = K_MAX_NS;
	if (gap >= X_MAX * k) {
		s->rate_bps = bits * NSEC_PER_SEC / gap;
	} else {
		x = (gap << 28) / k;
		pos = x * TABLE_STEP_INV;
		/* gap < 16 K makes pos >> 28 < TABLE_LEN, so the mask is fixed.rs's min() and
		 * shows the verifier the bound. */
		i = (pos >> 28) & (TABLE_LEN - 1);
		frac = pos & ((1ULL << 28) - 1);
		e0 = EXP_NEG[i];
		e1 = EXP_NEG[i + 1];
		g0 = ONE_MINUS_EXP_OVER_X[i];
		g1 = ONE_MINUS_EXP_OVER_X[i + 1];
		e = e0 - (((e0 - e1) * frac) >> 28);
		g = g0 - (((g0 - g1) * frac) >> 28);
		burst = bits * NSEC_PER_SEC / k;
		if (x < (1ULL << 28)) {
			__u64 r = s->rate_bps;
			__u64 decay = (((r >> 16) * x) >> 12) + (((r & 0xffff) * x) >> 28);
			__s64 delta = (__s64)burst - (__s64)decay;
			__s64 v = (__s64)s->rate_bps + (((__s64)g * delta) >> 16);

			s->rate_bps = v < 0 ? 0 : (__u64)v;
		} else {
			s->rate_bps = ((burst * g) >> 16) + ((s->rate_bps * e) >> 16);
		}
	}
	s->last_ns = now;
	s->pending_bytes = 0;
	return s->rate_bps;
}

/* CS-FNE's Time Sliding Window (csfne_fixed.rs tsw_update) on Eq. (3)'s state: rate_bps is
 * avg_rate, last_ns t_front, pending_bytes a new flow's first packet. */
static __always_inline __u64 tsw_update(struct fixed_rate *s, __u64 now, __u32 bytes, __u64 win)
{
	__u64 gap, held, bits, span_us, r;

	if (s->last_ns == 0 && s->rate_bps == 0 && s->pending_bytes == 0) {
		s->last_ns = now > 1 ? now : 1;
		s->pending_bytes = bytes;
		return 0;
	}
	if (win < TSW_WIN_MIN_NS)
		win = TSW_WIN_MIN_NS;
	if (win > K_MAX_NS)
		win = K_MAX_NS;
	gap = now > s->last_ns ? now - s->last_ns : 0;
	r = s->rate_bps < TSW_RATE_MAX ? s->rate_bps : TSW_RATE_MAX;
	held = r * (win / 1000) / 1000000;
	bits = held + ((__u64)bytes + s->pending_bytes) * 8;
	span_us = (gap + win) / 1000;
	r = bits * 1000000 / span_us;
	s->rate_bps = r < TSW_RATE_MAX ? r : TSW_RATE_MAX;
	if (now > s->last_ns)
		s->last_ns = now;
	s->pending_bytes = 0;
	return s->rate_bps;
}

/* The edge's meter (fixed.rs Meter::update). */
static __always_inline __u64 meter_update(struct fixed_rate *s, __u64 now, __u32 bytes, __u64 k,
					  __u32 meter)
{
	return meter == CSFQ_METER_TSW ? tsw_update(s, now, bytes, k) : rate_update(s, now, bytes, k);
}

/* Whether a packet received on interface `ifindex` is from one of `trusted` (the cores'
 * CSFQ_TRUST_LISTED: CSFQ_MAX_TRUSTED ifindexes, 0 ends the list). */
static __always_inline int trusted_from(const __u32 *trusted, __u32 ifindex)
{
#pragma unroll
	for (int i = 0; i < CSFQ_MAX_TRUSTED; i++) {
		if (trusted[i] == 0)
			return 0;
		if (trusted[i] == ifindex)
			return 1;
	}
	return 0;
}

/* What a core does first with a frame it could not read a label from (`why`, nonzero,
 * from parse): ARP passes, counted by what it is (a router that cannot resolve its next
 * hop under congestion loses every flow); with `drop_unparsed` (the operator's
 * `--unparsed drop`), a frame the core cannot parse (not IP, or truncated: IPv4 that
 * cannot carry a label is parsed) is dropped and counted as drop_unparsed. Either is the
 * tc verdict returned; otherwise CSFQ_JUDGE: the core judges the frame as unlabeled
 * traffic. */
#define CSFQ_JUDGE 0x100 /* no tc verdict has this value */
static __always_inline int unreadable(struct __sk_buff *skb, __u32 why, __u32 bytes,
				      __u32 drop_unparsed)
{
	if (skb->protocol == bpf_htons(ETH_P_ARP)) {
		count(why, bytes);
		return TC_ACT_UNSPEC;
	}
	if (drop_unparsed && why != CNT_PASS_NOT_ATOMIC) {
		count(CNT_DROP_UNPARSED, bytes);
		return TC_ACT_SHOT;
	}
	return CSFQ_JUDGE;
}

/* An admitted packet joins a virtual queue drained at `capacity`: *finish = max(*finish,
 * now) + its time at that rate, with one atomic: onto an empty queue, a compare-and-swap
 * that starts it at `now`; behind a backlog (or when another CPU moved it in between), an
 * add. */
static __always_inline void vq_add(__u64 *finish, __u64 capacity, __u64 now, __u32 bytes)
{
	__u64 svc = (__u64)bytes * 8 * NSEC_PER_SEC / capacity;
	__u64 old = READ_ONCE(*finish);

	if (old < now && __sync_val_compare_and_swap(finish, old, now + svc) == old)
		return;
	__sync_fetch_and_add(finish, svc);
}

/* ---- Packet parsing ---- */

/* Where a packet's label lives, and the flow it belongs to. */
struct parsed {
	__u32 family;     /* 4 or 6; 0: not labelable */
	__u32 label_code; /* the code in the packet now */
	__u32 word;       /* IPv6: the first 32-bit word, host order */
	struct csfq_flow_key key;
};

#define L3_OFF ETH_HLEN
/* The most parse() reads: Ethernet, IPv4 with options (60 bytes; IPv6 is 40), ports. */
#define PARSE_MAX (ETH_HLEN + 60 + 4)

/*
 * Parses an Ethernet frame. Returns 0 with `p` filled for a labelable packet, or the
 * counter that says why the packet is passed untouched. For IPv4 that cannot carry a
 * label (CNT_PASS_NOT_ATOMIC) the key is filled all the same (ports left 0 in a later
 * fragment), and `family` stays 0.
 *
 * Headers are read in place (direct packet access: no helper call per header). A packet
 * whose headers are not all in the skb's linear part has them pulled in first, so a
 * header is missing only when the packet is shorter than it claims.
 */
static __always_inline int parse(struct __sk_buff *skb, struct parsed *p, int want_ports)
{
	__u32 need = skb->len < PARSE_MAX ? skb->len : PARSE_MAX;
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth;
	__u8 l4 = 0;
	__u32 l4_off = 0;
	int not_atomic = 0;

	if (data + need > end) {
		bpf_skb_pull_data(skb, need);
		data = (void *)(long)skb->data;
		end = (void *)(long)skb->data_end;
	}
	eth = data;
	if ((void *)(eth + 1) > end)
		return CNT_PASS_TRUNCATED;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end)
			return CNT_PASS_TRUNCATED;
		if (ip->version != 4 || ip->ihl < 5)
			return CNT_PASS_NOT_IP;
		p->key.family = 4;
		p->key.proto = ip->protocol;
		p->key.saddr[0] = ip->saddr;
		p->key.daddr[0] = ip->daddr;
		/* Only atomic datagrams (DF, offset 0, no MF) may carry a label (RFC 6864).
		 * Others still get their key (MAY's flows): with ports unless a later fragment. */
		if ((ip->frag_off & bpf_htons(0x7fff)) != bpf_htons(0x4000)) {
			not_atomic = 1;
			if (ip->frag_off & bpf_htons(0x1fff))
				return CNT_PASS_NOT_ATOMIC;
		} else {
			p->family = 4;
			p->label_code = bpf_ntohs(ip->id);
		}
		l4 = ip->protocol;
		l4_off = L3_OFF + ip->ihl * 4;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		__u32 w;

		if ((void *)(ip6 + 1) > end)
			return CNT_PASS_TRUNCATED;
		if (ip6->version != 6)
			return CNT_PASS_NOT_IP;
		__builtin_memcpy(&w, ip6, 4);
		p->family = 6;
		p->word = bpf_ntohl(w);
		p->label_code = p->word & 0xfffff;
		p->key.family = 6;
		p->key.proto = ip6->nexthdr;
		__builtin_memcpy(p->key.saddr, &ip6->saddr, 16);
		__builtin_memcpy(p->key.daddr, &ip6->daddr, 16);
		l4 = ip6->nexthdr; /* extension headers: keyed by addresses only */
		l4_off = L3_OFF + sizeof(*ip6);
	} else {
		return CNT_PASS_NOT_IP;
	}
	if (want_ports && (l4 == IPPROTO_TCP || l4 == IPPROTO_UDP)) {
		__u16 *ports = data + l4_off;

		if ((void *)(ports + 2) > end)
			return not_atomic ? CNT_PASS_NOT_ATOMIC : CNT_PASS_TRUNCATED;
		p->key.sport = ports[0];
		p->key.dport = ports[1];
	}
	return not_atomic ? CNT_PASS_NOT_ATOMIC : 0;
}

/* RFC 1624 Eq. 3, HC' = ~(~HC + ~m + m'), as the kernel's csum_replace2 computes it. */
static __always_inline __u16 csum16_replace(__u16 check, __u16 old, __u16 new)
{
	__u32 sum = (__u32)(__u16)~check + (__u16)~old + new;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* Writes a label code into the packet, in place: IPv4 ID with the checksum fixed, or
 * IPv6 flow label. parse() has made the headers linear. */
static __always_inline int write_label(struct __sk_buff *skb, const struct parsed *p, __u32 code)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;

	if (p->family == 4) {
		__be16 old_id = bpf_htons((__u16)p->label_code), new_id = bpf_htons((__u16)code);
		struct iphdr *ip = data + L3_OFF;

		if (old_id == new_id)
			return 0;
		if ((void *)(ip + 1) > end)
			return -1;
		ip->id = new_id;
		ip->check = csum16_replace(ip->check, old_id, new_id);
		return 0;
	}
	__be32 w = bpf_htonl((p->word & 0xfff00000) | (code & 0xfffff));
	__be32 *first = data + L3_OFF;

	if ((void *)(first + 1) > end)
		return -1;
	*first = w;
	return 0;
}

static __always_inline __u32 label_code_of(__u32 family, __u64 rate)
{
	return family == 4 ? encode_label(rate, 11, 5) : encode_label(rate, 15, 5);
}

static __always_inline __u64 label_rate_of(__u32 family, __u32 code)
{
	return family == 4 ? decode_label(code, 11, 5) : decode_label(code, 15, 5);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#endif
