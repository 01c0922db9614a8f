"""``python -m csfq sweep``: a campaign from the command line.

    python -m csfq sweep scenarios/csfq-fig3b.toml \\
        --set link.0.rate_mbps=5,10,20 --set discipline=fifo,drr,csfq \\
        --seeds 1-3 --store campaigns/fig3b [--backend dask --scheduler tcp://HOST:8786]

Each ``--set FIELD=V1,V2,...`` is a dimension of the grid (one value: an override); values
are read as TOML values (``10``, ``2.5``, ``true``, ``"a,b"`` for a string holding a
comma). It prints one row per grid point, over the seeds: Jain's index (mean and lowest),
the flows' throughput against their reference share, and what the store holds.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Dict, List, Optional, Sequence

from .sweep import Campaign


class UsageError(Exception):
    """A bad argument, said as the user typed it."""


def _parse_value(text: str, where: str) -> Any:
    """A TOML value (`10`, `2.5`, `true`, `"x"`); a bare word is a string."""
    try:
        import tomllib  # type: ignore[import-not-found]
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        if text and all(c.isalnum() or c in "-_." for c in text):
            return text
        raise UsageError(f"{where}: `{text}` is not a TOML value (quote strings: '\"{text}\"')")


def _split_values(text: str) -> List[str]:
    """Splits at commas outside double quotes."""
    parts, cur, quoted = [], "", False
    for c in text:
        if c == '"':
            quoted = not quoted
        if c == "," and not quoted:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    return [p.strip() for p in parts]


def parse_grid(sets: Sequence[str]) -> Dict[str, List[Any]]:
    grid: Dict[str, List[Any]] = {}
    for s in sets:
        field, eq, values = s.partition("=")
        field = field.strip()
        if not eq or not field:
            raise UsageError(f"--set {s}: expected FIELD=V1,V2,... (e.g. link.0.rate_mbps=5,10)")
        if field in grid:
            raise UsageError(f"--set {field}: given twice; list its values in one --set")
        vals = _split_values(values)
        if any(v == "" for v in vals):
            raise UsageError(f"--set {s}: an empty value")
        grid[field] = [_parse_value(v, f"--set {field}") for v in vals]
    return grid


def parse_seeds(text: str) -> List[int]:
    """`1-8`, `1,2,5` or a mix (`1-3,7`)."""
    seeds: List[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if hi < lo:
                    raise ValueError
                if hi >= 2**64:
                    raise UsageError(f"--seeds {text}: seeds are below 2**64 (18446744073709551616)")
                if hi - lo + 1 + len(seeds) > MAX_SEEDS:
                    raise UsageError(
                        f"--seeds {text}: {hi - lo + 1} seeds; at most {MAX_SEEDS} in one campaign "
                        "(run several with the same --store)"
                    )
                seeds.extend(range(lo, hi + 1))
            else:
                seeds.append(int(part))
        except ValueError:
            raise UsageError(f"--seeds {text}: expected seeds like 1-8 or 1,2,5 (non-negative integers)")
    if any(s < 0 for s in seeds):
        raise UsageError(f"--seeds {text}: seeds are non-negative")
    if any(s >= 2**64 for s in seeds):
        raise UsageError(f"--seeds {text}: seeds are below 2**64 (18446744073709551616)")
    return list(dict.fromkeys(seeds))


#: The most seeds one campaign takes: each is a run of every grid point, listed before any
#: runs (a larger campaign is several, sharing a store).
MAX_SEEDS = 100_000


def summarize(df, grid: Dict[str, List[Any]]):
    """One row per grid point over its seeds."""
    import pandas as pd

    keys = list(grid) or ["discipline"]
    if "discipline" not in keys:
        keys.append("discipline")
    share = df["throughput_mbps"] / df["reference_mbps"]
    df = df.assign(_share=share.where(df["reference_mbps"] > 0))
    runs = df.groupby(keys + ["seed"], sort=False, dropna=False)
    per_run = runs.agg(
        jain=("jain_index", "first"),
        throughput=("throughput_mbps", "sum"),
        worst=("_share", "min"),
        best=("_share", "max"),
    ).reset_index()
    table = per_run.groupby(keys, sort=False, dropna=False).agg(
        seeds=("seed", "count"),
        jain_mean=("jain", "mean"),
        jain_min=("jain", "min"),
        total_mbps=("throughput", "mean"),
        lowest_vs_reference=("worst", "min"),
        highest_vs_reference=("best", "max"),
    )
    return pd.DataFrame(table)


def sweep_main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m csfq sweep",
        description="Run a campaign: a scenario x a grid of overrides x seeds, each run stored "
        "once as Parquet in STORE (a rerun computes only what is missing), on all local cores "
        "or on a Dask cluster.",
    )
    p.add_argument("scenario", help="the base scenario (TOML)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=V1,V2",
        help="a grid dimension: a field by its dotted path (link.0.rate_mbps, flow.0.count, "
        "csfq.k_ms) or `discipline`, and its values (repeatable)",
    )
    p.add_argument("--seeds", default="1", help="seeds: 1-8, 1,2,5 or both (default: 1)")
    p.add_argument("--store", default="campaign", help="the Parquet store directory (default: campaign)")
    p.add_argument("--backend", choices=["local", "dask"], default="local")
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="a Dask scheduler's address (tcp://HOST:8786; implies --backend dask; "
        "default with --backend dask: a new LocalCluster)",
    )
    p.add_argument("--workers", type=int, help="local threads (default: every core)")
    p.add_argument("--csv", metavar="FILE", help="also write every stored row (one per run and flow) as CSV")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    try:
        if args.workers is not None and args.workers < 1:
            raise UsageError(f"--workers {args.workers}: at least 1")
        grid = parse_grid(args.set)
        seeds = parse_seeds(args.seeds)
        backend = "dask" if args.scheduler else args.backend
        if os.path.exists(args.store) and not os.path.isdir(args.store):
            raise UsageError(f"--store {args.store}: a file, not a directory")
        c = Campaign(args.scenario, grid, seeds=seeds, store=args.store)
        todo = len(c.missing())
        total = len(c.runs())
        df = c.run(backend=backend, workers=args.workers, scheduler=args.scheduler, progress=not args.quiet)
    except UsageError as e:
        p.exit(2, f"{p.prog}: error: {e}\n")
    except ValueError as e:  # ScenarioError is a ValueError; so are bad grids
        p.exit(1, f"{p.prog}: error: {e}\n")
    except KeyError as e:  # an override path the scenario does not have
        p.exit(1, f"{p.prog}: error: {e.args[0]}\n")
    import pandas as pd

    with pd.option_context("display.width", 200, "display.max_columns", None, "display.max_rows", 500):
        print(summarize(df, grid).to_string(float_format=lambda x: f"{x:.4f}"))
    dims = " x ".join(f"{len(v)} {k}" for k, v in grid.items()) or "no grid"
    print(f"{total} runs ({dims}, {len(seeds)} seeds): {todo} computed, {total - todo} already in {args.store}")
    if args.csv:
        try:
            df.to_csv(args.csv, index=False)
        except OSError as e:
            # The runs are stored; only the CSV copy failed.
            p.exit(1, f"{p.prog}: error: cannot write {args.csv}: {e.strerror or e} (the runs are in {args.store})\n")
        print(f"wrote {args.csv} ({len(df)} rows)")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m csfq sweep SCENARIO [--set FIELD=V1,V2]... [--seeds 1-8] [--store DIR]\n"
              "       [--backend local|dask] [--scheduler ADDRESS] [--csv FILE]\n"
              "see: python -m csfq sweep --help")
        return 0 if argv else 2
    if argv[0] != "sweep":
        print(f"python -m csfq: unknown command `{argv[0]}` (expected: sweep)", file=sys.stderr)
        return 2
    return sweep_main(argv[1:])


def _main_quiet_on_closed_pipe() -> int:
    try:
        code = main()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # `python -m csfq sweep ... | head -1`: the reader left; the runs are stored.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(_main_quiet_on_closed_pipe())
