// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * CS-FNE core (Kim, master's thesis, 2005, Chapter 3; SPEC Section 3), as a tc classifier
 * on the egress of the bottleneck interface, in front of the tbf or htb that sets the
 * link's rate C. The edges are CSFQ's edges with the Time Sliding Window meter
 * (`csfq dp edge attach --meter tsw`); the labels travel as CSFQ's.
 *
 * No per-flow state: the number of active flows is estimated from how often an arrival
 * belongs to the flow of a packet drawn at random from the queue (Li and Leu's estimator,
 * Eqs. 3-2 to 3-4): N_act = (r_hit + r_miss) / r_hit, the threshold rate CL = C / N_act,
 * and above a target queue a packet labeled r is dropped with probability
 * max(0, 1 - CL/r) and otherwise forwarded relabeled min(r, CL).
 *
 * The shaper's queue is not visible from a classifier, so the queue is a virtual one at
 * rate C (as the CSFQ core's), and "a packet from the queue" is drawn from a ring of the
 * flow fingerprints of the last packets admitted, among those still in the virtual queue
 * (a binary search over their finish times, skipped when the queue is empty). csfne_fixed.rs is the model, operation for
 * operation; testdata/csfne-fixed-vectors.csv keeps the two equal.
 *
 * Every packet takes the one lock (r_hit, r_miss, the virtual queue and the ring change
 * together); its random numbers are drawn before it, which allows no helper calls, and
 * only where they may be used. The ring's search runs before it too, on no branch.
 * Unlabeled traffic (label 0, untrusted interfaces, what cannot carry a label) is judged
 * as one flow priced by the rate of all of it, as the CSFQ core judges it.
 */
#include "csfq.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_csfne_config);
} csfne_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_csfne_state);
} csfne_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_clock);
} csfne_clock SEC(".maps");

/* Set at load time (csfq_dp::loader): the fingerprints' seed, drawn at random, so that no
 * one who does not know it can choose a flow whose packets count as another's. */
const volatile __u64 flow_seed = 0;

enum verdict { FORWARD, RELABEL, DROP };

/* One packet: what the core is told of it, and what it decided. */
struct csfne_packet {
	__u64 now;
	__u64 label;   /* bit/s; 0: unlabeled */
	__u32 bytes;
	__u32 fp;      /* its flow's fingerprint */
	__u32 pick;    /* the random number that picks the queued packet it is compared with */
	__u32 draw;    /* the random number its drop is decided by */
	__u64 out;     /* the label to write (RELABEL) */
	__u32 verdict; /* enum verdict */
	__u32 reason;  /* enum csfq_drop_reason (DROP) */
};

/* csfne_fixed.rs queue_bytes. */
static __always_inline __u32 vq_bytes(const struct csfq_csfne_state *st, const struct csfq_csfne_config *p,
				      __u64 now)
{
	__u64 b;

	if (st->vq_finish_ns <= now)
		return 0;
	b = (st->vq_finish_ns - now) * p->capacity_bps / (8 * NSEC_PER_SEC);
	return b > 0xffffffffULL ? 0xffffffffU : (__u32)b;
}

/*
 * csfne_fixed.rs queued: how many of the ring's newest entries finish after `now`, by the
 * same binary search, written without branches so that the verifier walks it once rather
 * than once for each of its 2^13 paths: each comparison is the sign of a difference (every
 * time is below 2^63), each update a select by mask, hidden from the compiler, which would
 * turn it back into a branch. Read without the lock: another CPU may admit packets
 * meanwhile, which moves the count by those few (the draw is then among slightly older
 * packets).
 */
