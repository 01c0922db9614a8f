// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * CSFQ edge (Stoica, Shenker, Zhang, SIGCOMM 1998, Section 2.2 and Eq. 3), as a tc
 * classifier on the interface where traffic enters the island.
 *
 * Per flow (5-tuple) it estimates the arrival rate with Eq. (3) in fixed point and writes
 * the label r / w into every packet, overwriting whatever label the packet carried: a label
 * from outside the island is never trusted. The flow table is an LRU hash, so a full table
 * evicts the least recently seen flow and never refuses one.
 *
 * A flow is a 5-tuple (the paper's), or, as the operator chooses, a pair of hosts or a
 * sending host (`--flow-key`): one share per host, however many connections it opens.
 *
 * IPv4 that cannot carry a label (no DF, or a fragment) is passed (the cores judge it as
 * one unlabeled flow), policed to a rate, or dropped, as the operator chose
 * (`csfq dp edge attach --unlabelable`).
 */
#include "csfq.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_clock);
} edge_clock SEC(".maps");

/* The clock Eq. (3) reads: the test's, the coarse one, or the fine one. */
static __always_inline __u64 edge_now(const struct csfq_edge_config *cfg)
{
	__u32 zero = 0;
	struct csfq_clock *c;

	if (cfg->test_mode)
		return cfg->test_now_ns;
	if (cfg->clock == CSFQ_CLOCK_COARSE && cfg->tick_ns) {
		c = bpf_map_lookup_elem(&edge_clock, &zero);
		if (c)
			return coarse_now(c, cfg->tick_ns);
	}
	return bpf_ktime_get_ns();
}


struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_edge_config);
} edge_config SEC(".maps");

/*
 * A flow's state. The kernel allows no spin lock in an LRU map's values, so two CPUs that
 * handle one flow at the same instant may interleave an update; RSS and per-socket
 * transmit keep a flow's packets on one CPU at a time, and a lost update costs one
 * packet's worth of estimate, never safety.
 */
struct csfq_flow {
	__u32 weight_milli;
	__u32 pad;
	struct fixed_rate rate;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct csfq_flow_key);
	__type(value, struct csfq_flow);
} flows SEC(".maps");

/*
 * New flows are priced as one flow: Eq. (3) over the first packets of all new flows
 * (fixed.rs FixedEdge). A flow's first packet carries that price and its own estimate
 * starts from it, so a flow the LRU evicted returns priced, never at rate 0 (a label the
 * core would pass free): cycling through more flows than the table holds buys no free
 * pass, only a place in one pool of evicted flows.
 */
struct csfq_fresh {
	struct bpf_spin_lock lock;
	__u32 pad;
	struct fixed_rate rate;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_fresh);
} edge_fresh SEC(".maps");

/* The policer for IPv4 that cannot carry a label (CSFQ_UNLABELABLE_POLICE). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_police);
} edge_police SEC(".maps");

#define NANOBITS_PER_BYTE 8000000000ULL

/* policer.rs TokenBucket::admit, operation for operation; the caller holds b->lock. */
static __always_inline int police_admit(struct csfq_police *b, __u64 now, __u32 bytes,
					__u64 rate, __u32 burst)
{
	__u64 full, gap, room, cost;

	if (burst > (1U << 30))
		burst = 1U << 30;
	full = (__u64)burst * NANOBITS_PER_BYTE;
	if (b->last_ns == 0) {
		b->credit = full;
	} else {
		gap = now > b->last_ns ? now - b->last_ns : 0;
		room = full > b->credit ? full - b->credit : 0;
		if (rate == 0 || gap <= room / rate)
			b->credit += gap * rate;
		else
			b->credit = full;
		if (b->credit > full)
			b->credit = full;
	}
	if (now > b->last_ns)
		b->last_ns = now;
	if (b->last_ns < 1)
		b->last_ns = 1;
	cost = (__u64)bytes * NANOBITS_PER_BYTE;
	if (b->credit >= cost) {
		b->credit -= cost;
		return 1;
	}
	return 0;
}

