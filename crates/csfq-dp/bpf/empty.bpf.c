// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * A classifier that does nothing: `csfq dp bench` runs it beside the edge and the core.
 * What the kernel's run-time statistics give for it is the cost of the measure itself
 * (two clock reads around each run) and of calling a program at all, which every
 * program's figure includes; the difference is a program's own work.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

SEC("classifier")
int csfq_empty(struct __sk_buff *skb)
{
	return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