static __always_inline __u64 queued(const struct csfq_csfne_state *st, __u64 mask, __u64 ring, __u64 now)
{
	__u64 admitted = READ_ONCE(st->admitted);
	__u64 m = admitted < ring ? admitted : ring;
	__u64 first = admitted - m, lo = 0, hi = m, mid, go, gt, to_hi, to_lo;
	int i;

#pragma unroll
	for (i = 0; i < CSFNE_SEARCH_STEPS; i++) {
		go = (lo - hi) >> 63; /* 1 while lo < hi */
		mid = (lo + hi) >> 1;
		gt = (now - st->ring[(first + mid) & mask & (CSFNE_RING_MAX - 1)].finish_ns) >> 63;
		asm volatile("" : "+r"(go), "+r"(gt));
		to_hi = -(go & gt);       /* it finishes after now: hi = mid */
		to_lo = -(go & (gt ^ 1)); /* it does not: lo = mid + 1 */
		hi = (hi & ~to_hi) | (mid & to_hi);
		lo = (lo & ~to_lo) | ((mid + 1) & to_lo);
	}
	return m - lo;
}

/* csfne_fixed.rs cl_bps: C r_hit / (r_hit + r_miss), both scaled to CSFNE_CL_BITS bits. */
static __always_inline __u64 cl_bps(const struct csfq_csfne_state *st, const struct csfq_csfne_config *p)
{
	__u64 h = st->hit.rate_bps, s = h + st->miss.rate_bps;
	__u32 bits, shift = 0;

	if (h == 0)
		return p->capacity_bps;
	if (s < h)
		s = ~0ULL; /* saturating */
	bits = log2_floor(s) + 1;
	if (bits > CSFNE_CL_BITS)
		shift = bits - CSFNE_CL_BITS;
	return p->capacity_bps * (h >> shift) / (s >> shift);
}

/* csfne_fixed.rs FixedCsfneCore::on_arrival for one packet. Global: the verifier checks it
 * once, apart from the program's paths. */
__noinline int csfne_decide(struct csfne_packet *d)
{
	__u32 zero = 0, queue, prob, i, bytes;
	struct csfq_csfne_config *p;
	struct csfq_csfne_state *st;
	__u64 n, j, cl, mask, ring, service, now, label;

	if (!d)
		return 0;
	now = d->now;
	label = d->label;
	bytes = d->bytes;
	d->verdict = FORWARD;
	d->out = label;
	d->reason = 0;
	p = bpf_map_lookup_elem(&csfne_config, &zero);
	st = bpf_map_lookup_elem(&csfne_state, &zero);
	if (!p || !st || p->capacity_bps == 0)
		return 0;
	ring = p->ring;
	if (ring == 0 || ring > CSFNE_RING_MAX)
		ring = CSFNE_RING_MAX;
	mask = ring - 1;
	/* An empty virtual queue holds none of the ring's packets (each finishes by the
	 * queue's end): no search, the model's answer all the same. */
	n = READ_ONCE(st->vq_finish_ns) > now ? queued(st, mask, ring, now) : 0;
	/* The random numbers only where they may be used (no helper may run under the lock):
	 * a pick if something is queued, a draw if the queue is at the target. */
	if (!p->test_mode) {
		d->pick = n > 0 ? bpf_get_prandom_u32() : 0;
		d->draw = vq_bytes(st, p, now) >= p->target_bytes ? bpf_get_prandom_u32() : 0xffffffffU;
	}
	bpf_spin_lock(&st->lock);
	if (label == 0)
		label = label_rate_of(4, label_code_of(4, rate_update(&st->unlabeled, now, bytes, p->k_ns)));
	queue = vq_bytes(st, p, now);
	if (n > st->admitted)
		n = st->admitted;
	if (n > 0) {
		j = st->admitted - n + (((__u64)d->pick * n) >> 32);
		if (st->ring[j & mask & (CSFNE_RING_MAX - 1)].fingerprint == d->fp) {
			rate_update(&st->hit, now, bytes, p->k_ns);
			rate_update(&st->miss, now, 0, p->k_ns);
		} else {
			rate_update(&st->hit, now, 0, p->k_ns);
			rate_update(&st->miss, now, bytes, p->k_ns);
		}
	}
	cl = cl_bps(st, p);
	d->out = label;
	if (queue >= p->target_bytes) {
		prob = drop_probability_q32(cl, label);
		if (prob > 0) {
			if (d->draw < prob) {
				d->verdict = DROP;
				d->reason = CSFQ_DROP_CSFNE_PROB;
				goto out;
			}
			d->verdict = RELABEL;
			d->out = cl;
		}
	}
	if ((__u64)queue + bytes > p->limit_bytes) {
		d->verdict = DROP;
		d->reason = CSFQ_DROP_OVERFLOW;
		goto out;
	}
	service = (__u64)bytes * 8 * NSEC_PER_SEC / p->capacity_bps;
	st->vq_finish_ns = (st->vq_finish_ns > now ? st->vq_finish_ns : now) + service;
	i = st->admitted & mask;
	st->ring[i & (CSFNE_RING_MAX - 1)].fingerprint = d->fp;
	st->ring[i & (CSFNE_RING_MAX - 1)].finish_ns = st->vq_finish_ns;
	st->admitted += 1;
out:
	bpf_spin_unlock(&st->lock);
	return 0;
}

