// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * CSFQ core (Stoica, Shenker, Zhang, SIGCOMM 1998, Sections 2.2-2.3; SPEC Section 1), as a
 * tc classifier on the egress of the bottleneck interface, in front of the tbf or htb that
 * sets the link's rate C.
 *
 * It keeps no per-flow state: only the fair share alpha and its window, shared by all
 * CPUs, and the window's labels. With the histogram estimator (the default) each CPU
 * counts its packets in its own lane (a per-CPU map) without a lock, and the CPU that
 * ends a window merges the lanes and solves alpha; with the paper's estimator the
 * aggregate arrival and accepted rates A and F (Eq. 3) are updated under one spin lock.
 * A packet labeled r is dropped with probability max(0, 1 - alpha/r) (Eq. 2) and otherwise
 * forwarded relabeled min(r, alpha). The buffer-overflow amendment (alpha *= 0.99 at most
 * overflow_budget times between two updates of alpha) is driven by a virtual queue drained
 * at C: the qdisc's real queue is not visible from here, and a virtual queue of the same
 * rate holds the same bytes while the link is busy.
 *
 * alpha is estimated as the paper does (alpha *= C/F per congested window) or, by
 * default, solved once per window from a fixed-size histogram of the labels that arrived
 * (label_histogram.rs). Unlabeled packets (label 0: traffic that did not cross an edge,
 * flows under 1 kbit/s; and IPv4 that cannot carry a label) are judged as one flow whose
 * label is the rate of all of them, and count like any other in A, F, the histogram and
 * the virtual queue, as in the Rust model.
 *
 * The clock is the fine one (bpf_ktime_get_ns) or, as the operator chooses, the kernel's
 * tick counter (csfq.h coarse_now: one load instead of a helper call); then the virtual
 * queue drains once a tick, which the attach allows only where a tick is at most a
 * quarter of the limit's drain time and of the windows. The random number a drop is
 * decided by is drawn only for a packet labeled above alpha (histogram estimator).
 */
#include "csfq.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_core_config);
} core_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_core_state);
} core_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_clock);
} core_clock SEC(".maps");

enum verdict { FORWARD, RELABEL, DROP };

/* The counter of a reason this program drops for. */
static __always_inline __u32 drop_counter(__u32 reason)
{
	return reason == CSFQ_DROP_CSFQ_PROB ? CNT_DROP_PROBABILISTIC : CNT_DROP_OVERFLOW;
}

/* label_histogram.rs bin_of. */
static __always_inline __u32 hist_bin_of(__u64 label)
{
	__u64 k = label / 1000, m;
	__u32 e, b;

	if (k == 0)
		return 0;
	e = log2_floor(k);
	m = e >= 3 ? (k >> (e - 3)) & 7 : (k << (3 - e)) & 7;
	b = e * 8 + (__u32)m + 1;
	return b < HIST_BINS - 1 ? b : HIST_BINS - 1;
}

/* label_histogram.rs lower_edge_kbps. */
static __always_inline __u64 hist_lower_edge(__u32 bin)
{
	__u64 i;

	if (bin == 0)
		return 0;
	i = bin - 1;
	return ((8 + (i & 7)) << (i >> 3)) >> 3;
}

/* label_histogram.rs mul_q24: x d / 2^24 for x < 2^32. */
static __always_inline __u64 mul_q24(__u64 x, __u64 d)
{
	return x * (d >> HIST_INV_SHIFT) + ((x * (d & ((1ULL << HIST_INV_SHIFT) - 1))) >> HIST_INV_SHIFT);
}

/* Each CPU's lane (fixed.rs Lane): written by its CPU only, without a lock. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_core_lane);
} core_lanes SEC(".maps");

/* label_histogram.rs LabelHistogram::add, into this CPU's slot. */
static __always_inline void slot_add(struct csfq_core_slot *sl, __u64 label, __u32 bytes, int dropped)
{
	__u32 b = hist_bin_of(label);
	__u64 k = label / 1000;

	/* hide b's range from clang so the mask stays: the verifier needs to see it */
	asm volatile("" : "+r"(b));
	b &= HIST_BINS - 1;
	sl->hist[b].bytes += bytes;
	if (b > 0)
		sl->hist[b].inv += (((__u64)bytes << HIST_INV_SHIFT) + k / 2) / k;
	if (label > sl->max_label_bps)
		sl->max_label_bps = label;
	sl->arrived_bytes += bytes;
	if (!dropped)
		sl->accepted_bytes += bytes;
}