/* IPv4 that cannot carry a label, as the operator chose: pass, police or drop. */
static __always_inline int unlabelable(const struct csfq_edge_config *cfg, __u32 bytes)
{
	struct csfq_police *b;
	__u32 zero = 0;
	__u64 now;
	int pass;

	if (cfg->unlabelable == CSFQ_UNLABELABLE_POLICE) {
		b = bpf_map_lookup_elem(&edge_police, &zero);
		if (!b)
			return TC_ACT_UNSPEC;
		now = edge_now(cfg);
		bpf_spin_lock(&b->lock);
		pass = police_admit(b, now, bytes, cfg->police_rate_bps, cfg->police_burst_bytes);
		bpf_spin_unlock(&b->lock);
	} else {
		pass = cfg->unlabelable != CSFQ_UNLABELABLE_DROP;
	}
	if (!pass) {
		count(CNT_DROP_POLICED, bytes);
		return TC_ACT_SHOT;
	}
	count(CNT_PASS_NOT_ATOMIC, bytes);
	return TC_ACT_UNSPEC;
}

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct csfq_weight_key);
	__type(value, __u32);
} weights SEC(".maps");

static __always_inline __u32 weight_of(const struct csfq_flow_key *k, __u32 dflt)
{
	struct csfq_weight_key wk = { .prefixlen = 128 };
	__u32 *w;

	if (k->family == 4) {
		wk.addr[10] = 0xff;
		wk.addr[11] = 0xff;
		__builtin_memcpy(&wk.addr[12], &k->saddr[0], 4);
	} else {
		__builtin_memcpy(wk.addr, k->saddr, 16);
	}
	w = bpf_map_lookup_elem(&weights, &wk);
	return w && *w ? *w : dflt;
}

SEC("classifier")
int csfq_edge(struct __sk_buff *skb)
{
	__u32 zero = 0, bytes = skb->len, code, why;
	struct csfq_edge_config *cfg;
	struct csfq_flow *f;
	struct parsed p;
	__u64 now, rate;

	cfg = bpf_map_lookup_elem(&edge_config, &zero);
	if (!cfg)
		return TC_ACT_UNSPEC;
	__builtin_memset(&p, 0, sizeof(p));
	why = parse(skb, &p, 1);
	if (why == CNT_PASS_NOT_ATOMIC)
		return unlabelable(cfg, bytes);
	if (why) {
		count(why, bytes);
		return TC_ACT_UNSPEC;
	}
	now = edge_now(cfg);
	if (cfg->flow_key != CSFQ_KEY_FIVE_TUPLE) {
		p.key.proto = 0;
		p.key.sport = 0;
		p.key.dport = 0;
		if (cfg->flow_key == CSFQ_KEY_SOURCE)
			__builtin_memset(p.key.daddr, 0, sizeof(p.key.daddr));
	}

	f = bpf_map_lookup_elem(&flows, &p.key);
	if (f) {
		rate = rate_update(&f->rate, now, bytes, cfg->k_ns);
	} else {
		struct csfq_flow fresh;
		struct csfq_fresh *agg = bpf_map_lookup_elem(&edge_fresh, &zero);

		if (!agg)
			return TC_ACT_UNSPEC;
		bpf_spin_lock(&agg->lock);
		rate = rate_update(&agg->rate, now, bytes, cfg->k_ns);
		bpf_spin_unlock(&agg->lock);
		/* fixed.rs FixedRate::starting_at. */
		__builtin_memset(&fresh, 0, sizeof(fresh));
		fresh.weight_milli = weight_of(&p.key, cfg->default_weight_milli);
		fresh.rate.rate_bps = rate;
		fresh.rate.last_ns = now > 1 ? now : 1;
		fresh.rate.pending_bytes = bytes;
		bpf_map_update_elem(&flows, &p.key, &fresh, BPF_NOEXIST);
		count(CNT_NEW_FLOW, 0);
		f = bpf_map_lookup_elem(&flows, &p.key);
		if (!f) {
			count(CNT_WRITE_FAILED, bytes);
			return TC_ACT_UNSPEC;
		}
	}

	/* Weighted CSFQ: the label is r / w (w in thousandths, at least 1); no division for
	 * the usual weight 1. */
	if (f->weight_milli != 1000)
		rate = rate * 1000 / (f->weight_milli ? f->weight_milli : 1);
	code = label_code_of(p.family, rate);
	if (write_label(skb, &p, code) < 0) {
		count(CNT_WRITE_FAILED, bytes);
		return TC_ACT_UNSPEC;
	}
	count(CNT_LABELED, bytes);
	return TC_ACT_UNSPEC;
}
