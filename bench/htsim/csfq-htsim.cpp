// -*- c-basic-offset: 4; indent-tabs-mode: nil -*-
// The scenarios of `bench/htsim/compare.py`, written for htsim (Broadcom/csg-htsim), as
// the TOML files beside this one describe them to csfq.
//
//   csfq-htsim --link-mbps R --delay-ms D --buffer-bytes B --tcp N [--cbr-mbps U]
//              [--access-mbps A] [--rtx-scan-ms S] --duration-s T --out flows.csv
//
// Topology, as in the csfq simulator: each flow has its own sender and receiver host,
// joined to routers r1 and r2 by private access links (rate A, delay D, a 1 MiB
// drop-tail queue each way: csfq's ACCESS_BUFFER_BYTES); r1 -> r2 is the bottleneck
// (rate R, delay D, a drop-tail queue of B bytes) and r2 -> r1 carries the ACKs back
// through a queue of the same size. Without --access-mbps the paths are folded: each
// flow's packets enter the bottleneck's queue at r1 and leave at r2, with no access
// links (csfq: flows with no `access` table).
//
// Packets are 1000 bytes on the wire, ACKs 40 (htsim's ACKSIZE, csfq's `ack_bytes`).
// TCP is htsim's TcpSrc/TcpSink (NewReno, no SACK, an ACK for every segment), set as
// csfq's `[tcp]` can be set alike: initial window 1 segment, largest window 64 segments,
// RTO = SRTT + 4 RTTVAR with htsim's fixed floor of 250 ms and first RTO of 3 s (the
// TOML files set csfq's `min_rto_ms`, `initial_rto_ms` and `clock_granularity_ms = 0`
// to these). htsim checks the timers every S ms, 10 by default (TcpRtxTimerScanner, as its
// own examples), csfq at each timer's instant. Every flow starts at time 0. The CBR source
// sends 1000-byte packets at exactly its rate (csfq: `jitter = 0`); it is flow 0, the
// TCPs follow.
//
// Writes one row per flow (flow, kind, throughput_mbps: bytes delivered to the receiver
// over the run, retransmissions included, as csfq's `throughput_mbps`), then prints the
// event count and the event loop's wall time (`events N`, `run_s S`).

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cbr.h"
#include "config.h"
#include "eventlist.h"
#include "network.h"
#include "pipe.h"
#include "queue.h"
#include "route.h"
#include "tcp.h"

namespace {

struct Args {
    double link_mbps = 0;
    double delay_ms = 1;
    long long buffer_bytes = 0;
    int tcp = 0;
    double cbr_mbps = 0;
    double access_mbps = 0;
    double duration_s = 0;
    double rtx_scan_ms = 10;
    std::string out;
};

[[noreturn]] void usage(const std::string& why) {
    std::cerr << "csfq-htsim: " << why
              << "\nusage: csfq-htsim --link-mbps R --delay-ms D --buffer-bytes B --tcp N"
                 " [--cbr-mbps U] [--access-mbps A] [--rtx-scan-ms S] --duration-s T"
                 " --out flows.csv\n";
    std::exit(2);
}

double number(const char* flag, const char* text) {
    char* end = nullptr;
    double v = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(v >= 0)) {
        usage(std::string(flag) + ": expected a number >= 0, got '" + text + "'");
    }
    return v;
}

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc) usage(std::string(argv[i]) + " needs a value");
        const char* f = argv[i];
        const char* v = argv[i + 1];
        if (!std::strcmp(f, "--link-mbps")) a.link_mbps = number(f, v);
        else if (!std::strcmp(f, "--delay-ms")) a.delay_ms = number(f, v);
        else if (!std::strcmp(f, "--buffer-bytes")) a.buffer_bytes = (long long)number(f, v);
        else if (!std::strcmp(f, "--tcp")) a.tcp = (int)number(f, v);
        else if (!std::strcmp(f, "--cbr-mbps")) a.cbr_mbps = number(f, v);
        else if (!std::strcmp(f, "--access-mbps")) a.access_mbps = number(f, v);
        else if (!std::strcmp(f, "--duration-s")) a.duration_s = number(f, v);
        else if (!std::strcmp(f, "--rtx-scan-ms")) a.rtx_scan_ms = number(f, v);
        else if (!std::strcmp(f, "--out")) a.out = v;
        else usage(std::string("unknown flag ") + f);
    }
    if (a.rtx_scan_ms <= 0) usage("--rtx-scan-ms must be above 0");
    if (a.link_mbps <= 0 || a.buffer_bytes <= 0 || a.duration_s <= 0 || a.out.empty()) {
        usage("--link-mbps, --buffer-bytes, --duration-s and --out are required");
    }
    if (a.tcp == 0 && a.cbr_mbps == 0) usage("no flows: give --tcp N or --cbr-mbps U");
    return a;
}

