/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * csfq dataplane: the layouts user space reads and writes. crates/csfq-dp/src/abi.rs
 * mirrors every struct here with #[repr(C)]; keep the two in step.
 */
#ifndef CSFQ_SHARED_H
#define CSFQ_SHARED_H

#include <linux/types.h>
#include <linux/bpf.h>

/* Label unit: 1 kbit/s (fixed.rs, label_codec.rs). */
#define LABEL_UNIT_BPS 1000ULL

/* What happened to a packet; the index into the per-CPU `counters` map. A drop counter
 * counts one csfq_drop_reason (csfq_drop_reasons.h, generated from csfq_algo::DropReason)
 * and is named `drop_` and that reason's name (abi.rs Counter::drop_reason). */
enum csfq_counter {
	CNT_LABELED = 0,        /* edge: label written */
	CNT_FORWARDED,          /* core: forwarded with its label; MAY: forwarded */
	CNT_RELABELED,          /* core: forwarded with label min(label, alpha) */
	CNT_DROP_PROBABILISTIC, /* core: CSFQ_DROP_CSFQ_PROB, with probability 1 - alpha/label */
	CNT_DROP_OVERFLOW,      /* core: CSFQ_DROP_OVERFLOW, the virtual queue at rate C was full */
	CNT_PASS_UNLABELED,     /* core: forwarded with label 0 (no edge, or under 1 kbit/s),
	                         * judged as part of the unlabeled aggregate */
	CNT_PASS_NOT_IP,        /* non-IP frame, or a bad IP version field */
	CNT_PASS_NOT_ATOMIC,    /* IPv4 without DF, or a fragment: no room for a label (core:
	                         * judged as unlabeled, forwarded as it came) */
	CNT_PASS_TRUNCATED,     /* headers shorter than they claim */
	CNT_WRITE_FAILED,       /* the label could not be written */
	CNT_NEW_FLOW,           /* edge: a flow entered the table */
	CNT_DROP_POLICED,       /* edge: CSFQ_DROP_POLICED, IPv4 that cannot carry a label, over the rate the
	                         * operator set for it (or all of it: unlabelable = drop) */
	CNT_UNTRUSTED,          /* core: arrived on an interface not trusted to carry labels: its
	                         * label ignored (judged as unlabeled traffic) and overwritten;
	                         * also counted under what then happened to it */
	CNT_DROP_MAY_HISTORY,   /* MAY: CSFQ_DROP_MAY_HISTORY, with probability v * delta(flow) */
	CNT_DROP_MAY_SAMPLE,    /* MAY: CSFQ_DROP_MAY_SAMPLE, sampled into the table above u0 */
	CNT_MAY_INSERTED,       /* MAY: a flow entered the table (packets only) */
	CNT_MAY_EXPIRED,        /* MAY: an entry idle past T0 was removed (packets only) */
	CNT_EVICTED,            /* edge: a new flow took the entry of its set's least recently
	                         * seen flow (packets only); flows in the table are
	                         * CNT_NEW_FLOW - CNT_EVICTED. MAY: a flow sampled into the
	                         * table took the entry of the flow of its eight with the
	                         * oldest TS */
	CSFQ_COUNTERS,
};

struct csfq_count {
	__u64 packets;
	__u64 bytes;
};

/* Eq. (3) state (fixed.rs FixedRate). */
struct fixed_rate {
	__u64 rate_bps;
	__u64 last_ns;
	__u64 pending_bytes;
};

/* Entries in each set of the edge's flow table (edge.bpf.c) and of MAY's (may.bpf.c). */
#define CSFQ_FLOW_WAYS 4

/* A flow: the 5-tuple (ports 0 for protocols other than TCP and UDP). IPv4 addresses
 * in saddr[0] / daddr[0], network order. */
struct csfq_flow_key {
	__u8 family;
	__u8 proto;
	__u16 sport;
	__u16 dport;
	__u16 pad;
	__u32 saddr[4];
	__u32 daddr[4];
};

/* Weight classes: longest-prefix match on the source address, IPv4 as ::ffff:a.b.c.d. */
struct csfq_weight_key {
	__u32 prefixlen;
	__u8 addr[16];
};

struct csfq_edge_config {
	__u64 k_ns;                 /* averaging constant K, ns (at most 2^30) */
	__u32 default_weight_milli; /* weight of flows no class matches, thousandths */
	__u32 test_mode;            /* nonzero: take the clock from test_now_ns */
	__u64 test_now_ns;
	__u64 police_rate_bps;      /* CSFQ_UNLABELABLE_POLICE: the rate, bit/s */
	__u32 police_burst_bytes;   /* CSFQ_UNLABELABLE_POLICE: the bucket's depth (<= 2^30) */
	__u32 unlabelable;          /* what to do with IPv4 that cannot carry a label */
	__u32 flow_key;             /* what makes a flow: CSFQ_KEY_* */
	__u32 clock;                /* CSFQ_CLOCK_*: which clock Eq. (3) reads */
	__u64 tick_ns;              /* CSFQ_CLOCK_COARSE: the kernel's tick, ns */
};

