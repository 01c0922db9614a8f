// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * MAY, Markov Active Yield (the MAY paper, Section II and the pseudocode of its Fig. 1;
 * SPEC Section 4), as a tc classifier on the egress of the bottleneck interface, in front
 * of the tbf or htb that sets the link's rate C and holds its drop-tail FIFO.
 *
 * One table H of the flows that lost a packet (an LRU hash: bounded, the least recently
 * seen entry evicted when full). A packet of a flow in H is dropped with probability
 * v * delta(flow); a packet of any other flow is sampled into H with probability
 * q0 = 1/S0, and dropped if the utilization is above u0. Every Delta, v moves by
 * kappa (utilization - u0), the utilization being the arrival rate at the queue over C
 * (every byte that reaches this program, dropped or not), and each entry folds its
 * interval's drops into delta.
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

/*
 * H. The kernel allows no spin lock in an LRU map's values: two CPUs handling one flow at
 * the same instant may interleave an update of its entry, which costs one drop's count,
 * never safety (RSS and per-socket transmit keep a flow on one CPU at a time).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct csfq_flow_key);
	__type(value, struct csfq_may_entry);
} may_flows SEC(".maps");

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
static __always_inline void may_fold(struct csfq_may_entry *e, __u64 epoch, const struct csfq_may_config *p)
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

/* may_fixed.rs end_interval: line 20, under the state's lock. */
static __always_inline void may_end_interval(struct csfq_may_state *st, __u64 now, __u64 arrived,
					     const struct csfq_may_config *p)
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
	st->v_q32 = v;
	st->epoch += 1;
	st->last_update_ns = now;
}

/* The end of FixedMay::on_arrival: the update when Delta has passed, then the bytes
 * (with passed_only, not those of a packet MAY drops). */
static __always_inline void may_arrive(struct csfq_may_state *st, const struct csfq_may_config *p, __u64 now,
				       __u32 bytes, int dropped)
{
	__u64 last = st->last_update_ns;

	if ((now > last ? now - last : 0) >= p->interval_ns) {
		bpf_spin_lock(&st->lock);
		/* another CPU may have ended the interval meanwhile */
		last = st->last_update_ns;
		if ((now > last ? now - last : 0) >= p->interval_ns) {
			/* Taken atomically: other CPUs keep adding without the lock, and what they
			 * add from here on belongs to the next interval. */
			__u64 arrived = __sync_lock_test_and_set(&st->arrived_bytes, 0);

			may_end_interval(st, now, arrived, p);
		}
		bpf_spin_unlock(&st->lock);
	}
	if (!(p->passed_only && dropped))
		__sync_fetch_and_add(&st->arrived_bytes, bytes);
}

/*
 * may_fixed.rs FixedMay::on_arrival, up to the update: lines 2-15 for one packet of the
 * flow `key` at `now` with the 32-bit random `draw`. The aggregate state is read without
 * the lock (v, the utilization and the interval change once per Delta).
 */
__noinline int may_decide(struct csfq_flow_key *key, __u64 now, __u32 draw)
{
	__u32 zero = 0, verdict = MAY_FORWARD;
	struct csfq_may_config *p;
	struct csfq_may_state *st;
	struct csfq_may_entry *e;
	__u64 epoch, last, d = draw;
	int tracked = 0;

	if (!key)
		return MAY_FORWARD;
	p = bpf_map_lookup_elem(&may_config, &zero);
	st = bpf_map_lookup_elem(&may_state, &zero);
	if (!p || !st)
		return MAY_FORWARD;
	epoch = st->epoch;
	last = st->last_update_ns;
	e = bpf_map_lookup_elem(&may_flows, key);
	if (e) {
		if (e->epoch < epoch && (last > e->ts_ns ? last - e->ts_ns : 0) > p->timeout_ns) {
			bpf_map_delete_elem(&may_flows, key);
			count(CNT_MAY_EXPIRED, 0);
		} else {
			tracked = 1;
			may_fold(e, epoch, p);
			if (d < may_drop_probability(st->v_q32, e->delta_q16)) {
				if (e->nd != 0xffffffffU)
					e->nd += 1;
				e->ts_ns = now;
				verdict = MAY_DROP_HISTORY;
			}
		}
	}
	if (!tracked && d < p->sample_q32) {
		struct csfq_may_entry n = { .ts_ns = now, .epoch = epoch, .nd = 1 };

		bpf_map_update_elem(&may_flows, key, &n, BPF_ANY);
		count(CNT_MAY_INSERTED, 0);
		if (st->util_q16 > p->u0_q16)
			verdict = MAY_DROP_SAMPLE;
	}
	return verdict;
}

SEC("classifier")
int csfq_may(struct __sk_buff *skb)
{
	__u32 zero = 0, bytes = skb->len, draw, why;
	struct csfq_may_config *p;
	struct csfq_may_state *st;
	struct parsed pk;
	int verdict;
	__u64 now;

	p = bpf_map_lookup_elem(&may_config, &zero);
	st = bpf_map_lookup_elem(&may_state, &zero);
	if (!p || !st || p->capacity_bps == 0)
		return TC_ACT_UNSPEC;
	if (p->test_mode) {
		now = p->test_now_ns;
		draw = p->test_draw;
	} else {
		now = bpf_ktime_get_ns();
		draw = bpf_get_prandom_u32();
	}
	__builtin_memset(&pk, 0, sizeof(pk));
	why = parse(skb, &pk, 1);
	if (why && why != CNT_PASS_NOT_ATOMIC) {
		may_arrive(st, p, now, bytes, 0);
		count(why, bytes);
		return TC_ACT_UNSPEC;
	}
	verdict = may_decide(&pk.key, now, draw);
	may_arrive(st, p, now, bytes, verdict != MAY_FORWARD);
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
