#!/usr/bin/env python3
"""csfq and ns-3 side by side: the same scenarios, on this machine, in one run.

Runs csfq-fig3a, csfq-fig3b and scale-1000 (1 UDP + 999 TCP over 1 Gbit/s, 10 s) in
ns-3 (`csfq-ns3.cc`, FIFO and FQ-CoDel at the bottleneck) and in csfq (`csfq run`,
FIFO, FQ-CoDel, CSFQ and DRR), and prints wall times, their ratios, and the outcome of
each run (UDP throughput, Jain's index of the TCP flows, Jain's index of every flow
against its max-min share, utilization) so a reader sees that both simulators agree
under the same queue before reading the ratio.

ns-3 configurations (`csfq-ns3.cc --config`), the same model either way:
  expert     the strong end-system model and a hashed route lookup: what an ns-3 user
             sets on a topology whose routers have one interface per flow. The ratios
             quoted are against this one.
  defaults   ns-3's defaults (weak end-system model, list + static routing), which on
             scale-1000 scan ~1000 interfaces and ~1000 routes per packet and router.
The per-flow output of the two must be byte-identical; the table says whether it is.

ns-3 builds:
  wheel      the `ns3` package from PyPI (3.44.post0), installed into bench/ns3/.venv.
             It is built with logging and asserts compiled in (its libraries carry the
             NS_LOG_LOGIC strings), so it is slower than ns-3's optimized profile.
  optimized  ns-3.44 from source, `./ns3 configure --build-profile=optimized` with only
             the modules the scenarios use; given with --ns3-source DIR (a checkout of
             tag ns-3.44, e.g. `git clone --branch ns-3.44 --depth 1
             https://gitlab.com/nsnam/ns-3-dev.git`). Built once, then reused.

Runs are interleaved, one process at a time: for each case and queue, csfq, then each
ns-3 build and configuration, then csfq again (A B A B ...), --repeat rounds, so that a
slow spell of the machine falls on both sides. Two times per run: "run", the simulation
alone as each simulator reports it (csfq's "simulated in", ns-3's Simulator::Run), and
"process", the wall-clock time of the whole command (set-up, simulation and writing
results; csfq also draws its SVG and PNG plot). Each is reported as the median of the
rounds with its range; ratios are of medians. The machine's 1-minute load average is
read before every run and its largest value printed with the table. Outside the test
suite: nothing here is asserted.

  python3 bench/ns3/compare.py [--ns3-source DIR] [--cases fig3a,fig3b,scale1000]
                               [--configs expert,defaults] [--repeat N]
                               [--defaults-repeat N] [--skip-wheel] [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NS3_WHEEL = "ns3==3.44.post0"
NS3_MODULES = ["applications", "internet", "point-to-point", "traffic-control", "network", "core"]

# case -> (csfq scenario file, bottleneck Mbit/s)
CASES = {
    "fig3a": ("scenarios/csfq-fig3a.toml", 10.0),
    "fig3b": ("scenarios/csfq-fig3b.toml", 10.0),
    "scale1000": ("scenarios/scale-1000.toml", 1000.0),
}
NS3_QUEUES = {"fifo": "fifo", "fq_codel": "fqcodel"}
NS3_CONFIGS = ["expert", "defaults"]
CSFQ_DISCIPLINES = ["fifo", "fq_codel", "csfq", "drr"]


class HarnessError(Exception):
    pass


@dataclass
class Row:
    case: str
    simulator: str
    build: str
    config: str
    queue: str
    wall_s: float
    run_s: float
    wall_range_s: tuple[float, float]
    run_range_s: tuple[float, float]
    rounds: int
    peak_rss_mb: float
    events: int | None
    udp_mbps: float
    tcp_jain: float | None
    maxmin_jain: float
    utilization: float
    same_as_defaults: bool | None = None


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise HarnessError(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return p


def timed_rss(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, the child's own peak RSS (MB) and its stdout."""
    out_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"csfq-compare-{os.getpid()}.out"
    with open(out_path, "w") as out_f:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out_f, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        proc.returncode = os.waitstatus_to_exitcode(status)
    out = out_path.read_text()
    out_path.unlink()
    if proc.returncode != 0:
        raise HarnessError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-2000:]}")
    return wall, usage.ru_maxrss / 1024.0, out


