// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * MAY, Markov Active Yield (the MAY paper, Section II and the pseudocode of its Fig. 1;
 * SPEC Section 4), as a tc classifier on the egress of the bottleneck interface, in front
 * of the tbf or htb that sets the link's rate C and holds its drop-tail FIFO.
 *
 * One table H of the flows that lost a packet (a flow cache, as the edge's flow table:
 * bounded, below). A packet of a flow in H is dropped with probability
 * v * delta(flow); a packet of any other flow is sampled into H with probability
 * q0 = 1/S0, and dropped if the utilization is above u0. Every Delta, v moves by
 * kappa (utilization - u0), the utilization being the arrival rate at the queue over C
 * (every byte that reaches this program, dropped or not), and each entry folds its
 * interval's drops into delta. With the ceiling (the default; may.rs, "v's ceiling"), v
 * is then kept at or below the v that drops every packet of the flow with the largest
 * delta the interval's arrivals found.
 *
 * No packet walks the table: the update of v runs on the first packet at least Delta
 * after the last (under the state's lock, once per Delta) and counts an interval; an entry
 * catches up on the intervals it missed when its flow's next packet comes, in closed form,
 * and is removed then if it had expired (idle past T0). The arithmetic is that of
 * crates/csfq-algo/src/may_fixed.rs, operation for operation; testdata/may-fixed-vectors.csv
 * keeps the two equal.
 *
 * A flow is the 5-tuple. IPv4 without DF is keyed the same; a later fragment by its
 * addresses and protocol. Frames that are not IP are never dropped, and count in the
 * utilization.
 */
#include "csfq.h"

#define ONE_Q32 (1ULL << 32)
#define V_MAX_Q32 (16ULL << 32)
#define DELTA_MAX_Q16 (1ULL << 47)
#define UTIL_MAX_Q16 (256ULL << 16)
#define ARRIVED_MAX (1ULL << 40)
#define ELAPSED_US_MAX (1ULL << 31)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_may_config);
} may_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_may_state);
} may_state SEC(".maps");

/* The clock's offset (CSFQ_CLOCK_COARSE: csfq_now). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_clock);
} may_clock SEC(".maps");

/*
 * H: a flow cache, as the edge's flow table (edge.bpf.c): an array of entries in sets of
 * CSFQ_FLOW_WAYS, each flow's key hashed (seeded, csfq_flow_hash) to two sets, the flow in
 * one of their eight entries or in none. A lookup is a hash and at most eight key
 * comparisons, with no helper call, where the kernel's LRU hash it replaces (a helper, a
 * bucket, an element, the LRU's bookkeeping) cost the edge 60-85 ns a packet in place
 * (BENCHMARKS). A flow sampled into H takes the first empty entry of its first set, else
 * of its second, else the entry of the eight whose flow's TS (its last drop, or its
 * insert) is the oldest, the first such on a tie: the entry nearest its expiry (T0 after
 * its TS), where an LRU would keep a flow that still sends but no longer loses packets
 * (csfq_dp::flow_table models the choice; the program tests hold the program to it).
 * An entry that expires is emptied (its key zeroed: no flow's key is, its family being 4
 * or 6).
 *
 * A flow's entry is updated without a lock: two CPUs handling one flow at the same
 * instant may interleave an update, which costs one drop's count, never safety (RSS and
 * per-socket transmit keep a flow on one CPU at a time). An entry's key is written, and
 * emptied, under the entry's lock, so two flows taking one entry at once leave it to one
 * of them; the lock is a field of the value itself, as older kernels require.
 */
struct csfq_may_slot {
	struct csfq_flow_key key;
	struct bpf_spin_lock lock;
	__u32 pad;
	struct csfq_may_entry e;
};

/* The default table: 65 536 entries (csfq_dp::DEFAULT_FLOWS); the loader sets the size. */
#define DEFAULT_SETS 16384

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CSFQ_FLOW_WAYS * DEFAULT_SETS);
	__type(key, __u32);
	__type(value, struct csfq_may_slot);
} may_flows SEC(".maps");

/* Set at load time (csfq_dp::loader): the table's sets, and the hash's seed, drawn at
 * random for each table. */
const volatile __u32 flow_sets = DEFAULT_SETS;
const volatile __u64 flow_seed = 0;

enum may_verdict { MAY_FORWARD, MAY_DROP_HISTORY, MAY_DROP_SAMPLE };