/* bpf_loop over HIST_BINS: empties bin i of the histogram `data` points to the start of. */
static long clear_bin(__u32 i, void *data)
{
	struct csfq_hist_bin *bins = *(struct csfq_hist_bin **)data;
	__u32 j = i & (HIST_BINS - 1);

	bins[j].bytes = 0;
	bins[j].inv = 0;
	return 0;
}

/* This CPU's slot for window `w`, emptied first if it still holds an older window's
 * (already merged: that window ended at least K_c ago). */
static __always_inline struct csfq_core_slot *own_slot(__u64 w)
{
	__u32 zero = 0;
	struct csfq_core_lane *lane = bpf_map_lookup_elem(&core_lanes, &zero);
	struct csfq_core_slot *sl;

	if (!lane)
		return 0;
	sl = &lane->slot[w & 1];
	if (sl->window != w) {
		struct csfq_hist_bin *bins = sl->hist;

		bpf_loop(HIST_BINS, clear_bin, &bins, 0);
		sl->max_label_bps = 0;
		sl->arrived_bytes = 0;
		sl->accepted_bytes = 0;
		/* emptied before tagged: a merger that sees the tag sees the empty slot */
		asm volatile("" ::: "memory");
		WRITE_ONCE(sl->window, w);
	}
	return sl;
}

/* CPU `cpu`'s slot if it holds window `w`, else 0; `*past` set past the machine's last
 * CPU id. */
static __always_inline struct csfq_core_slot *held_slot(__u32 cpu, __u64 w, int *past)
{
	__u32 zero = 0;
	struct csfq_core_lane *lane = bpf_map_lookup_percpu_elem(&core_lanes, &zero, cpu);
	struct csfq_core_slot *sl;

	*past = !lane;
	if (!lane)
		return 0;
	sl = &lane->slot[w & 1];
	return READ_ONCE(sl->window) == w ? sl : 0;
}

/* A window's merged histogram (per CPU: only the CPU that ends a window uses it). */
struct hist_snapshot {
	struct csfq_hist_bin bin[HIST_BINS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hist_snapshot);
} core_hist_snapshot SEC(".maps");

struct merge_ctx {
	struct hist_snapshot *snap;
	struct csfq_core_slot *sl; /* the CPU being merged */
	__u64 window, total, d, max_label, arrived, accepted;
	__u32 first, torn;
};

/* Inner loop (bins): one CPU's slot added into the snapshot (fixed.rs absorb). */
static long merge_bin(__u32 i, void *data)
{
	struct merge_ctx *c = data;
	struct csfq_core_slot *sl = c->sl;
	__u32 j = i & (HIST_BINS - 1);
	__u64 bytes = sl->hist[j].bytes, inv = sl->hist[j].inv;

	if (c->first) {
		c->snap->bin[j].bytes = bytes;
		c->snap->bin[j].inv = inv;
	} else {
		c->snap->bin[j].bytes += bytes;
		c->snap->bin[j].inv += inv;
	}
	c->total += bytes;
	if (j > 0)
		c->d += inv;
	return 0;
}

/* Outer loop (CPUs, to the first id past the machine's): each lane's slot for the window
 * merged, if it holds that window. A slot re-tagged while it was read (its CPU already
 * two windows on: a merge slower than K_c) makes the window torn. */
static long merge_lane(__u32 cpu, void *data)
{
	struct merge_ctx *c = data;
	int past;
	struct csfq_core_slot *sl = held_slot(cpu, c->window, &past);

	if (!sl)
		return past; /* 1 stops the loop */
	c->sl = sl;
	bpf_loop(HIST_BINS, merge_bin, c, 0);
	c->first = 0;
	if (sl->max_label_bps > c->max_label)
		c->max_label = sl->max_label_bps;
	c->arrived += sl->arrived_bytes;
	c->accepted += sl->accepted_bytes;
	if (READ_ONCE(sl->window) != c->window)
		c->torn = 1;
	return 0;
}

struct solve_ctx {
	struct hist_snapshot *snap;
	__u64 s, d, prev_x, prev_f, target, out;
	__u32 found;
};