SEC("classifier")
int csfq_csfne(struct __sk_buff *skb)
{
	__u32 zero = 0, bytes = skb->len, why, carrier = 1, untrusted = 0, code, passed;
	struct csfne_packet d = {};
	struct csfq_csfne_config *p;
	struct parsed pk;

	p = bpf_map_lookup_elem(&csfne_config, &zero);
	if (!p || p->capacity_bps == 0)
		return TC_ACT_UNSPEC;
	__builtin_memset(&pk, 0, sizeof(pk));
	why = parse(skb, &pk, 1);
	/* As the CSFQ core: what cannot carry a label (IPv4 without DF or a fragment, frames
	 * the core cannot parse) is unlabeled traffic; ARP is spared. IPv4 that cannot carry a
	 * label keeps its flow (parse fills the key). */
	if (why) {
		int act = unreadable(skb, why, bytes, p->drop_unparsed);

		if (act != CSFQ_JUDGE)
			return act;
		carrier = 0;
		if (why != CNT_PASS_NOT_ATOMIC)
			__builtin_memset(&pk, 0, sizeof(pk));
	}
	code = carrier ? pk.label_code : 0;
	if (p->trust == CSFQ_TRUST_LISTED && !trusted_from(p->trusted, skb->ingress_ifindex)) {
		untrusted = 1;
		code = 0;
		count(CNT_UNTRUSTED, bytes);
	}
	/* The flow's fingerprint: its 5-tuple hashed with the seed, the lowest bit set (never
	 * 0; two flows share one with probability 2^-31). */
	d.fp = (__u32)csfq_flow_hash(&pk.key, flow_seed) | 1;
	d.now = p->test_mode ? p->test_now_ns : csfq_now(&csfne_clock, p->clock, p->tick_ns);
	d.pick = p->test_pick; /* test mode; csfne_decide draws them otherwise */
	d.draw = p->test_draw;
	d.label = code ? label_rate_of(pk.family, code) : 0;
	d.bytes = bytes;
	csfne_decide(&d);

	switch (d.verdict) {
	case DROP:
		count(d.reason == CSFQ_DROP_CSFNE_PROB ? CNT_DROP_CSFNE_PROB : CNT_DROP_OVERFLOW, bytes);
		return TC_ACT_SHOT;
	case RELABEL:
		if (!carrier)
			break;
		if (write_label(skb, &pk, label_code_of(pk.family, d.out)) < 0) {
			count(CNT_WRITE_FAILED, bytes);
			return TC_ACT_UNSPEC;
		}
		count(CNT_RELABELED, bytes);
		return TC_ACT_UNSPEC;
	default:
		if (untrusted && carrier && write_label(skb, &pk, 0) < 0) {
			count(CNT_WRITE_FAILED, bytes);
			return TC_ACT_UNSPEC;
		}
		break;
	}
	passed = !carrier ? why : code ? CNT_FORWARDED : CNT_PASS_UNLABELED;
	count(passed, bytes);
	return TC_ACT_UNSPEC;
}
