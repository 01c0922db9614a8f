// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * TUF core (Clerget and Dabbous, INRIA RR-3846; SPEC Section 2), as a tc classifier on the
 * egress of the bottleneck interface, in front of the tbf or htb that sets the link's rate
 * C. The edges are CSFQ's edge writing TUF tags (`csfq dp edge attach --tuf`).
 *
 * TUF's queue pushes out the highest-tagged queued packet when full; a classifier cannot
 * reach into the shaper's queue. So this is the bufferless filter the report validates its
 * queue against (its Fig. 4): an arrival whose tag is above a threshold is dropped, the
 * threshold set at the end of each window to the highest tag whose bytes at or below it,
 * in that window, fit the link (less what the virtual queue holds beyond half its limit).
 * tuf_fixed.rs is the model, operation for operation; testdata/tuf-fixed-vectors.csv keeps
 * the two equal.
 *
 * A tagged packet takes no lock: it adds its bytes to its window's histogram and to the
 * virtual queue with atomics. The window's end is claimed under the lock, its histogram
 * solved and emptied without it (bpf_loop), and the threshold published under it; the
 * windows alternate between two histograms, so that packets of the next window count
 * while the last is solved (a packet in flight on another CPU at the claim may still count
 * in the window just ended). Untagged traffic (no tag, an interface not trusted, what
 * cannot carry one) is tagged here as one unresponsive flow at the Eq. (3) rate of all of
 * it, under the lock, as the CSFQ core prices unlabeled traffic.
 */
#include "csfq.h"
#include "tuf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_tuf_config);
} tuf_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_tuf_state);
} tuf_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_clock);
} tuf_clock SEC(".maps");

/* The virtual queue at `now`, bytes (tuf_fixed.rs queue_bytes). */
static __always_inline __u32 vq_bytes(const struct csfq_tuf_state *st, const struct csfq_tuf_config *p,
				      __u64 now)
{
	__u64 finish = READ_ONCE(st->vq_finish_ns), b;

	if (finish <= now)
		return 0;
	b = (finish - now) * p->capacity_bps / (8 * NSEC_PER_SEC);
	return b > 0xffffffffULL ? 0xffffffffU : (__u32)b;
}

/* The untagged traffic's tag: Eq. (3) over all of it, and its counter (tuf_fixed.rs). */
__noinline __u32 untagged_tag(__u64 now, __u32 bytes, __u64 k)
{
	struct csfq_tuf_state *st;
	__u32 zero = 0, n;
	__u64 r;

	st = bpf_map_lookup_elem(&tuf_state, &zero);
	if (!st)
		return 0;
	bpf_spin_lock(&st->lock);
	r = rate_update(&st->untagged, now, bytes, k);
	n = st->untagged_n + 1;
	st->untagged_n = n;
	bpf_spin_unlock(&st->lock);
	return tuf_tag_for(r, n, 1000);
}

struct solve_ctx {
	__u64 *bins;
	__u64 sum, target;
	__u32 threshold, found;
};

/* tuf_fixed.rs solve, one bin per bpf_loop iteration; each bin emptied once read. */
static long solve_bin(__u32 i, void *data)
{
	struct solve_ctx *c = data;
	__u32 k = i & (TUF_TAGS - 1);

	c->sum += c->bins[k];
	c->bins[k] = 0;
	if (!c->found && c->sum > c->target) {
		c->threshold = k > 0 ? k - 1 : 0;
		c->found = 1;
	}
	return 0;
}

/* Ends window `w` (claimed, begun at `start`) at `now`: its histogram solved and emptied,
 * the threshold published unless a later window's was. */
static __always_inline void end_window(struct csfq_tuf_state *st, const struct csfq_tuf_config *p, __u64 w,
				       __u64 start, __u64 now)
{
	struct solve_ctx c = { .bins = st->hist[w & 1], .threshold = TUF_TAGS - 1 };
	__u64 wlen = now - start, queue = vq_bytes(st, p, now), half = p->limit_bytes / 2, fill;

	fill = (p->capacity_bps / 1000) * (wlen < (1ULL << 31) ? wlen : (1ULL << 31)) / 8000000;
	c.target = fill > (queue > half ? queue - half : 0) ? fill - (queue > half ? queue - half : 0) : 0;
	bpf_loop(TUF_TAGS, solve_bin, &c, 0);
	if (wlen > 2 * p->window_ns)
		c.threshold = TUF_TAGS - 1; /* an idle gap: nothing to go by */
	bpf_spin_lock(&st->lock);
	if (w >= st->published) {
		st->published = w + 1;
		st->cut = TUF_TAGS - 1 - c.threshold;
	}
	bpf_spin_unlock(&st->lock);
}

