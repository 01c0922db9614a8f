#!/usr/bin/env bash
# Dataplane soak: TCP and UDP through a csfq edge and core in network namespaces for a
# while (default 600 s), sampling `csfq dp stats --json` every 10 s. Passes when every
# counter only grows, the edge's flow table stays within its size, the core's alpha and
# virtual queue stay within the link's rate and limit, and the kernel logs no new
# warning. Needs root, iproute2, iperf3, ethtool and a built csfq (CSFQ=path, default
# target/release/csfq). Usage: scripts/soak.sh [SECONDS]
set -euo pipefail
secs=${1:-600}
csfq=${CSFQ:-$(dirname "$0")/../target/release/csfq}
csfq=$(realpath "$csfq")
p=soak$$
ns() { echo "$p$1"; }
x() { local n=$1; shift; ip netns exec "$(ns "$n")" "$@"; }
samples=$(mktemp -d)
cleanup() {
    pkill -f "iperf3.*$p" 2>/dev/null || true
    for n in s e c r; do
        "$csfq" dp --netns "$(ns "$n")" detach --dev e0 >/dev/null 2>&1 || true
        "$csfq" dp --netns "$(ns "$n")" detach --dev c1 >/dev/null 2>&1 || true
        ip netns del "$(ns "$n")" 2>/dev/null || true
    done
    rm -rf "$samples"
}
trap cleanup EXIT

for n in s e c r; do ip netns add "$(ns "$n")"; done
ip link add s0 netns "$(ns s)" type veth peer name e0 netns "$(ns e)"
ip link add e1 netns "$(ns e)" type veth peer name c0 netns "$(ns c)"
ip link add c1 netns "$(ns c)" type veth peer name r0 netns "$(ns r)"
for a in "s s0 10.78.1.1/24" "e e0 10.78.1.2/24" "e e1 10.78.2.1/24" "c c0 10.78.2.2/24" \
         "c c1 10.78.3.1/24" "r r0 10.78.3.2/24"; do
    set -- $a
    x "$1" ip addr add "$3" dev "$2"; x "$1" ip link set "$2" up
    x "$1" ethtool -K "$2" tso off gso off gro off >/dev/null
done
for n in s e c r; do x "$n" ip link set lo up; done
x e sysctl -qw net.ipv4.ip_forward=1; x c sysctl -qw net.ipv4.ip_forward=1
x s ip route add default via 10.78.1.2; x r ip route add default via 10.78.3.1
x e ip route add 10.78.3.0/24 via 10.78.2.2; x c ip route add 10.78.1.0/24 via 10.78.2.1
x c tc qdisc add dev c1 root tbf rate 10mbit burst 10kb limit 64kb
"$csfq" dp --netns "$(ns e)" edge attach --dev e0 --flows 64 >/dev/null
"$csfq" dp --netns "$(ns c)" core attach --dev c1 --rate 10mbit --limit 64kb --trusted-from c0 >/dev/null

dmesg_before=$(dmesg 2>/dev/null | grep -ciE "warn|bug|oops" || true)
for port in 5201 5202 5203 5204 5205; do x r iperf3 -s -p $port -D --logfile /dev/null; done
sleep 1
# Four long TCP flows, one UDP at 8 Mbit/s, and short TCP transfers churning the flow table.
x s timeout $((secs + 5)) iperf3 -c 10.78.3.2 -p 5201 -P 4 -t "$secs" >/dev/null 2>&1 &
x s timeout $((secs + 5)) iperf3 -c 10.78.3.2 -p 5202 -u -b 8M -t "$secs" >/dev/null 2>&1 &
(
    end=$((SECONDS + secs))
    while [ $SECONDS -lt $end ]; do
        x s timeout 5 iperf3 -c 10.78.3.2 -p 5203 -n 100K >/dev/null 2>&1 || true
    done
) &
for i in $(seq 1 $((secs / 10))); do
    sleep 10
    "$csfq" dp stats --json > "$samples/$(printf %05d "$i").json"
done
wait
dmesg_after=$(dmesg 2>/dev/null | grep -ciE "warn|bug|oops" || true)

python3 - "$samples" "$p" "$dmesg_before" "$dmesg_after" <<'PY'
import json, os, sys
d, prefix, before, after = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
files = sorted(os.listdir(d))
prev, problems, flows_peak, alpha_peak, queue_peak = {}, [], 0, 0, 0
for f in files:
    for s in json.load(open(os.path.join(d, f))):
        if not s["scope"].startswith("netns-" + prefix):
            continue
        key = (s["scope"], s["role"])
        for name, c in s["counters"].items():
            for unit in ("packets", "bytes"):
                old = prev.get((key, name, unit), 0)
                if c[unit] < old:
                    problems.append(f"{f}: {key} {name} {unit} fell {old} -> {c[unit]}")
                prev[(key, name, unit)] = c[unit]
        if s["role"] == "edge":
            flows_peak = max(flows_peak, s["edge"]["flows"])
        else:
            core = s["core"]
            alpha_peak = max(alpha_peak, core["alpha_bps"])
            queue_peak = max(queue_peak, core["queue_bytes"])
if flows_peak > 64:
    # The flows are counted as new_flows less evicted: above the table's 64 entries only
    # if the counters lost track (two CPUs entering flows at once).
    problems.append(f"edge counted {flows_peak} flows in its table of 64 entries")
if alpha_peak > 10_000_000:
    problems.append(f"alpha reached {alpha_peak} bit/s, above C")
if queue_peak > 65_536:
    problems.append(f"virtual queue reached {queue_peak} bytes, above the limit")
if after > before:
    problems.append(f"kernel log: {after - before} new warning lines")
tot = {k[1:]: v for k, v in prev.items()}
print(f"{len(files)} samples; edge table peak {flows_peak}/64 flows; alpha peak "
      f"{alpha_peak / 1e6:.3f} Mbit/s; virtual queue peak {queue_peak} B")
for (role_name, unit), v in sorted(((k[0][1], k[1]), v) for k, v in prev.items() if k[2] == "packets"):
    if v:
        print(f"  {role_name:>4} {unit:<20} {v} packets")
if problems:
    print("FAIL:\n  " + "\n  ".join(problems))
    sys.exit(1)
print("PASS: counters monotonic, table and state bounded, no kernel warnings")
PY