/* may_fixed.rs mul_q32: floor(x k / 2^32) for x < 2^48, k <= 2^32, in two halves. */
static __always_inline __u64 mul_q32(__u64 x, __u64 k)
{
	return (x >> 32) * k + (((x & 0xffffffffULL) * k) >> 32);
}

/* may_fixed.rs pow_q32: keep^k in Q32, by squaring over 32 rounds. */
static __always_inline __u64 pow_q32(__u64 keep, __u64 k)
{
	__u64 r = ONE_Q32, b = keep;

	if (k >> 32)
		return 0;
#pragma unroll
	for (int i = 0; i < 32; i++) {
		if (k & 1)
			r = (r * b) >> 32;
		b = (b * b) >> 32;
		k >>= 1;
	}
	return r;
}

/* may_fixed.rs drop_probability_q32: v delta in Q0.32, ONE_Q32 when certain. */
static __always_inline __u64 may_drop_probability(__u64 v, __u64 delta)
{
	__u64 p;

	if (v == 0 || delta == 0)
		return 0;
	if (log2_floor(v) + log2_floor(delta) >= 48)
		return ONE_Q32;
	p = (v * delta) >> 16;
	return p < ONE_Q32 ? p : ONE_Q32;
}

/* may_fixed.rs fold: lines 25-27 for each interval the entry missed. */
static __always_inline void may_fold(struct csfq_may_entry *e, __u64 epoch, const struct csfq_may_params *p)
{
	__u64 k, first;

	if (e->epoch >= epoch)
		return;
	k = epoch - e->epoch;
	first = mul_q32(e->delta_q16, p->keep_q32) + p->q_w_q16 * (__u64)e->nd;
	if (first > DELTA_MAX_Q16)
		first = DELTA_MAX_Q16;
	e->delta_q16 = k > 1 ? mul_q32(first, pow_q32(p->keep_q32, k - 1)) : first;
	e->nd = 0;
	e->epoch = epoch;
}

/* may_fixed.rs end_interval: line 20, under the state's lock; delta_max (Q16) the largest
 * delta the interval's arrivals found, 0 for none. */
static __always_inline void may_end_interval(struct csfq_may_state *st, __u64 now, __u64 arrived,
					     __u64 delta_max, const struct csfq_may_params *p)
{
	__u64 elapsed = now > st->last_update_ns ? now - st->last_update_ns : 0;
	__u64 elapsed_us = elapsed / 1000, sendable, bits_q16, util;
	__s64 v;

	if (elapsed_us > ELAPSED_US_MAX)
		elapsed_us = ELAPSED_US_MAX;
	sendable = (p->capacity_bps / 1000) * elapsed_us / 1000;
	if (arrived > ARRIVED_MAX)
		arrived = ARRIVED_MAX;
	bits_q16 = (arrived * 8) << 16;
	util = sendable == 0 ? UTIL_MAX_Q16 : bits_q16 / sendable;
	if (util > UTIL_MAX_Q16)
		util = UTIL_MAX_Q16;
	st->util_q16 = util;
	v = (__s64)st->v_q32 + (__s64)p->gain_q16 * ((__s64)util - (__s64)p->u0_q16);
	if (v < 0)
		v = 0;
	if (v > (__s64)V_MAX_Q32)
		v = V_MAX_Q32;
	/* may_fixed.rs ceiling_q32: 2^48 / delta_max, rounded up (delta_max <= 2^47) */
	if (p->ceiling && delta_max && (__u64)v > ((1ULL << 48) + delta_max - 1) / delta_max)
		v = ((1ULL << 48) + delta_max - 1) / delta_max;
	st->v_q32 = v;
	st->epoch += 1;
	st->last_update_ns = now;
}

/*
 * The bytes the utilization counts: each CPU's own running total since the attach, added
 * by that CPU alone, with no atomic on a word every CPU shares. The CPU that ends an
 * interval sums the totals (may_counted) and takes the interval's arrivals as the sum less
 * the one at the interval's start (the state's counted_bytes).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} may_arrivals SEC(".maps");

/* bpf_loop over CPU ids: adds CPU `cpu`'s total to *sum; stops past the last CPU. */
static long add_cpu_total(__u64 cpu, void *sum)
{
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_percpu_elem(&may_arrivals, &zero, (__u32)cpu);

	if (!t)
		return 1;
	*(__u64 *)sum += READ_ONCE(*t);
	return 0;
}