@dataclass
class Job:
    """One simulator, build, configuration and queue on one case: the runs of its rounds."""

    simulator: str
    build: str
    config: str
    queue: str
    cmd: list[str]
    out: Path
    rounds: int
    walls: list[float]
    runs: list[float]
    rss: list[float]
    events: int | None = None

    def run_once(self, loads: list[float]) -> None:
        loads.append(os.getloadavg()[0])
        wall, rss, stdout = timed_rss(self.cmd)
        if self.simulator == "csfq":
            m = re.search(r"simulated in ([0-9.]+) s", stdout)
            if not m:
                raise HarnessError(f"csfq run printed no 'simulated in': {stdout[:500]}")
            run_s = float(m.group(1))
            events = json.loads((self.out / "summary.json").read_text()).get("events")
        else:
            said = dict(l.split(maxsplit=1) for l in stdout.splitlines() if " " in l)
            events, run_s = int(said["events"]), float(said["run_s"])
        if self.events is not None and events != self.events:
            raise HarnessError(f"{' '.join(self.cmd)}: {events} events, {self.events} in an earlier round")
        self.events = events
        self.walls.append(wall)
        self.runs.append(run_s)
        self.rss.append(rss)
        print(f"  {self.simulator:5} {self.build:9} {self.config:8} {self.queue:9} run {run_s:8.3f} s, process {wall:8.3f} s, load {loads[-1]:.2f}", flush=True)

    def row(self, case: str, cap: float, offered: dict[int, float]) -> Row:
        flows = self.out / "flows.csv"
        return Row(
            case, self.simulator, self.build, self.config, self.queue,
            statistics.median(self.walls), statistics.median(self.runs),
            (min(self.walls), max(self.walls)), (min(self.runs), max(self.runs)),
            len(self.runs), max(self.rss), self.events, **outcome(flows, cap, offered),
        )


def outcome(flows_csv: Path, capacity_mbps: float, offered: dict[int, float]) -> dict:
    """UDP total, TCP Jain, Jain against the max-min shares, utilization."""
    with open(flows_csv) as f:
        rows = list(csv.DictReader(f))
    x = [float(r["throughput_mbps"]) for r in rows]
    kinds = [r["kind"] for r in rows]
    tcp = [v for k, v in zip(kinds, x) if k == "tcp"]
    udp = [v for k, v in zip(kinds, x) if k == "udp"]
    share = maxmin_single_link(capacity_mbps, [offered.get(i) for i in range(len(x))])
    ratios = [v / s for v, s in zip(x, share)]
    return {
        "udp_mbps": sum(udp),
        "tcp_jain": jain(tcp) if tcp else None,
        "maxmin_jain": jain(ratios),
        "utilization": sum(x) / capacity_mbps,
    }


def jain(xs: list[float]) -> float:
    sq = sum(v * v for v in xs)
    return (sum(xs) ** 2) / (len(xs) * sq) if sq > 0 else 0.0


def maxmin_single_link(capacity: float, demands: list[float | None]) -> list[float]:
    """Water-filling on one link; `None` is a flow that takes what it is given (TCP)."""
    share = [0.0] * len(demands)
    left = capacity
    todo = sorted(range(len(demands)), key=lambda i: float("inf") if demands[i] is None else demands[i])
    for n, i in enumerate(todo):
        fair = left / (len(todo) - n)
        d = demands[i]
        share[i] = fair if d is None or d > fair else d
        left -= share[i]
    return share


def offered_rates(scenario: Path) -> dict[int, float]:
    """Flow index -> offered Mbit/s of each UDP flow, from the scenario file."""
    import tomllib

    spec = tomllib.loads(scenario.read_text())
    offered = {}
    i = 0
    for table in spec["flow"]:
        for j in range(table.get("count", 1)):
            if table["kind"] == "udp":
                offered[i] = table["rate_mbps"] + j * table.get("rate_step_mbps", 0.0)
            i += 1
    return offered


def ensure_wheel(venv: Path) -> Path:
    """The ns3 wheel's package directory, installing it into `venv` if needed."""
    py = venv / "bin" / "python"
    if not py.exists():
        print(f"creating {venv} and installing {NS3_WHEEL} (about 70 MB)...", flush=True)
        run([sys.executable, "-m", "venv", str(venv)])
    probe = [str(py), "-c", "import importlib.util as u, os; s = u.find_spec('ns3'); print(os.path.dirname(s.origin) if s and s.origin else list(s.submodule_search_locations)[0])"]
    p = subprocess.run(probe, capture_output=True, text=True)
    if p.returncode != 0 or not p.stdout.strip():
        run([str(py), "-m", "pip", "install", "--quiet", NS3_WHEEL])
        p = run(probe)
    pkg = Path(p.stdout.strip())
    if not (pkg / "include" / "ns3" / "core-module.h").exists():
        raise HarnessError(f"{pkg} has no include/ns3/core-module.h: not the ns3 wheel this expects")
    return pkg