const mem_b kAccessBuffer = 1 << 20; // csfq's ACCESS_BUFFER_BYTES
const int kPacket = 1000;
const int kMaxWindowSegments = 64;

// One direction of a private access link: its queue and its wire.
void access_hop(route_t* r, const Args& a, EventList& ev) {
    r->push_back(new Queue(speedFromMbps(a.access_mbps), kAccessBuffer, ev, nullptr));
    r->push_back(new Pipe(timeFromMs(a.delay_ms), ev));
}

} // namespace

int main(int argc, char** argv) {
    const Args a = parse(argc, argv);
    srand(1);
    Packet::set_packet_size(kPacket);

    EventList ev;
    ev.setEndtime(timeFromSec(a.duration_s));

    Queue bottleneck(speedFromMbps(a.link_mbps), a.buffer_bytes, ev, nullptr);
    Pipe bottleneck_wire(timeFromMs(a.delay_ms), ev);
    Queue reverse(speedFromMbps(a.link_mbps), a.buffer_bytes, ev, nullptr);
    Pipe reverse_wire(timeFromMs(a.delay_ms), ev);
    const bool folded = a.access_mbps == 0;

    // A path through the bottleneck in one direction, with the access links around it.
    auto path = [&](Queue& q, Pipe& wire) {
        route_t* r = new route_t();
        if (!folded) access_hop(r, a, ev);
        r->push_back(&q);
        r->push_back(&wire);
        if (!folded) access_hop(r, a, ev);
        return r;
    };

    CbrSink* cbr_sink = nullptr;
    if (a.cbr_mbps > 0) {
        linkspeed_bps rate = speedFromMbps(a.cbr_mbps);
        CbrSrc* src = new CbrSrc(ev, rate);
        src->_mss = kPacket;
        src->_period = (simtime_picosec)(1e12 * 8.0 * kPacket / (double)rate);
        cbr_sink = new CbrSink();
        route_t* out = path(bottleneck, bottleneck_wire);
        out->push_back(cbr_sink);
        src->connect(*out, *cbr_sink, 0);
    }

    TcpRtxTimerScanner scanner(timeFromMs(a.rtx_scan_ms), ev);
    std::vector<TcpSink*> sinks;
    for (int i = 0; i < a.tcp; ++i) {
        TcpSrc* src = new TcpSrc(nullptr, nullptr, ev);
        src->set_cwnd(kPacket);
        src->_maxcwnd = kMaxWindowSegments * kPacket;
        TcpSink* sink = new TcpSink();
        scanner.registerTcp(*src);
        route_t* out = path(bottleneck, bottleneck_wire);
        out->push_back(sink);
        route_t* back = path(reverse, reverse_wire);
        back->push_back(src);
        src->connect(*out, *back, *sink, 0);
        sinks.push_back(sink);
    }

    auto t0 = std::chrono::steady_clock::now();
    unsigned long long events = 0;
    while (ev.doNextEvent()) ++events;
    double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    std::ofstream f(a.out);
    f << "flow,kind,throughput_mbps\n";
    int flow = 0;
    auto mbps = [&](double bytes) { return bytes * 8.0 / a.duration_s / 1e6; };
    if (cbr_sink) f << flow++ << ",udp," << mbps((double)cbr_sink->cumulative_ack()) << "\n";
    for (TcpSink* s : sinks) f << flow++ << ",tcp," << mbps((double)s->_packets) << "\n";
    f.close();
    if (!f) {
        std::cerr << "csfq-htsim: could not write " << a.out << "\n";
        return 1;
    }
    std::cout << "events " << events << "\nrun_s " << run_s << "\n";
    return 0;
}