/* Every CPU's bytes since the attach. A CPU adding while this reads its total is counted
 * now or at the next interval's end, never twice or not at all: totals only grow. */
static __always_inline __u64 may_counted(void)
{
	__u64 sum = 0;

	bpf_loop(CSFQ_MAX_CPUS, add_cpu_total, &sum, 0);
	return sum;
}

/*
 * The largest delta the arrivals of an interval found in their entries (FixedMay's
 * delta_max_q16), one per CPU as the arrivals' bytes are, each stamped with the interval
 * it belongs to: the CPU that ends interval E takes the largest of those stamped E.
 */
struct may_delta_max {
	__u64 epoch;
	__u64 delta_q16;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct may_delta_max);
} may_delta_max SEC(".maps");

/* An arrival of interval `epoch` found `delta` in its entry. */
static __always_inline void may_saw_delta(__u64 epoch, __u64 delta)
{
	__u32 zero = 0;
	struct may_delta_max *m = bpf_map_lookup_elem(&may_delta_max, &zero);

	if (!m)
		return;
	if (m->epoch != epoch) {
		m->epoch = epoch;
		m->delta_q16 = delta;
	} else if (delta > m->delta_q16) {
		m->delta_q16 = delta;
	}
}

/* bpf_loop over CPU ids: the largest of CPU `cpu`'s delta if stamped with the epoch asked
 * for; stops past the last CPU. */
static long max_cpu_delta(__u64 cpu, void *ctx)
{
	struct may_delta_max *want = ctx, *m;
	__u32 zero = 0;

	m = bpf_map_lookup_percpu_elem(&may_delta_max, &zero, (__u32)cpu);
	if (!m)
		return 1;
	if (READ_ONCE(m->epoch) == want->epoch && READ_ONCE(m->delta_q16) > want->delta_q16)
		want->delta_q16 = READ_ONCE(m->delta_q16);
	return 0;
}

/* The largest delta the CPUs' arrivals of interval `epoch` found. */
static __always_inline __u64 may_delta_max_of(__u64 epoch)
{
	struct may_delta_max want = { .epoch = epoch, .delta_q16 = 0 };

	bpf_loop(CSFQ_MAX_CPUS, max_cpu_delta, &want, 0);
	return want.delta_q16;
}

/* The end of FixedMay::on_arrival: the update when Delta has passed, then the bytes
 * (with passed_only, not those of a packet MAY drops). */
static __always_inline void may_arrive(struct csfq_may_state *st, const struct csfq_may_params *p, __u64 now,
				       __u32 bytes, int dropped)
{
	__u64 last = st->last_update_ns, epoch = st->epoch, counted, arrived, delta_max, *mine;
	__u32 zero = 0;

	if ((now > last ? now - last : 0) >= p->interval_ns) {
		/* Summed before the lock, under which no helper may run: what the other CPUs
		 * add from here on belongs to the next interval. */
		counted = may_counted();
		delta_max = p->ceiling ? may_delta_max_of(epoch) : 0;
		bpf_spin_lock(&st->lock);
		/* another CPU may have ended the interval meanwhile */
		last = st->last_update_ns;
		if ((now > last ? now - last : 0) >= p->interval_ns && st->epoch == epoch) {
			/* A CPU that summed before the last end and ends this interval finds a
			 * smaller sum than that end's: its interval counts nothing more. */
			arrived = counted > st->counted_bytes ? counted - st->counted_bytes : 0;
			if (counted > st->counted_bytes)
				st->counted_bytes = counted;
			may_end_interval(st, now, arrived, delta_max, p);
		}
		bpf_spin_unlock(&st->lock);
	}
	if (!(p->passed_only && dropped)) {
		mine = bpf_map_lookup_elem(&may_arrivals, &zero);
		if (mine)
			*mine += bytes;
	}
}

/* A packet's 32-bit random number: the test's, or the kernel's. */
static __always_inline __u64 may_draw(const struct csfq_may_config *p)
{
	return p->test_mode ? p->test_draw : bpf_get_prandom_u32();
}

/*
 * may_fixed.rs FixedMay::on_arrival, up to the update: lines 2-15 for one packet of the
 * flow `key` at `now`, drawing its 32-bit random number (may_draw) only where a
 * probability above 0 is to be decided: an uncongested link's packets (v = 0) draw none,
 * and since draws are independent, which packets draw changes no packet's odds (in test
 * mode the packet's draw is the given one either way). The aggregate state is read without
 * the lock (v, the utilization and the interval change once per Delta).
 */