def ensure_optimized(src: Path) -> tuple[Path, Path, str]:
    """(include dir, lib dir, library suffix) of an optimized ns-3 build of `src`."""
    if not (src / "ns3").exists():
        raise HarnessError(f"{src} is not an ns-3 source tree (no ./ns3 script)")
    lib = src / "build" / "lib"
    if not list(lib.glob("libns3*-core-optimized.so")):
        print(f"building ns-3 (optimized profile) in {src}; this takes a while...", flush=True)
        run(
            [
                "./ns3", "configure", "--build-profile=optimized",
                "--enable-modules=" + ";".join(NS3_MODULES[:4]),
                "--disable-examples", "--disable-tests", "--disable-python", "--disable-werror",
            ],
            cwd=src,
        )
        run(["./ns3", "build"], cwd=src)
    core = sorted(lib.glob("libns3*-core-optimized.so"))
    if not core:
        raise HarnessError(f"no optimized libraries in {lib} after building")
    version = core[0].name[len("lib"): -len("-core-optimized.so")]  # e.g. ns3.44
    return src / "build" / "include", lib, f"{version}-{{}}-optimized"


def compile_program(include: Path, lib: Path, pattern: str, exe: Path) -> None:
    src = HERE / "csfq-ns3.cc"
    if exe.exists() and exe.stat().st_mtime > src.stat().st_mtime:
        return
    exe.parent.mkdir(parents=True, exist_ok=True)
    libs = [f"-l{pattern.format(m)}" for m in NS3_MODULES]
    print(f"compiling {exe.name}...", flush=True)
    run(["g++", "-O2", "-std=c++20", f"-I{include}", str(src), "-o", str(exe), f"-L{lib}", f"-Wl,-rpath,{lib}", *libs])


def ensure_csfq(path: str | None) -> Path:
    if path:
        return Path(path)
    print("building csfq (release)...", flush=True)
    run(["cargo", "build", "--release", "--quiet", "-p", "csfq-cli"], cwd=ROOT)
    return ROOT / "target" / "release" / "csfq"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ns3-source", type=Path, help="an ns-3.44 source tree to build with the optimized profile")
    ap.add_argument("--skip-wheel", action="store_true", help="leave out the PyPI wheel's ns-3")
    ap.add_argument("--cases", default="fig3a,fig3b,scale1000", help="comma-separated: fig3a, fig3b, scale1000")
    ap.add_argument("--configs", default=",".join(NS3_CONFIGS), help="ns-3 configurations, comma-separated: expert, defaults")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds; medians are reported (default 3)")
    ap.add_argument("--defaults-repeat", type=int, help="rounds for ns-3's defaults (default: --repeat); they take 4-6x longer on scale-1000")
    ap.add_argument("--csfq", help="the csfq binary (default: build target/release/csfq)")
    ap.add_argument("--venv", type=Path, default=HERE / ".venv", help="where the ns3 wheel goes")
    ap.add_argument("--out", type=Path, default=HERE / "out", help="results and per-run flow tables")
    args = ap.parse_args()
    cases = checked_cases(ap, args, CASES)
    if args.defaults_repeat is None:
        args.defaults_repeat = args.repeat
    if args.defaults_repeat < 1:
        ap.error("--defaults-repeat: expected a whole number of at least 1")
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    if not configs or any(c not in NS3_CONFIGS for c in configs):
        ap.error(f"--configs: expected a comma-separated list of {', '.join(NS3_CONFIGS)}")
    if args.skip_wheel and not args.ns3_source:
        ap.error("--skip-wheel needs --ns3-source: there would be no ns-3 to compare with")
    if shutil.which("g++") is None:
        raise HarnessError("g++ is needed to compile the ns-3 scenario program (apt-get install g++)")

    builds: dict[str, Path] = {}
    exe_dir = args.out / "bin"
    if not args.skip_wheel:
        pkg = ensure_wheel(args.venv)
        exe = exe_dir / "csfq-ns3-wheel"
        compile_program(pkg / "include", pkg / "lib64", "ns3.44-{}", exe)
        builds["wheel"] = exe
    if args.ns3_source:
        inc, lib, pattern = ensure_optimized(args.ns3_source.resolve())
        exe = exe_dir / "csfq-ns3-optimized"
        compile_program(inc, lib, pattern, exe)
        builds["optimized"] = exe
    csfq = ensure_csfq(args.csfq)

    rows: list[Row] = []
    loads: list[float] = []
    for case in cases:
        scen_rel, cap = CASES[case]
        scen = ROOT / scen_rel
        offered = offered_rates(scen)
        for queue in CSFQ_DISCIPLINES:
            out = args.out / case / f"csfq-{queue}"
            cmd = [str(csfq), "run", str(scen), "--discipline", queue, "--out", str(out)]
            jobs = [Job("csfq", "release", "", queue, cmd, out, args.repeat, [], [], [])]
            for build, exe in builds.items() if queue in NS3_QUEUES else []:
                for config in configs:
                    out = args.out / case / f"ns3-{build}-{config}-{queue}"
                    out.mkdir(parents=True, exist_ok=True)
                    cmd = [str(exe), f"--case={case}", f"--queue={NS3_QUEUES[queue]}", f"--config={config}", f"--out={out / 'flows.csv'}"]
                    rounds = args.defaults_repeat if config == "defaults" else args.repeat
                    jobs.append(Job("ns-3", build, config, queue, cmd, out, rounds, [], [], []))
            print(f"{case} {queue}:", flush=True)
            for r in range(max(j.rounds for j in jobs)):
                for job in jobs:
                    if r < job.rounds:
                        job.run_once(loads)
            new = [j.row(case, cap, offered) for j in jobs]
            for row, job in zip(new, jobs):
                twin = [j for j in jobs if j.simulator == "ns-3" and j.build == job.build and j.config == "defaults"]
                if job.simulator == "ns-3" and job.config != "defaults" and twin:
                    row.same_as_defaults = (job.out / "flows.csv").read_bytes() == (twin[0].out / "flows.csv").read_bytes() and job.events == twin[0].events
            rows += new

    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "results.json", "w") as f:
        json.dump({"rows": [asdict(r) for r in rows], "load_avg_1m": loads, "cpus": os.cpu_count()}, f, indent=1)
    print()
    print_table(rows)
    print(f"\n{len(loads)} runs, one at a time, on {os.cpu_count()} CPUs; 1-minute load average before each: median {statistics.median(loads):.2f}, largest {max(loads):.2f}")
    differ = [r for r in rows if r.same_as_defaults is False]
    if differ:
        print("WARNING: the expert configuration's per-flow output or event count differs from the defaults' in: " + ", ".join(f"{r.case} {r.build} {r.queue}" for r in differ))
    print(f"\nwrote {args.out / 'results.json'}")
    return 0


