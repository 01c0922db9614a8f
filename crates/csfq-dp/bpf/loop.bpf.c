// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * Edge-to-edge overlay loops (Harrison, Kalyanaraman and Ramakrishnan, "Overlay Bandwidth
 * Services"; SPEC Section 5) on Linux: the packet halves. The controllers run in user
 * space (`csfq dp loop ingress` and `csfq dp loop egress`, crates/csfq-dp/src/loops.rs,
 * on csfq_algo::overlay); the interior routers run nothing.
 *
 * csfq_loop_in, on the egress of the ingress edge's interface towards the interior, in
 * front of the htb that shapes each loop at its rate lambda: a packet whose destination is
 * in a loop's prefix is put in that loop's htb class (skb->priority, which htb honors
 * before any filter) and counted as the loop's arrival. Control messages are left
 * unclassified: htb sends them on its direct path, ahead of the loops' queues, so each
 * enters the network right behind the bytes its loop's shaper has released.
 *
 * csfq_loop_out, on the ingress of the egress edge's interface from the interior: counts
 * each loop's bytes received, and writes into each control message the loop's count and
 * the time the message arrived. The path is FIFO, so that count is exactly the bytes the
 * loop delivered before the message: the egress daemon's a(k) (Eq. 3) needs no guess of
 * when the message was read from its socket.
 *
 * A loop is a destination prefix (longest match wins), IPv4 as ::ffff:a.b.c.d.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "csfq_shared.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csfq_loop_config);
} loop_config SEC(".maps");

/* Destination prefix -> loop index. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, CSFQ_LOOP_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct csfq_weight_key);
	__type(value, __u32);
} loop_prefixes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CSFQ_LOOP_MAX);
	__type(key, __u32);
	__type(value, struct csfq_loop_count);
} loop_counts SEC(".maps");

/* Written by the daemon, read by `csfq dp stats`; the programs never touch it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CSFQ_LOOP_MAX);
	__type(key, __u32);
	__type(value, struct csfq_loop_state);
} loop_state SEC(".maps");

/* Bytes of headers read: Ethernet, IPv4 with options (IPv6 is 40), UDP, and the control
 * message's fixed part. */
#define HDR_MAX (ETH_HLEN + 60 + 8 + CSFQ_LOOP_MSG_LEN)

struct pkt {
	struct csfq_weight_key dst;
	__u32 l4_off;
	__u8 proto;
};

/* Returns 0 with `p` filled for IPv4 and IPv6 (no extension headers looked through). */
static __always_inline int parse(struct __sk_buff *skb, struct pkt *p)
{
	__u32 need = skb->len < HDR_MAX ? skb->len : HDR_MAX;
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth;

	if (data + need > end) {
		bpf_skb_pull_data(skb, need);
		data = (void *)(long)skb->data;
		end = (void *)(long)skb->data_end;
	}
	eth = data;
	if ((void *)(eth + 1) > end)
		return -1;
	p->dst.prefixlen = 128;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end || ip->version != 4 || ip->ihl < 5)
			return -1;
		p->dst.addr[10] = 0xff;
		p->dst.addr[11] = 0xff;
		__builtin_memcpy(&p->dst.addr[12], &ip->daddr, 4);
		p->proto = ip->protocol;
		/* A later fragment has no UDP header. */
		p->l4_off = (ip->frag_off & bpf_htons(0x1fff)) ? 0 : ETH_HLEN + ip->ihl * 4;
		return 0;
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end || ip6->version != 6)
			return -1;
		__builtin_memcpy(p->dst.addr, &ip6->daddr, 16);
		p->proto = ip6->nexthdr;
		p->l4_off = ETH_HLEN + sizeof(*ip6);
		return 0;
	}
	return -1;
}

/* The offset of a control message's payload in the packet, or 0 if it is not one (only
 * `kind` control messages, or any kind when kind is 0). */
static __always_inline __u32 control_at(struct __sk_buff *skb, const struct pkt *p,
					const struct csfq_loop_config *cfg, __u32 kind,
					__u32 *loop)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct udphdr *udp;
	__u8 *msg;
	__u32 off = p->l4_off;

	if (p->proto != IPPROTO_UDP || off == 0 || off > ETH_HLEN + 60)
		return 0;
	udp = data + off;
	if ((void *)(udp + 1) > end || udp->dest != cfg->control_port)
		return 0;
	msg = (void *)(udp + 1);
	if ((void *)(msg + CSFQ_LOOP_MSG_LEN) > end)
		return 0;
	if (msg[0] != 0x43 || msg[1] != 0x53 || msg[2] != 0x46 || msg[3] != 0x4c)
		return 0;
	if (kind && msg[4] != kind)
		return 0;
	*loop = ((__u32)msg[6] << 8) | msg[7];
	if (udp->check != 0)
		return 0; /* a checksum: stamping would break it */
	return off + sizeof(*udp);
}

static __always_inline __u32 *loop_of(struct pkt *p)
{
	return bpf_map_lookup_elem(&loop_prefixes, &p->dst);
}

static __always_inline void add(__u32 loop, __u32 bytes)
{
	struct csfq_loop_count *c = bpf_map_lookup_elem(&loop_counts, &loop);

	if (c) {
		__sync_fetch_and_add(&c->packets, 1);
		__sync_fetch_and_add(&c->bytes, bytes);
	}
}

SEC("classifier")
int csfq_loop_in(struct __sk_buff *skb)
{
	__u32 zero = 0, loop = 0, *l;
	struct csfq_loop_config *cfg = bpf_map_lookup_elem(&loop_config, &zero);
	struct pkt p = {};

	if (!cfg || parse(skb, &p))
		return TC_ACT_UNSPEC;
	if (control_at(skb, &p, cfg, 0, &loop))
		return TC_ACT_UNSPEC; /* htb's direct path: behind what the shapers released */
	l = loop_of(&p);
	if (!l || *l >= CSFQ_LOOP_MAX || *l >= cfg->loops)
		return TC_ACT_UNSPEC;
	skb->priority = cfg->classid[*l & (CSFQ_LOOP_MAX - 1)];
	add(*l, skb->len);
	return TC_ACT_UNSPEC;
}

SEC("classifier")
int csfq_loop_out(struct __sk_buff *skb)
{
	__u32 zero = 0, loop = 0, off, *l;
	struct csfq_loop_config *cfg = bpf_map_lookup_elem(&loop_config, &zero);
	struct csfq_loop_count *c;
	struct pkt p = {};
	__u64 v;

	if (!cfg || parse(skb, &p))
		return TC_ACT_UNSPEC;
	off = control_at(skb, &p, cfg, CSFQ_LOOP_KIND_CONTROL, &loop);
	if (off) {
		if (loop >= CSFQ_LOOP_MAX || loop >= cfg->loops)
			return TC_ACT_UNSPEC;
		c = bpf_map_lookup_elem(&loop_counts, &loop);
		if (!c)
			return TC_ACT_UNSPEC;
		v = bpf_cpu_to_be64(c->bytes);
		bpf_skb_store_bytes(skb, off + CSFQ_LOOP_OFF_RX_BYTES, &v, 8, 0);
		v = bpf_cpu_to_be64(bpf_ktime_get_ns());
		bpf_skb_store_bytes(skb, off + CSFQ_LOOP_OFF_RX_NS, &v, 8, 0);
		return TC_ACT_UNSPEC;
	}
	l = loop_of(&p);
	if (l && *l < CSFQ_LOOP_MAX && *l < cfg->loops)
		add(*l, skb->len);
	return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
