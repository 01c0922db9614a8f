#!/usr/bin/env python3
"""csfq and htsim side by side: the same drop-tail scenarios, on this machine, in one run.

htsim is the packet simulator of the NDP and UEC work (Broadcom/csg-htsim, C++). Its
source is fetched at a pinned commit (HTSIM_COMMIT) and built here, not vendored; the
scenario program `csfq-htsim.cpp` is compiled against it. The cases, each a TOML file in
`scenarios/` for csfq and the same flags for csfq-htsim:

  fig3b       1 CBR at 10 Mbit/s + 31 TCP on 10 Mbit/s, 64 KB buffer, 10 s
  tcp1000     1000 TCP on 1 Gbit/s, 1 MiB buffer, 10 Gbit/s access links, 10 s
  tcp10k      10 000 TCP on 10 Gbit/s, 1 MiB buffer, 100 Gbit/s access links, 1 s
  folded1000  tcp1000 with no access links: each path folded into the bottleneck

Runs alternate (csfq, htsim, csfq, htsim, ...) for --repeat rounds, one process at a
time, each under `taskset -c CPU` when --cpu is given. Two times per run: "loop", the event
loop alone as each simulator reports it (csfq's "simulated in", csfq-htsim's `run_s`),
and "process", the whole command (csfq also writes its CSV, JSON and plots; a second csfq
row, "no figure", draws none, as htsim draws none). Medians with
their range; ratios of medians. Beside the times, what each run simulated: events, total
throughput, Jain's index of the flows and the CBR's throughput, so that a ratio is read
next to the evidence that both did the same work. Outside the test suite: nothing here
is asserted.

  python3 bench/htsim/compare.py [--htsim-source DIR | --htsim-repo URL]
                                 [--cases fig3b,tcp1000,...] [--repeat N] [--cpu N]
                                 [--csfq PATH] [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
HTSIM_REPO = "https://github.com/Broadcom/csg-htsim.git"
HTSIM_COMMIT = "841d9e7be46bb968eece766aa4b6c044c7799f67"

# The ns-3 comparison's harness: running a command with its peak RSS, a round of runs.
_spec = importlib.util.spec_from_file_location("ns3_compare", HERE.parent / "ns3" / "compare.py")
ns3 = importlib.util.module_from_spec(_spec)
sys.modules["ns3_compare"] = ns3  # its dataclasses look their module up
_spec.loader.exec_module(ns3)
HarnessError = ns3.HarnessError

# The csfq run that writes what csfq-htsim does: its tables (flows.csv, delays.csv,
# summary.json), no figure (`--figure none`).
TABLES = "no figure"

# case -> csfq-htsim's flags; the scenario file is scenarios/<case>.toml.
CASES = {
    "fig3b": "--link-mbps 10 --buffer-bytes 64000 --cbr-mbps 10 --tcp 31 --access-mbps 100 --duration-s 10",
    "tcp1000": "--link-mbps 1000 --buffer-bytes 1048576 --tcp 1000 --access-mbps 10000 --duration-s 10",
    "tcp10k": "--link-mbps 10000 --buffer-bytes 1048576 --tcp 10000 --access-mbps 100000 --duration-s 1",
    "folded1000": "--link-mbps 1000 --buffer-bytes 1048576 --tcp 1000 --duration-s 10",
}


@dataclass
class Row:
    case: str
    simulator: str
    run_s: float
    run_range_s: tuple[float, float]
    wall_s: float
    wall_range_s: tuple[float, float]
    rounds: int
    peak_rss_mb: float
    events: int
    total_mbps: float
    jain: float
    cbr_mbps: float | None


def outcome(flows_csv: Path) -> tuple[float, float, float | None]:
    """Total throughput, Jain's index over every flow, the CBR's throughput."""
    with open(flows_csv) as f:
        rows = list(csv.DictReader(f))
    x = [float(r["throughput_mbps"]) for r in rows]
    cbr = [float(r["throughput_mbps"]) for r in rows if r["kind"] == "udp"]
    return sum(x), ns3.jain(x), (sum(cbr) if cbr else None)


def ensure_htsim(src: Path | None, work: Path, repo: str) -> Path:
    """The `sim/` directory of an htsim tree at HTSIM_COMMIT, with libhtsim.a built."""
    if src is None:
        src = work / "csg-htsim"
        if not (src / "sim" / "tcp.h").exists():
            print(f"fetching htsim ({repo} at {HTSIM_COMMIT[:12]}) into {src}...", flush=True)
            src.mkdir(parents=True, exist_ok=True)
            ns3.run(["git", "init", "-q"], cwd=src)
            # The commit without its files, then only sim/'s: the experiments hold large
            # data files the build does not need.
            ns3.run(["git", "fetch", "-q", "--depth", "1", "--filter=blob:none", repo, HTSIM_COMMIT], cwd=src)
            ns3.run(["git", "checkout", "-q", "FETCH_HEAD", "--", "sim"], cwd=src)
    sim = src / "sim"
    if not (sim / "tcp.h").exists():
        raise HarnessError(f"{src} is not an htsim tree (no sim/tcp.h)")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=src, capture_output=True, text=True).stdout.strip()
    if head and head != HTSIM_COMMIT:
        print(f"note: {src} is at {head[:12]}, not the pinned {HTSIM_COMMIT[:12]}", flush=True)
    elif not head and not (src / ".git" / "FETCH_HEAD").exists():
        print(f"note: {src} is not a git checkout; taken to be htsim at {HTSIM_COMMIT[:12]}", flush=True)
    if not (sim / "libhtsim.a").exists():
        print(f"building libhtsim.a in {sim}...", flush=True)
        ns3.run(["make", "-j", str(os.cpu_count() or 1), "libhtsim.a"], cwd=sim)
    return sim


def compile_program(sim: Path, exe: Path) -> None:
    src = HERE / "csfq-htsim.cpp"
    lib = sim / "libhtsim.a"
    if exe.exists() and exe.stat().st_mtime > max(src.stat().st_mtime, lib.stat().st_mtime):
        return
    exe.parent.mkdir(parents=True, exist_ok=True)
    print(f"compiling {exe.name}...", flush=True)
    # htsim's own flags (its Makefile: -O3, C++11 and later).
    ns3.run(["g++", "-O3", "-std=c++17", "-w", f"-I{sim}", str(src), str(lib), "-o", str(exe)])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--htsim-source", type=Path, help=f"an htsim tree (default: fetch {HTSIM_COMMIT[:12]} into OUT/src)")
    ap.add_argument("--htsim-repo", default=HTSIM_REPO, help=f"where to fetch htsim from (default {HTSIM_REPO}; a mirror)")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds; medians are reported (default 3)")
    ap.add_argument("--cpu", type=int, help="pin every run to this CPU (taskset -c)")
    ap.add_argument("--csfq", help="the csfq binary (default: build target/release/csfq)")
    ap.add_argument("--out", type=Path, default=HERE / "out", help="results, flow tables, htsim's build")
    args = ap.parse_args()
    cases = ns3.checked_cases(ap, args, CASES)
    for tool in ["g++", "make", "git"] + (["taskset"] if args.cpu is not None else []):
        if shutil.which(tool) is None:
            raise HarnessError(f"{tool} is needed (Debian: apt-get install g++ make git util-linux)")
    pin = ["taskset", "-c", str(args.cpu)] if args.cpu is not None else []

    sim = ensure_htsim(args.htsim_source.resolve() if args.htsim_source else None, args.out / "src", args.htsim_repo)
    exe = args.out / "bin" / "csfq-htsim"
    compile_program(sim, exe)
    csfq = ns3.ensure_csfq(args.csfq)

    rows: list[Row] = []
    loads: list[float] = []
    for case in cases:
        scen = HERE / "scenarios" / f"{case}.toml"
        out_c = args.out / case / "csfq"
        out_h = args.out / case / "htsim"
        out_h.mkdir(parents=True, exist_ok=True)
        out_t = args.out / case / "csfq-tables"
        run = pin + [str(csfq), "run", str(scen)]
        jobs = [
            ns3.Job("csfq", "release", "", "fifo", run + ["--out", str(out_c)], out_c, args.repeat, [], [], []),
            # What csfq-htsim writes too: the tables, no figure.
            ns3.Job("csfq", "release", TABLES, "fifo", run + ["--out", str(out_t), "--figure", "none"], out_t, args.repeat, [], [], []),
            ns3.Job("htsim", HTSIM_COMMIT[:12], "", "fifo", pin + [str(exe), *CASES[case].split(), "--delay-ms", "1", "--out", str(out_h / "flows.csv")], out_h, args.repeat, [], [], []),
        ]
        print(f"{case}:", flush=True)
        for _ in range(args.repeat):
            for job in jobs:
                job.run_once(loads)
        for job in jobs:
            total, jain, cbr = outcome(job.out / "flows.csv")
            rows.append(Row(
                case, f"{job.simulator}, {job.config}" if job.config else job.simulator, statistics.median(job.runs), (min(job.runs), max(job.runs)),
                statistics.median(job.walls), (min(job.walls), max(job.walls)), len(job.runs),
                max(job.rss), job.events, total, jain, cbr,
            ))

    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "results.json", "w") as f:
        json.dump({"htsim_commit": HTSIM_COMMIT, "rows": [asdict(r) for r in rows], "load_avg_1m": loads,
                   "cpus": os.cpu_count(), "pinned_cpu": args.cpu}, f, indent=1)
    print()
    print_table(rows)
    print(f"\n{len(loads)} runs, one at a time{'' if args.cpu is None else f', on CPU {args.cpu}'}; "
          f"1-minute load average before each: median {statistics.median(loads):.2f}, largest {max(loads):.2f}")
    print(f"wrote {args.out / 'results.json'}")
    return 0


def print_table(rows: list[Row]) -> None:
    """One line per case and simulator; each csfq row's ratios are htsim's time over that
    row's on the same case (above 1: csfq is faster)."""
    head = ["case", "simulator", "loop s", "range", "htsim/csfq", "process s", "range", "htsim/csfq",
            "n", "events", "peak MB", "total Mbit/s", "Jain", "CBR Mbit/s"]
    lines = [head]
    for r in rows:
        htsim = next(o for o in rows if o.case == r.case and o.simulator == "htsim")
        ours = r.simulator != "htsim"
        lines.append([
            r.case, r.simulator, f"{r.run_s:.3f}", f"{r.run_range_s[0]:.3f}-{r.run_range_s[1]:.3f}",
            f"{htsim.run_s / r.run_s:.2f}" if ours else "",
            f"{r.wall_s:.3f}", f"{r.wall_range_s[0]:.3f}-{r.wall_range_s[1]:.3f}",
            f"{htsim.wall_s / r.wall_s:.2f}" if ours else "",
            str(r.rounds), f"{r.events:,}", f"{r.peak_rss_mb:.0f}", f"{r.total_mbps:.1f}",
            f"{r.jain:.3f}", "" if r.cbr_mbps is None else f"{r.cbr_mbps:.3f}",
        ])
    ns3.print_columns(lines, 2)


if __name__ == "__main__":
    ns3.exit_with(main)