def print_table(rows: list[Row]) -> None:
    """One line per simulator, build, configuration and queue; ratios are of medians, each
    ns-3 row over csfq's row with the same case and queue."""
    head = ["case", "simulator", "queue", "run s (median)", "range", "ns-3/csfq", "process s", "ns-3/csfq",
            "n", "events", "peak MB", "UDP Mbit/s", "TCP Jain", "max-min Jain", "util", "= defaults"]
    lines = [head]
    for r in rows:
        same = [o for o in rows if o.case == r.case and o.simulator == "csfq" and o.queue == r.queue]
        ns3 = r.simulator == "ns-3" and same
        ratio_run = f"{r.run_s / same[0].run_s:.0f}x" if ns3 else ""
        ratio_wall = f"{r.wall_s / same[0].wall_s:.0f}x" if ns3 else ""
        sim = r.simulator if r.simulator == "csfq" else f"ns-3 {r.build} {r.config}"
        lines.append([
            r.case, sim, r.queue, f"{r.run_s:.3f}", f"{r.run_range_s[0]:.3f}-{r.run_range_s[1]:.3f}",
            ratio_run, f"{r.wall_s:.3f}", ratio_wall, str(r.rounds),
            f"{r.events:,}" if r.events else "", f"{r.peak_rss_mb:.0f}",
            f"{r.udp_mbps:.3f}", "" if r.tcp_jain is None else f"{r.tcp_jain:.3f}",
            f"{r.maxmin_jain:.3f}", f"{100 * r.utilization:.1f}%",
            {None: "", True: "identical", False: "DIFFERS"}[r.same_as_defaults],
        ])
    print_columns(lines, 3)


def checked_cases(ap: argparse.ArgumentParser, args: argparse.Namespace, known) -> list[str]:
    """`--cases` as a list of known case names, and `--repeat` at least 1, or a usage error."""
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    bad = [c for c in cases if c not in known]
    if bad or not cases:
        ap.error(f"--cases: unknown {bad}; expected a comma-separated list of {', '.join(known)}")
    if args.repeat < 1:
        ap.error("--repeat: expected a whole number of at least 1")
    return cases


def print_columns(lines: list[list[str]], left: int) -> None:
    """A table: the first line its head, underlined; the first `left` columns flush left."""
    widths = [max(len(l[i]) for l in lines) for i in range(len(lines[0]))]
    for n, l in enumerate(lines):
        print("  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(l, widths))))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def exit_with(main) -> None:
    """Runs `main`, a harness failure as one line on stderr and exit status 1."""
    try:
        sys.exit(main())
    except HarnessError as e:
        print(f"compare: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    exit_with(main)