/* Pass 2 (bpf_loop over bins 1..): label_histogram.rs LabelHistogram::solve's scan. */
static long scan_bin(__u32 i, void *data)
{
	struct solve_ctx *c = data;
	__u32 j = (i + 1) & (HIST_BINS - 1);
	__u64 x = hist_lower_edge(j), f = c->s + mul_q24(x, c->d);

	if (f >= c->target) {
		/* interpolate between (prev_x, prev_f) and (x, f); scale so it fits */
		__u64 num = c->target - c->prev_f, den = f - c->prev_f, a;
		__u32 bits = log2_floor(den) + 1;

		if (bits > 31) {
			num >>= bits - 31;
			den >>= bits - 31;
		}
		a = den ? c->prev_x + (x - c->prev_x) * num / den : x;
		c->out = (a > 0 ? a : 1) * 1000;
		c->found = 1;
		return 1; /* stop */
	}
	c->prev_x = x;
	c->prev_f = f;
	c->s += c->snap->bin[j].bytes;
	c->d -= c->snap->bin[j].inv;
	return 0;
}

/* label_histogram.rs LabelHistogram::solve on the merged window: the alpha (bit/s) at
 * which its arrivals would have been `target` bytes; 0 if they were not more than that. */
static __always_inline __u64 hist_solve(struct merge_ctx *m, __u64 target)
{
	struct solve_ctx c = { .snap = m->snap, .target = target, .d = m->d };

	if (m->total <= target)
		return 0;
	c.s = m->snap->bin[0].bytes;
	if (c.s >= target)
		return 1000; /* unlabeled traffic alone fills the window */
	c.prev_f = c.s;
	bpf_loop(HIST_BINS - 1, scan_bin, &c, 0);
	return c.found ? c.out : c.prev_x * 1000; /* labels beyond 3.7 Pbit/s */
}

/*
 * fixed.rs FixedCore::end_histogram_window, by the CPU that claimed window `w`'s end (under
 * the lock it moved the window's start from `start` to `now` and numbered the next): the
 * lanes merged and solved without the lock, and alpha published under it, unless a later
 * window's has been already or a slot changed under the merge. Packets the other CPUs add
 * to window w while it reads their slots may be missed (at most the few in flight on
 * each).
 */
static __always_inline void end_window(struct csfq_core_state *st, const struct csfq_core_config *p,
				       __u64 w, __u64 start, __u64 now, __u32 queue_bytes)
{
	__u32 zero = 0;
	struct merge_ctx m = { .window = w, .first = 1 };
	__u64 wlen = now - start, target, a, fallback, us;

	m.snap = bpf_map_lookup_elem(&core_hist_snapshot, &zero);
	if (!m.snap)
		return;
	bpf_loop(CSFQ_MAX_CPUS, merge_lane, &m, 0);
	/* if no lane held the window, the snapshot is stale but unread: total is 0 */
	/* csfq.rs target_bytes: C in kbit/s times the window (at most 2^31 ns). */
	target = (p->capacity_bps / 1000) * (wlen < (1ULL << 31) ? wlen : (1ULL << 31)) / 8000000;
	/* label_histogram.rs end_window: a window over 2 K_c long had an idle gap */
	a = wlen > 2 * p->k_c_ns ? 0 : hist_solve(&m, target);
	fallback = queue_bytes >= p->threshold_bytes ? m.max_label : 0;
	us = wlen / 1000 > 0 ? wlen / 1000 : 1;
	bpf_spin_lock(&st->lock);
	if (!m.torn && w >= st->published) {
		st->published = w + 1;
		st->congested = a > 0;
		if (a > 0)
			st->alpha_bps = a < p->capacity_bps ? a : p->capacity_bps;
		else
			st->alpha_bps = fallback;
		st->overflow_left = p->overflow_budget;
		if (wlen > 0) {
			/* fixed.rs window_rate, saturating */
			st->arrival.rate_bps = m.arrived > ~0ULL / 8000000 ? ~0ULL : m.arrived * 8000000 / us;
			st->accepted.rate_bps = m.accepted > ~0ULL / 8000000 ? ~0ULL : m.accepted * 8000000 / us;
		}
	}
	bpf_spin_unlock(&st->lock);
}

/* Claims the end of the window if it is due at `now` (under the lock, so that one CPU ends
 * each window even if it read the window's number and start apart): its number and start
 * in `w` and `start`. */
