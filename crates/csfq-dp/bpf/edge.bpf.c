// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * CSFQ edge (Stoica, Shenker, Zhang, SIGCOMM 1998, Section 2.2 and Eq. 3), as a tc
 * classifier on the interface where traffic enters the island.
 *
 * Per flow (5-tuple) it estimates the arrival rate with Eq. (3) in fixed point (or, for a
 * CS-FNE island, with the Time Sliding Window of Kim's thesis, Fig. 3-1) and writes
 * the label r / w (or, for a TUF island, the tag T(r (1 - X) / w): tuf.h) into every packet, overwriting whatever label the packet carried: a label
 * from outside the island is never trusted. The flow table is a flow cache of sets of four
 * entries (below), two sets for each flow: a flow whose eight entries are all taken takes
 * that of the least recently seen of their flows, so the table never refuses a flow.
 *
 * A flow is a 5-tuple (the paper's), or, as the operator chooses, a pair of hosts or a
 * sending host (`--flow-key`): one share per host, however many connections it opens.
 *
 * IPv4 that cannot carry a label (no DF, or a fragment) is passed (the cores judge it as
 * one unlabeled flow), policed to a rate, or dropped, as the operator chose
 * (`csfq dp edge attach --unlabelable`).
 */
#include "csfq.h"
#include "tuf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_clock);
} edge_clock SEC(".maps");

/* The clock Eq. (3) reads: the test's, the coarse one, or the fine one. */
static __always_inline __u64 edge_now(const struct csfq_edge_config *cfg)
{
	if (cfg->test_mode)
		return cfg->test_now_ns;
	return csfq_now(&edge_clock, cfg->clock, cfg->tick_ns);
}


struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_edge_config);
} edge_config SEC(".maps");

/*
 * The flow table: a flow cache, as line-rate routers keep one. An array of entries in sets
 * of CSFQ_FLOW_WAYS; a flow's key hashes (seeded, csfq_flow_hash) to two sets, its first
 * and its second, and the flow is in one of their eight entries or in none. A flow in
 * neither takes the first empty entry of its first set, else of its second, else the
 * entry of the least recently seen of the eight flows there (the smallest `last_ns`, the
 * first such in that order on a tie), which is evicted. A lookup is a hash and at most
 * eight key comparisons in one array, with no helper call, where the kernel's LRU hash (a
 * helper, a bucket, an element, the LRU's bookkeeping) cost 60-85 ns a packet in place
 * (BENCHMARKS). The cost: eviction is least recently seen among a flow's eight entries,
 * not in the whole table, so a table less than full can evict an active flow; with two
 * sets to choose from that stays rare until about half the table holds flows
 * (csfq_dp::flow_table, the Rust model, which the program tests hold this to).
 *
 * An empty entry's key is all zeros; a flow's never is (its family is 4 or 6).
 *
 * A flow's packets update its entry without a lock, so two CPUs that handle one flow at
 * the same instant may interleave an update, and a packet of an evicted flow still in
 * flight on another CPU may update the entry its successor just took; RSS and per-socket
 * transmit keep a 5-tuple's packets on one CPU at a time, and a lost update costs one
 * packet's worth of estimate, never safety. A new flow writes its entry (key, weight,
 * estimate) under the entry's lock, so two new flows taking one entry at once leave it to
 * one of them, and one flow's first packets on two CPUs at once enter it there once. (Under
 * a host key a flow's packets come from several connections, so on several CPUs: its first
 * packets on two CPUs at once may choose two entries, one of which then waits unused until
 * it is evicted.) The lock is a field of the value itself, not of a struct within it:
 * older kernels look for it only there.
 */
struct csfq_flow_entry {
	struct csfq_flow_key key;
	__u32 weight_milli;
	struct bpf_spin_lock lock;
	struct fixed_rate rate;
	__u32 tuf_n; /* TUF: the flow's counter, from its offset D_F (tuf_fixed.rs) */
	__u32 pad;
};

/* The default table: 65 536 entries (csfq_dp::DEFAULT_FLOWS); the loader sets the size. */
#define DEFAULT_SETS 16384

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CSFQ_FLOW_WAYS * DEFAULT_SETS);
	__type(key, __u32);
	__type(value, struct csfq_flow_entry);
} flows SEC(".maps");

/* Set at load time (csfq_dp::loader): the table's sets (its entries / CSFQ_FLOW_WAYS), and
 * the hash's seed, drawn at random for each table, so that which flows share sets cannot
 * be known without it (the hash is fast, not cryptographic). */
const volatile __u32 flow_sets = DEFAULT_SETS;
const volatile __u64 flow_seed = 0;

/*
 * New flows are priced as one flow: Eq. (3) over the first packets of all new flows
 * (fixed.rs FixedEdge). A flow's first packet carries that price and its own estimate
 * starts from it, so a flow the table evicted returns priced, never at rate 0 (a label the
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

/* The sources the edge accepts, when its configuration says so (`--allow-source`): the
 * same keys as the weight classes'. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct csfq_weight_key);
	__type(value, __u32);
} sources SEC(".maps");

/* The source address as a full-length key (IPv4 mapped into IPv6). */
static __always_inline void source_key(const struct csfq_flow_key *k, struct csfq_weight_key *wk)
{
	wk->prefixlen = 128;
	if (k->family == 4) {
		wk->addr[10] = 0xff;
		wk->addr[11] = 0xff;
		__builtin_memcpy(&wk->addr[12], &k->saddr[0], 4);
	} else {
		__builtin_memcpy(wk->addr, k->saddr, 16);
	}
}