/* A program's clock: bpf_ktime_get_ns, or the kernel's tick counter (jiffies: one load,
 * one tick's resolution; tests/coarse_clock.rs in csfq-algo gives the labels' error) put
 * on the same scale (struct csfq_clock). */
#define CSFQ_CLOCK_FINE 0
#define CSFQ_CLOCK_COARSE 1

/* CSFQ_CLOCK_COARSE: the fine clock minus jiffies x tick, taken by the first packet that
 * reads the coarse clock (0: not yet), so that the two clocks agree within a tick and a
 * program can change clocks keeping its state. */
struct csfq_clock {
	__u64 offset_ns;
};

/* What the edge counts as one flow. */
#define CSFQ_KEY_FIVE_TUPLE 0 /* protocol, addresses and ports (the paper's flows) */
#define CSFQ_KEY_HOST_PAIR 1  /* source and destination addresses */
#define CSFQ_KEY_SOURCE 2     /* the source address: one share per sending host */

/* The edge's choice for IPv4 without DF, and fragments (no room for a label). */
#define CSFQ_UNLABELABLE_PASS 0   /* pass: the cores judge it as one unlabeled flow */
#define CSFQ_UNLABELABLE_POLICE 1 /* police all of it to police_rate_bps (policer.rs) */
#define CSFQ_UNLABELABLE_DROP 2   /* drop it */

/* policer.rs TokenBucket: credit in nanobits. */
struct csfq_police {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 credit;
	__u64 last_ns;
};

/* Whose labels the core believes. A label is only as good as the edge that wrote it: one
 * that arrives from outside the island (a host wired to the core, bypassing the edges) may
 * be forged, and a low forged label is never dropped. */
#define CSFQ_TRUST_ANY 0    /* every interface's (the operator said so) */
#define CSFQ_TRUST_LISTED 1 /* only packets received on an interface in `trusted` */
#define CSFQ_MAX_TRUSTED 16

struct csfq_core_config {
	__u64 capacity_bps;     /* C, bit/s: the rate of the shaper behind this program */
	__u64 k_alpha_ns;       /* K_alpha, ns */
	__u64 k_c_ns;           /* K_c, ns */
	__u32 threshold_bytes;  /* queue below which alpha = 0 is kept */
	__u32 limit_bytes;      /* the virtual queue's size (overflow: alpha *= 0.99) */
	__u32 overflow_budget;  /* overflow decreases between two updates of alpha */
	__u32 test_mode;        /* nonzero: clock, draw and queue from the test_ fields */
	__u64 test_now_ns;
	__u32 test_draw;
	__u32 test_queue_bytes;
	__u32 estimator;        /* CSFQ_EST_PAPER or CSFQ_EST_HISTOGRAM */
	__u32 trust;            /* whose labels count: CSFQ_TRUST_* */
	__u32 trusted[CSFQ_MAX_TRUSTED]; /* CSFQ_TRUST_LISTED: ifindexes (0 ends the list) */
	__u32 clock;            /* CSFQ_CLOCK_*: which clock the core reads */
	__u32 pad;
	__u64 tick_ns;          /* CSFQ_CLOCK_COARSE: the kernel's tick, ns */
};

/* CPUs whose lanes a window's end merges at most (it stops at the first id past the
 * machine's). */
#define CSFQ_MAX_CPUS 4096

/* How the core estimates alpha (csfq.rs Estimator). */
#define CSFQ_EST_PAPER 0
#define CSFQ_EST_HISTOGRAM 1

/* label_histogram.rs: 8 bins per octave of labels from 1 kbit/s; bin 0 below. */
#define HIST_BINS 256
#define HIST_INV_SHIFT 24

struct csfq_hist_bin {
	__u64 bytes; /* bytes that arrived with a label in the bin */
	__u64 inv;   /* sum of bytes * 2^24 / label_kbps */
};

/*
 * The core's shared state. With the histogram estimator a packet takes no lock: it reads
 * alpha, the window's start and number (the first line), adds itself to its CPU's lane
 * (struct csfq_core_lane) and to the virtual queue (one atomic, 64 bytes or more from
 * anything else every packet touches, whatever the value's alignment). A window's end is
 * claimed under the lock, merged without it, and published under it: once per window. The
 * lock is also taken by a restart, an overflow decrease and every unlabeled packet (their
 * price), and, with the paper's estimator, by every packet (A and F).
 */
struct csfq_core_state {
	__u64 alpha_bps;
	__u64 start_ns;
	__u64 window;               /* histogram estimator: the current window's number */
	__u64 published;            /* windows before this one have had their alpha published */
	__u32 congested;
	__u32 overflow_left;        /* overflow decreases left until the next update */
	__u64 max_label_bps;        /* paper's estimator */
	__u64 pad0[8];
	struct bpf_spin_lock lock;
	__u32 pad1;
	struct fixed_rate arrival;  /* A (histogram estimator: the last window's average) */
	struct fixed_rate accepted; /* F (likewise) */
	struct fixed_rate unlabeled; /* unlabeled traffic as one flow: its price */
	__u64 pad2[8];
	__u64 vq_finish_ns;         /* when the virtual queue at rate C empties */
	__u64 pad3[7];
};