static __always_inline int claim_window(struct csfq_core_state *st, const struct csfq_core_config *p,
					__u64 now, __u64 *w, __u64 *start)
{
	int claimed = 0;

	bpf_spin_lock(&st->lock);
	if (now >= st->start_ns + p->k_c_ns) {
		*w = st->window;
		*start = st->start_ns;
		st->window = *w + 1;
		st->start_ns = now;
		claimed = 1;
	}
	bpf_spin_unlock(&st->lock);
	return claimed;
}

struct max_ctx {
	__u64 window, max_label;
};

static long max_of_lane(__u32 cpu, void *data)
{
	struct max_ctx *c = data;
	int past;
	struct csfq_core_slot *sl = held_slot(cpu, c->window, &past);

	if (sl && sl->max_label_bps > c->max_label)
		c->max_label = sl->max_label_bps;
	return past; /* 1 stops the loop */
}

/* The paper's restart (fixed.rs estimate_alpha): alpha = 0 and a queue at the threshold
 * set alpha to the window's largest label over all lanes. */
static __always_inline void restart(struct csfq_core_state *st, __u64 w)
{
	struct max_ctx c = { .window = w };

	bpf_loop(CSFQ_MAX_CPUS, max_of_lane, &c, 0);
	bpf_spin_lock(&st->lock);
	if (st->alpha_bps == 0)
		st->alpha_bps = c.max_label;
	bpf_spin_unlock(&st->lock);
}

/* fixed.rs FixedCore::estimate_alpha with the paper's estimator (SPEC Section 1, Fig. 2 of
 * the paper), under the lock. */
static __always_inline void estimate_alpha(struct csfq_core_state *st, const struct csfq_core_config *p,
					   __u64 now, __u32 bytes, __u64 label, __u32 queue_bytes, int dropped)
{
	__u64 a = rate_update(&st->arrival, now, bytes, p->k_alpha_ns);

	if (!dropped)
		rate_update(&st->accepted, now, bytes, p->k_alpha_ns);
	if (st->alpha_bps == 0) {
		if (queue_bytes < p->threshold_bytes) {
			if (label > st->max_label_bps)
				st->max_label_bps = label;
			return;
		}
		st->alpha_bps = st->max_label_bps > 0 ? st->max_label_bps : p->capacity_bps / 2;
		st->max_label_bps = 0;
		st->start_ns = now; /* a fresh window: the last may have ended long ago */
	}
	if (a >= p->capacity_bps) {
		if (!st->congested) {
			st->congested = 1;
			st->start_ns = now;
			st->overflow_left = p->overflow_budget;
		} else if (now > st->start_ns + p->k_c_ns) {
			/* alpha <- min(alpha C / F, C), in kbit/s; C when F is 0. */
			__u64 alpha_k = st->alpha_bps / 1000, c_k = p->capacity_bps / 1000;
			__u64 f_k = st->accepted.rate_bps / 1000;

			if (f_k == 0) {
				st->alpha_bps = p->capacity_bps;
			} else {
				__u64 v = alpha_k * c_k / f_k * 1000;

				st->alpha_bps = v < p->capacity_bps ? v : p->capacity_bps;
			}
			st->start_ns = now;
			st->overflow_left = p->overflow_budget;
		}
	} else if (st->congested) {
		st->congested = 0;
		st->start_ns = now;
		st->max_label_bps = 0;
	} else if (now < st->start_ns + p->k_c_ns) {
		if (label > st->max_label_bps)
			st->max_label_bps = label;
	} else {
		st->alpha_bps = st->max_label_bps;
		st->start_ns = now;
		st->overflow_left = p->overflow_budget;
		if (queue_bytes < p->threshold_bytes)
			st->alpha_bps = 0;
		else
			st->max_label_bps = 0;
	}
}

/* What the core decided for one packet. */
struct core_decision {
	__u64 out;     /* the label to write (RELABEL) */
	__u32 verdict; /* enum verdict */
	__u32 reason;  /* enum csfq_drop_reason (DROP) */
};

/*
 * The price of unlabeled traffic (fixed.rs FixedCore::on_arrival): Eq. (3) over all of
 * it, with K_alpha. Global functions are verified once, on their own, apart from the
 * program's paths: together with core_decide this keeps the program within the
 * verifier's limits.
 */