static __always_inline __u32 weight_of(const struct csfq_flow_key *k, __u32 dflt)
{
	struct csfq_weight_key wk = {};
	__u32 *w;

	source_key(k, &wk);
	w = bpf_map_lookup_elem(&weights, &wk);
	return w && *w ? *w : dflt;
}

/* Whether an IP packet's source is in one of the accepted prefixes. */
static __always_inline int source_allowed(const struct csfq_flow_key *k)
{
	struct csfq_weight_key wk = {};

	source_key(k, &wk);
	return bpf_map_lookup_elem(&sources, &wk) != 0;
}

/* The TUF tag's code for a packet of a flow at `rate` whose counter is now `n` (tuf.h).
 * Global: verified once, apart from the program's paths. */
__noinline __u32 tuf_edge_code(__u64 rate, __u32 n, __u32 w_milli)
{
	return tuf_code_of(tuf_tag_for(rate, n, w_milli));
}

SEC("classifier")
int csfq_edge(struct __sk_buff *skb)
{
	__u32 zero = 0, bytes = skb->len, code, why, d_f = 0;
	struct csfq_edge_config *cfg;
	struct csfq_flow_entry *e;
	struct parsed p;
	__u64 now, rate;
	__u32 weight;
	int found, entered;

	cfg = bpf_map_lookup_elem(&edge_config, &zero);
	if (!cfg)
		return TC_ACT_UNSPEC;
	__builtin_memset(&p, 0, sizeof(p));
	why = parse(skb, &p, 1);
	/* Spoofed sources (BCP 38 at the edge): whatever else the packet is, once its
	 * source is known. */
	if (cfg->source_filter && p.key.family && !source_allowed(&p.key)) {
		count(CNT_DROP_SOURCE, bytes);
		return TC_ACT_SHOT;
	}
	if (why == CNT_PASS_NOT_ATOMIC)
		return unlabelable(cfg, bytes);
	if (why) {
		count(why, bytes);
		return TC_ACT_UNSPEC;
	}
	/* A TCP packet its sender's TUF tagger tagged (tuf_source.bpf.c) keeps its tag. */
	if (cfg->tuf && cfg->keep_source_tags && p.key.proto == IPPROTO_TCP &&
	    tuf_tag_of_code(p.label_code) >= 0) {
		count(CNT_KEPT_SOURCE_TAG, bytes);
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

	e = flow_cache_entry(&flows, flow_sets, flow_seed, &p.key,
			     __builtin_offsetof(struct csfq_flow_entry, rate.last_ns), &found);
	if (!e) {
		count(CNT_WRITE_FAILED, bytes);
		return TC_ACT_UNSPEC;
	}
	if (found) {
		rate = meter_update(&e->rate, now, bytes, cfg->k_ns, cfg->meter);
	} else {
		struct csfq_fresh *agg = bpf_map_lookup_elem(&edge_fresh, &zero);
		__u8 was;

		if (!agg)
			return TC_ACT_UNSPEC;
		/* TUF's D_F: the flow's key hashed with the table's seed, its high half (the
		 * low half chose its first set), so no one without the seed knows it. */
		d_f = (__u32)(csfq_flow_hash(&p.key, flow_seed) >> 32);
		bpf_spin_lock(&agg->lock);
		rate = meter_update(&agg->rate, now, bytes, cfg->k_ns, cfg->meter);
		bpf_spin_unlock(&agg->lock);
		weight = weight_of(&p.key, cfg->default_weight_milli);
		/* fixed.rs FixedRate::starting_at; no helper may run under the lock. */
		bpf_spin_lock(&e->lock);
		was = e->key.family;
		entered = !key_equal(&e->key, &p.key); /* not by another CPU just now */
		if (entered) {
			e->key = p.key;
			e->weight_milli = weight;
			e->rate.rate_bps = rate;
			e->rate.last_ns = now > 1 ? now : 1;
			e->rate.pending_bytes = bytes;
			e->tuf_n = d_f;
		}
		bpf_spin_unlock(&e->lock);
		if (entered && was)
			count(CNT_EVICTED, 0);
		if (entered)
			count(CNT_NEW_FLOW, 0);
	}

	if (cfg->tuf) {
		/* TUF: T(R (1 - X_n) / w), X_n the flow's counter's bits reversed; the counter
		 * is updated without a lock, as the rate is. */
		__u32 n = e->tuf_n + 1;

		e->tuf_n = n;
		code = tuf_edge_code(rate, n, e->weight_milli);
	} else {
		/* Weighted CSFQ: the label is r / w (w in thousandths, at least 1); no division
		 * for the usual weight 1. */
		if (e->weight_milli != 1000)
			rate = rate * 1000 / (e->weight_milli ? e->weight_milli : 1);
		code = label_code_of(p.family, rate);
	}
	if (write_label(skb, &p, code) < 0) {
		count(CNT_WRITE_FAILED, bytes);
		return TC_ACT_UNSPEC;
	}
	count(CNT_LABELED, bytes);
	return TC_ACT_UNSPEC;
}