__noinline int may_decide(struct csfq_flow_key *key, __u64 now)
{
	__u32 zero = 0, verdict = MAY_FORWARD;
	const struct csfq_may_params *p;
	struct csfq_may_config *c;
	struct csfq_may_state *st;
	struct csfq_may_slot *slot;
	struct csfq_may_entry *e;
	__u64 epoch, last, prob;
	int found = 0, entered;
	__u8 was;

	if (!key)
		return MAY_FORWARD;
	c = bpf_map_lookup_elem(&may_config, &zero);
	st = bpf_map_lookup_elem(&may_state, &zero);
	if (!c || !st)
		return MAY_FORWARD;
	p = &c->params;
	epoch = st->epoch;
	last = st->last_update_ns;
	slot = flow_cache_entry(&may_flows, flow_sets, flow_seed, key,
				__builtin_offsetof(struct csfq_may_slot, e.ts_ns), &found);
	if (!slot)
		return MAY_FORWARD;
	e = &slot->e;
	if (found && e->epoch < epoch && (last > e->ts_ns ? last - e->ts_ns : 0) > p->timeout_ns) {
		/* Expired: emptied, unless another CPU has just given the entry to another flow. */
		bpf_spin_lock(&slot->lock);
		if (key_equal(&slot->key, key))
			__builtin_memset(&slot->key, 0, sizeof(slot->key));
		bpf_spin_unlock(&slot->lock);
		count(CNT_MAY_EXPIRED, 0);
		found = 0;
	} else if (found) {
		may_fold(e, epoch, p);
		if (p->ceiling)
			may_saw_delta(epoch, e->delta_q16);
		prob = may_drop_probability(st->v_q32, e->delta_q16);
		if (prob && may_draw(c) < prob) {
			if (e->nd != 0xffffffffU)
				e->nd += 1;
			e->ts_ns = now;
			verdict = MAY_DROP_HISTORY;
		}
		return verdict;
	}
	if (p->sample_q32 && may_draw(c) < p->sample_q32) {
		/* Sampled into H: the entry the lookup chose (the one just emptied, if any). */
		bpf_spin_lock(&slot->lock);
		was = slot->key.family;
		entered = !key_equal(&slot->key, key); /* not by another CPU just now */
		if (entered) {
			slot->key = *key;
			e->delta_q16 = 0;
			e->ts_ns = now;
			e->epoch = epoch;
			e->nd = 1;
			e->pad = 0;
		}
		bpf_spin_unlock(&slot->lock);
		if (entered && was)
			count(CNT_EVICTED, 0);
		if (entered)
			count(CNT_MAY_INSERTED, 0);
		if (st->util_q16 > p->u0_q16)
			verdict = MAY_DROP_SAMPLE;
	}
	return verdict;
}

SEC("classifier")
int csfq_may(struct __sk_buff *skb)
{
	__u32 zero = 0, bytes = skb->len, why;
	struct csfq_may_config *c;
	struct csfq_may_state *st;
	struct parsed pk;
	int verdict;
	__u64 now;

	c = bpf_map_lookup_elem(&may_config, &zero);
	st = bpf_map_lookup_elem(&may_state, &zero);
	if (!c || !st || c->params.capacity_bps == 0)
		return TC_ACT_UNSPEC;
	now = c->test_mode ? c->test_now_ns : csfq_now(&may_clock, c->clock, c->tick_ns);
	__builtin_memset(&pk, 0, sizeof(pk));
	why = parse(skb, &pk, 1);
	if (why && why != CNT_PASS_NOT_ATOMIC) {
		may_arrive(st, &c->params, now, bytes, 0);
		count(why, bytes);
		return TC_ACT_UNSPEC;
	}
	verdict = may_decide(&pk.key, now);
	may_arrive(st, &c->params, now, bytes, verdict != MAY_FORWARD);
	switch (verdict) {
	case MAY_DROP_HISTORY:
		count(CNT_DROP_MAY_HISTORY, bytes);
		return TC_ACT_SHOT;
	case MAY_DROP_SAMPLE:
		count(CNT_DROP_MAY_SAMPLE, bytes);
		return TC_ACT_SHOT;
	default:
		count(CNT_FORWARDED, bytes);
		return TC_ACT_UNSPEC;
	}
}