__noinline __u64 unlabeled_price(__u64 now, __u32 bytes, __u64 k)
{
	struct csfq_core_state *st;
	__u32 zero = 0;
	__u64 price;

	st = bpf_map_lookup_elem(&core_state, &zero);
	if (!st)
		return 0;
	bpf_spin_lock(&st->lock);
	price = rate_update(&st->unlabeled, now, bytes, k);
	bpf_spin_unlock(&st->lock);
	return price;
}

/* The virtual queue in front of the link at `now`, bytes: what is still to leave at C. */
static __always_inline __u32 vq_bytes(const struct csfq_core_state *st, const struct csfq_core_config *p, __u64 now)
{
	__u64 finish = READ_ONCE(st->vq_finish_ns);

	if (p->test_mode)
		return p->test_queue_bytes;
	return finish > now ? (finish - now) * p->capacity_bps / (8 * NSEC_PER_SEC) : 0;
}

/* fixed.rs FixedCsfqCore::enqueue: a full queue drops and decreases alpha (at most
 * overflow_budget times between two updates of alpha; the lock only when it may). */
static __always_inline void overflow(struct csfq_core_state *st)
{
	if (READ_ONCE(st->overflow_left) == 0)
		return;
	bpf_spin_lock(&st->lock);
	if (st->overflow_left > 0) {
		st->overflow_left -= 1;
		st->alpha_bps = st->alpha_bps * 99 / 100;
	}
	bpf_spin_unlock(&st->lock);
}

/* fixed.rs FixedCore::on_arrival and FixedCsfqCore::enqueue for one packet of `bytes`
 * labeled `label` (bit/s, never 0 here) with the 32-bit random `draw`, with the paper's
 * estimator: one state under the lock. */
__noinline int core_decide_paper(__u64 now, __u32 bytes, __u64 label, __u32 draw,
				 struct core_decision *d)
{
	__u32 zero = 0, queue_bytes, prob;
	struct csfq_core_config *p;
	struct csfq_core_state *st;
	enum verdict v = FORWARD;
	__u32 reason = 0;
	__u64 out = 0;

	if (!d)
		return 0;
	d->verdict = FORWARD;
	d->out = label;
	p = bpf_map_lookup_elem(&core_config, &zero);
	st = bpf_map_lookup_elem(&core_state, &zero);
	if (!p || !st || p->capacity_bps == 0)
		return 0;
	bpf_spin_lock(&st->lock);
	queue_bytes = vq_bytes(st, p, now);
	prob = drop_probability_q32(st->alpha_bps, label);
	if (prob > 0 && draw < prob) {
		v = DROP;
		reason = CSFQ_DROP_CSFQ_PROB;
	}
	estimate_alpha(st, p, now, bytes, label, queue_bytes, v == DROP);
	if (v == FORWARD) {
		out = label;
		if (prob > 0 && st->alpha_bps > 0 && st->alpha_bps < label) {
			out = st->alpha_bps;
			v = RELABEL;
		}
		if ((__u64)queue_bytes + bytes > p->limit_bytes) {
			if (st->overflow_left > 0) {
				st->overflow_left -= 1;
				st->alpha_bps = st->alpha_bps * 99 / 100;
			}
			v = DROP;
			reason = CSFQ_DROP_OVERFLOW;
		} else if (!p->test_mode) {
			__u64 start = st->vq_finish_ns > now ? st->vq_finish_ns : now;

			st->vq_finish_ns = start + (__u64)bytes * 8 * NSEC_PER_SEC / p->capacity_bps;
		}
	}
	bpf_spin_unlock(&st->lock);
	d->verdict = v;
	d->reason = reason;
	d->out = out;
	return 0;
}

/* The 32-bit random number a packet's drop is decided by: the test's, or the kernel's. */
static __always_inline __u32 core_draw(const struct csfq_core_config *p)
{
	return p->test_mode ? p->test_draw : bpf_get_prandom_u32();
}

/* The same with the histogram estimator, without a lock per packet: fixed.rs
 * FixedCore::on_arrival_on with this CPU as the lane. The random number is drawn only
 * for a packet that may be dropped (label above alpha). */