/* Claims the end of the window if it is due at `now` (under the lock, so that one CPU ends
 * each); the first packet ever starts the first window. Returns 1 with the window ended
 * and its start in `w`, `start`. */
static __always_inline int claim_window(struct csfq_tuf_state *st, const struct csfq_tuf_config *p,
					__u64 now, __u64 *w, __u64 *start)
{
	int claimed = 0;

	bpf_spin_lock(&st->lock);
	if (st->window_start_ns == 0) {
		st->window_start_ns = now > 1 ? now : 1;
	} else if (now >= st->window_start_ns + p->window_ns) {
		*w = st->window;
		*start = st->window_start_ns;
		st->window = *w + 1;
		st->window_start_ns = now;
		claimed = 1;
	}
	bpf_spin_unlock(&st->lock);
	return claimed;
}

SEC("classifier")
int csfq_tuf(struct __sk_buff *skb)
{
	__u32 zero = 0, bytes = skb->len, why, carrier = 1, untrusted = 0, tag, passed;
	struct csfq_tuf_config *p;
	struct csfq_tuf_state *st;
	__u64 now, w = 0, start = 0, start_now;
	struct parsed pk;
	int carried = -1;

	p = bpf_map_lookup_elem(&tuf_config, &zero);
	st = bpf_map_lookup_elem(&tuf_state, &zero);
	if (!p || !st || p->capacity_bps == 0)
		return TC_ACT_UNSPEC;
	__builtin_memset(&pk, 0, sizeof(pk));
	why = parse(skb, &pk, 0);
	/* As the CSFQ core: what cannot carry a tag is untagged traffic; ARP is spared. */
	if (why) {
		int act = unreadable(skb, why, bytes, p->drop_unparsed);

		if (act != CSFQ_JUDGE)
			return act;
		carrier = 0;
	}
	if (carrier)
		carried = tuf_tag_of_code(pk.family == 6 && (pk.label_code >> 16) ? 0 : pk.label_code);
	if (p->trust == CSFQ_TRUST_LISTED && !trusted_from(p->trusted, skb->ingress_ifindex)) {
		untrusted = 1;
		carried = -1;
		count(CNT_UNTRUSTED, bytes);
	}
	now = p->test_mode ? p->test_now_ns : csfq_now(&tuf_clock, p->clock, p->tick_ns);
	tag = carried >= 0 ? (__u32)carried : untagged_tag(now, bytes, p->k_ns);
	tag &= TUF_TAGS - 1;
	start_now = READ_ONCE(st->window_start_ns);
	if ((start_now == 0 || now >= start_now + p->window_ns) && claim_window(st, p, now, &w, &start))
		end_window(st, p, w, start, now);
	__sync_fetch_and_add(&st->hist[READ_ONCE(st->window) & 1][tag], (__u64)bytes);
	if (tag > TUF_TAGS - 1 - READ_ONCE(st->cut)) {
		count(CNT_DROP_TUF_HIGHEST_TAG, bytes);
		return TC_ACT_SHOT;
	}
	if ((__u64)vq_bytes(st, p, now) + bytes > p->limit_bytes) {
		count(CNT_DROP_OVERFLOW, bytes);
		return TC_ACT_SHOT;
	}
	vq_add(&st->vq_finish_ns, p->capacity_bps, now, bytes);
	/* A tag from outside the island leaves as an untagged packet would: with no tag. */
	if (untrusted && carrier && tuf_tag_of_code(pk.label_code) >= 0 && write_label(skb, &pk, 0) < 0) {
		count(CNT_WRITE_FAILED, bytes);
		return TC_ACT_UNSPEC;
	}
	passed = !carrier ? why : carried >= 0 ? CNT_FORWARDED : CNT_PASS_UNLABELED;
	count(passed, bytes);
	return TC_ACT_UNSPEC;
}