/* One CPU's part of one window (fixed.rs Lane). */
struct csfq_core_slot {
	__u64 window;         /* the window it holds (a slot of another is stale) */
	__u64 max_label_bps;
	__u64 arrived_bytes;
	__u64 accepted_bytes; /* not dropped by Eq. (2) */
	struct csfq_hist_bin hist[HIST_BINS];
};

/* One CPU's lane: two slots, by the window's parity, so that the CPU ending window w
 * reads slot w & 1 while the others fill the other for window w + 1. */
struct csfq_core_lane {
	struct csfq_core_slot slot[2];
};

/* MAY (may_fixed.rs FixedMayParams): Q16 and Q32 fixed point. */
struct csfq_may_config {
	__u64 capacity_bps; /* C, bit/s: the rate of the shaper behind this program */
	__u64 interval_ns;  /* Delta */
	__u64 timeout_ns;   /* T0 */
	__u64 u0_q16;       /* u0 */
	__u64 gain_q16;     /* kappa */
	__u64 q_w_q16;      /* q_w */
	__u64 keep_q32;     /* 1 - q_w, below 2^32 */
	__u64 sample_q32;   /* q0 = 1/S0, at most 2^32 */
	__u32 test_mode;    /* nonzero: clock and draw from the test_ fields */
	__u32 test_draw;
	__u64 test_now_ns;
	__u32 passed_only;  /* nonzero: the utilization counts the bytes MAY passes only */
	__u32 clock;        /* CSFQ_CLOCK_*: which clock MAY reads */
	__u64 tick_ns;      /* CSFQ_CLOCK_COARSE: the kernel's tick, ns */
};

/* may_fixed.rs FixedMayState. */
struct csfq_may_state {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 v_q32;          /* v */
	__u64 util_q16;       /* the utilization (arrival rate over C) of the last interval */
	__u64 last_update_ns; /* when the last interval ended */
	__u64 epoch;          /* intervals ended */
	__u64 counted_bytes;  /* the CPUs' arrival totals (may_arrivals) summed when the last
	                       * interval ended: the interval's arrivals are their sum less
	                       * this */
};

/* may_fixed.rs FixedMayEntry: one flow of the table H. */
struct csfq_may_entry {
	__u64 delta_q16; /* delta, as of the end of interval `epoch` */
	__u64 ts_ns;     /* TS: the last drop, or the insert */
	__u64 epoch;     /* the interval the entry is up to date in */
	__u32 nd;        /* ND: drops in that interval */
	__u32 pad;
};

/* ---- Edge-to-edge overlay loops (loop.bpf.c; src/loops.rs) ---- */

/* Loops one pair of edges can run. */
#define CSFQ_LOOP_MAX 16

/* What both halves are told. classid: the loop's htb class at the ingress (major:minor as
 * tc writes it, 0x00010010 for 1:10), set as the packet's priority, which htb honors. */
struct csfq_loop_config {
	__u32 control_port; /* network order: the UDP port control messages go to */
	__u32 loops;        /* how many loops are configured */
	__u32 classid[CSFQ_LOOP_MAX];
};

/* A loop's bytes: arrivals at the ingress's shaper, or receptions at the egress. Updated
 * with atomic adds (one array entry shared by every CPU). */
struct csfq_loop_count {
	__u64 packets;
	__u64 bytes;
};

/* The control message's UDP payload, big-endian, as src/loops/wire.rs encodes it (its
 * first CSFQ_LOOP_MSG_LEN bytes; the sender's tau follows). The egress
 * program writes rx_bytes and rx_ns (the loop's bytes received before the message, and
 * when it arrived); the sender leaves the UDP checksum 0 so that the write needs no
 * checksum fix (a message with a checksum is left unstamped). */
#define CSFQ_LOOP_MAGIC 0x4353464cU /* "CSFL" */
#define CSFQ_LOOP_KIND_CONTROL 1
#define CSFQ_LOOP_KIND_FEEDBACK 2
#define CSFQ_LOOP_MSG_LEN 48
#define CSFQ_LOOP_OFF_RX_BYTES 32
#define CSFQ_LOOP_OFF_RX_NS 40

/* What a loop's daemon publishes for `csfq dp stats`, once per tau (ingress) or per
 * interval (egress). Written by user space only. */
struct csfq_loop_state {
	__u64 lambda_bps;         /* ingress: the shaper's rate */
	__u64 mu_bps;             /* the last mu(k) */
	__u64 accumulation_bytes; /* the last a(k) */
	__u64 epochs;             /* ingress: congestion epochs entered; egress: resyncs */
	__u64 feedbacks;          /* ingress: feedback applied; egress: sent */
	__u64 controls;           /* ingress: sent; egress: received */
	__u64 lost_bytes;         /* egress: lost inside the network, from the controls */
	__u64 updated_ns;         /* CLOCK_MONOTONIC of the last update */
	__u32 in_epoch;
	__u32 pid;                /* the daemon */
};

#endif