__noinline int core_decide_lanes(__u64 now, __u32 bytes, __u64 label, struct core_decision *d)
{
	__u32 zero = 0, queue_bytes, prob;
	struct csfq_core_config *p;
	struct csfq_core_state *st;
	struct csfq_core_slot *sl;
	enum verdict v = FORWARD;
	__u64 w, start, alpha, out = label;

	if (!d)
		return 0;
	d->verdict = FORWARD;
	d->out = label;
	p = bpf_map_lookup_elem(&core_config, &zero);
	st = bpf_map_lookup_elem(&core_state, &zero);
	if (!p || !st || p->capacity_bps == 0)
		return 0;
	w = READ_ONCE(st->window);
	start = READ_ONCE(st->start_ns);
	alpha = READ_ONCE(st->alpha_bps);
	sl = own_slot(w);
	if (!sl)
		return 0;
	queue_bytes = vq_bytes(st, p, now);
	prob = drop_probability_q32(alpha, label);
	if (prob > 0 && core_draw(p) < prob)
		v = DROP;
	slot_add(sl, label, bytes, v == DROP);
	if (alpha == 0 && queue_bytes >= p->threshold_bytes)
		restart(st, w);
	/* The CPU that claims the window's end ends it; the others go on. */
	if (now >= start + p->k_c_ns && claim_window(st, p, now, &w, &start))
		end_window(st, p, w, start, now, queue_bytes);
	if (v == DROP) {
		d->verdict = DROP;
		d->reason = CSFQ_DROP_CSFQ_PROB;
		return 0;
	}
	alpha = READ_ONCE(st->alpha_bps);
	if (prob > 0 && alpha > 0 && alpha < label) {
		out = alpha;
		v = RELABEL;
	}
	if ((__u64)queue_bytes + bytes > p->limit_bytes) {
		overflow(st);
		v = DROP;
		d->reason = CSFQ_DROP_OVERFLOW;
	} else if (!p->test_mode) {
		vq_add(&st->vq_finish_ns, p->capacity_bps, now, bytes);
	}
	d->verdict = v;
	d->out = out;
	return 0;
}

SEC("classifier")
int csfq_core(struct __sk_buff *skb)
{
	__u32 zero = 0, bytes = skb->len, why, carrier = 1, untrusted = 0, code, passed;
	struct core_decision d = {};
	struct csfq_core_config *p;
	__u64 now, label;
	struct parsed pk;

	p = bpf_map_lookup_elem(&core_config, &zero);
	if (!p || p->capacity_bps == 0)
		return TC_ACT_UNSPEC;
	__builtin_memset(&pk, 0, sizeof(pk));
	why = parse(skb, &pk, 0);
	/* What cannot carry a label is unlabeled traffic, judged with the rest of it and
	 * never relabeled: IPv4 that may not (no DF, or a fragment; RFC 6864), and what the
	 * core cannot parse (non-IP, VLAN-tagged or QinQ frames on a bridged bottleneck,
	 * truncated headers), which would otherwise pass free and unseen by A, F and the
	 * virtual queue. Counted by what it is when it passes. ARP, and what the operator
	 * drops (--unparsed drop), are settled first (csfq.h: unreadable). */
	if (why) {
		int act = unreadable(skb, why, bytes, p->drop_unparsed);

		if (act != CSFQ_JUDGE)
			return act;
		carrier = 0;
		__builtin_memset(&pk, 0, sizeof(pk));
	}
	/* A label from outside the island may be forged: judge the packet as unlabeled
	 * traffic, and leave it as an unlabeled packet would leave (relabeled, or with label
	 * 0), so that no core after this one believes the forged label either. */
	code = pk.label_code; /* pk keeps the label as it came: write_label's checksum */
	if (p->trust == CSFQ_TRUST_LISTED && !trusted_from(p->trusted, skb->ingress_ifindex)) {
		untrusted = 1;
		code = 0;
		count(CNT_UNTRUSTED, bytes);
	}
	now = p->test_mode ? p->test_now_ns : csfq_now(&core_clock, p->clock, p->tick_ns);
	/* Unlabeled traffic is judged as one flow, by the rate of all of it (unknown is never
	 * free), as an IPv4 label would carry it. */
	if (code)
		label = label_rate_of(pk.family, code);
	else
		label = label_rate_of(4, label_code_of(4, unlabeled_price(now, bytes, p->k_alpha_ns)));
	if (p->estimator == CSFQ_EST_HISTOGRAM)
		core_decide_lanes(now, bytes, label, &d);
	else /* the draw before the lock, which allows no helper calls */
		core_decide_paper(now, bytes, label, core_draw(p), &d);

	switch (d.verdict) {
	case DROP:
		count(drop_counter(d.reason), bytes);
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
