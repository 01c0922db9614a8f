// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * CSFQ core (Stoica, Shenker, Zhang, SIGCOMM 1998, Sections 2.2-2.3; SPEC Section 1), as a
 * tc classifier on the egress of the bottleneck interface, in front of the tbf or htb that
 * sets the link's rate C.
 *
 * It keeps no per-flow state: only the aggregate arrival and accepted rates A and F
 * (Eq. 3), the fair share alpha and its window, shared by all CPUs under one spin lock.
 * A packet labeled r is dropped with probability max(0, 1 - alpha/r) (Eq. 2) and otherwise
 * forwarded relabeled min(r, alpha). The buffer-overflow amendment (alpha *= 0.99 at most
 * overflow_budget times per congestion epoch) is driven by a virtual queue drained at C:
 * the qdisc's real queue is not visible from here, and a virtual queue of the same rate
 * holds the same bytes while the link is busy.
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

enum verdict { FORWARD, RELABEL, DROP_PROBABILISTIC, DROP_OVERFLOW };

/* fixed.rs FixedCore::drop_probability_q32. */
static __always_inline __u32 drop_probability_q32(__u64 alpha, __u64 label)
{
	__u64 l = label, a = alpha, s = 0, q;

	if (alpha == 0 || label == 0 || label <= alpha)
		return 0;
	if (label >> 32) {
		s = log2_floor(label) + 1 - 32;
		l = label >> s;
		a = alpha >> s;
	}
	q = ((l - a) << 32) / l;
	return q > 0xffffffffULL ? 0xffffffffU : (__u32)q;
}

/* fixed.rs FixedCore::estimate_alpha (SPEC Section 1, Fig. 2 of the paper). */
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
		if (queue_bytes < p->threshold_bytes)
			st->alpha_bps = 0;
		else
			st->max_label_bps = 0;
	}
}

SEC("classifier")
int csfq_core(struct __sk_buff *skb)
{
	__u32 zero = 0, bytes = skb->len, draw, queue_bytes, prob, why;
	struct csfq_core_config *p;
	struct csfq_core_state *st;
	enum verdict v = FORWARD;
	__u64 now, label, out = 0;
	struct parsed pk;

	p = bpf_map_lookup_elem(&core_config, &zero);
	st = bpf_map_lookup_elem(&core_state, &zero);
	if (!p || !st || p->capacity_bps == 0)
		return TC_ACT_UNSPEC;
	__builtin_memset(&pk, 0, sizeof(pk));
	why = parse(skb, &pk, 0);
	if (why) {
		count(why, bytes);
		return TC_ACT_UNSPEC;
	}
	if (pk.label_code == 0) {
		count(CNT_PASS_UNLABELED, bytes);
		return TC_ACT_UNSPEC;
	}
	label = label_rate_of(pk.family, pk.label_code);
	if (p->test_mode) {
		now = p->test_now_ns;
		draw = p->test_draw;
	} else {
		now = bpf_ktime_get_ns();
		draw = bpf_get_prandom_u32();
	}

	bpf_spin_lock(&st->lock);
	/* The virtual queue: bytes still to leave at C, from when it empties. */
	if (p->test_mode)
		queue_bytes = p->test_queue_bytes;
	else if (st->vq_finish_ns > now)
		queue_bytes = (st->vq_finish_ns - now) * p->capacity_bps / (8 * NSEC_PER_SEC);
	else
		queue_bytes = 0;
	/* fixed.rs FixedCore::on_arrival. */
	prob = drop_probability_q32(st->alpha_bps, label);
	if (prob > 0 && draw < prob)
		v = DROP_PROBABILISTIC;
	estimate_alpha(st, p, now, bytes, label, queue_bytes, v == DROP_PROBABILISTIC);
	if (v == FORWARD) {
		out = label;
		if (prob > 0 && st->alpha_bps > 0 && st->alpha_bps < label) {
			out = st->alpha_bps;
			v = RELABEL;
		}
		/* fixed.rs FixedCsfqCore::enqueue: a full queue drops and decreases alpha. */
		if ((__u64)queue_bytes + bytes > p->limit_bytes) {
			if (st->overflow_left > 0) {
				st->overflow_left -= 1;
				st->alpha_bps = st->alpha_bps * 99 / 100;
			}
			v = DROP_OVERFLOW;
		} else if (!p->test_mode) {
			__u64 start = st->vq_finish_ns > now ? st->vq_finish_ns : now;

			st->vq_finish_ns = start + (__u64)bytes * 8 * NSEC_PER_SEC / p->capacity_bps;
		}
	}
	bpf_spin_unlock(&st->lock);

	switch (v) {
	case DROP_PROBABILISTIC:
		count(CNT_DROP_PROBABILISTIC, bytes);
		return TC_ACT_SHOT;
	case DROP_OVERFLOW:
		count(CNT_DROP_OVERFLOW, bytes);
		return TC_ACT_SHOT;
	case RELABEL:
		if (write_label(skb, &pk, label_code_of(pk.family, out)) < 0) {
			count(CNT_WRITE_FAILED, bytes);
			return TC_ACT_UNSPEC;
		}
		count(CNT_RELABELED, bytes);
		return TC_ACT_UNSPEC;
	default:
		count(CNT_FORWARDED, bytes);
		return TC_ACT_UNSPEC;
	}
}
