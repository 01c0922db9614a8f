"""Parameter sweeps: a campaign of scenario variants x seeds, run in parallel on all local
cores or on a Dask cluster, each run's results stored once in a Parquet dataset.

A campaign is a base scenario, a grid of overrides (any scenario field by its dotted path,
and ``discipline``) and a list of seeds. Every combination is resolved to the scenario
the simulator will run; its key is a hash of that scenario as the simulator reads it
(every default explicit, numbers as numbers), the discipline, the seed and the build
(a hash of the compiled simulator module, so that results of another build, after a
``git pull`` or a local change, are runs to make again and :meth:`Campaign.stale` lists the
old ones). Results are stored per run as ``STORE/KEY.parquet`` (one row per
flow, with the run's parameters as columns), so a rerun computes only what is missing,
and ``results()`` reads them all as one DataFrame (``pandas.read_parquet`` of the
directory gives the same for one campaign's store; :func:`read_store` for a store several
grids share); its links, series and metadata are under ``STORE/_links``,
``STORE/_series`` and ``STORE/_runs`` (``links()``, ``series()``, ``metadata()``).

Local runs use a thread pool (the simulator releases the interpreter, so threads use every
core); ``backend="dask"`` submits the runs to a ``dask.distributed`` scheduler (a
``LocalCluster``, or a cluster reached by address; SLURM, PBS and SGE through
dask-jobqueue). Either way the results are written by the calling process, so both
backends store the same bytes.
"""

from __future__ import annotations

import datetime
import hashlib
import itertools
import json
import os
import pathlib
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

import pandas as pd

from . import _csfq
from ._core import _flows_frame, _links_frame, _seed, _series_frame, load_scenario

__version__ = _csfq.__version__
__build__ = _csfq.__build__


def _binary_hash() -> str:
    """The SHA-256 (first 16 hex digits) of the compiled simulator module: the build that
    makes a campaign's runs, whatever its version number or commit says."""
    global _BINARY
    if _BINARY is None:
        h = hashlib.sha256()
        with open(_csfq.__file__, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _BINARY = h.hexdigest()[:16]
    return _BINARY


_BINARY: Optional[str] = None

#: Columns every stored row has besides the flow's own.
RUN_COLUMNS = ["key", "discipline", "seed", "jain_index", "events"]


def _run_rows(text: str, name: str, discipline: Optional[str], seed: int) -> Dict[str, Any]:
    """One run, as what it stores: ``flows`` (one row per flow, with the run's summary;
    deterministic, so any backend stores the same bytes), ``links``, ``series`` and
    ``summary`` (with the run's wall time and host), and ``binary``: the build that ran it
    (a Dask worker's own)."""
    import socket

    data = json.loads(_csfq.run(text, name, discipline, seed))
    flows = _flows_frame(data["flows"]).reset_index()
    s = data["summary"]
    flows.insert(0, "events", s["events"])
    flows.insert(0, "jain_index", s["jain_index"])
    flows.insert(0, "seed", s["seed"])
    flows.insert(0, "discipline", s["discipline"])
    links = _links_frame(data["links"])
    series = _series_frame(data, links)
    series["id"] = series["id"].astype(str)
    return {
        "flows": flows,
        "links": links,
        "series": series,
        "summary": dict(s, host=socket.gethostname()),
        "binary": _binary_hash(),
    }


def _json_readable(path: pathlib.Path) -> bool:
    try:
        json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return True


def _readable(path: pathlib.Path) -> bool:
    """Whether `path` is a whole Parquet file (its footer reads)."""
    if not path.exists():
        return False
    import pyarrow.parquet as pq

    try:
        pq.read_metadata(path)
    except Exception:
        return False
    return True


class Campaign:
    """A campaign: ``scenario`` (path, TOML text or dict) x ``grid`` x ``seeds``, stored
    in ``store`` (a directory). ``grid`` maps a dotted field path, or ``discipline``, to
    the values it takes; every combination runs once per seed."""

    def __init__(
        self,
        scenario: Any,
        grid: Optional[Mapping[str, Sequence[Any]]] = None,
        seeds: Iterable[int] = (1,),
        store: "os.PathLike[str] | str" = "campaign",
    ) -> None:
        self.scenario = scenario
        for k, v in (grid or {}).items():
            if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
                raise TypeError(f"grid `{k}`: a list of values, not {v!r} (write [{v!r}])")
        self.grid = {k: list(v) for k, v in (grid or {}).items()}
        for k, v in self.grid.items():
            if not v:
                raise ValueError(f"grid `{k}` has no values")
            if k == "seed":
                raise ValueError("grid `seed`: give seeds as `seeds`, not in the grid")
            if k in RUN_COLUMNS and k != "discipline":
                raise ValueError(f"grid `{k}`: a column of the results, not a scenario field")
        if isinstance(seeds, (str, bytes)):
            raise TypeError("seeds is a sequence of whole numbers, not a string")
        self.seeds = [_seed(s) for s in seeds]
        if not self.seeds:
            raise ValueError("a campaign needs at least one seed")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError("each seed once: a repeated seed would run the same runs twice")
        self.store = pathlib.Path(store)

    def runs(self) -> List[Dict[str, Any]]:
        """Every run: its parameters, seed, resolved scenario text and key (scenario
        errors surface here, before anything runs)."""
        keys = list(self.grid)
        known = _csfq.disciplines()
        for d in self.grid.get("discipline", []):
            if d is not None and d not in known:
                raise ValueError(f"unknown discipline `{d}`: expected one of {', '.join(known)}")
        out = []
        for values in itertools.product(*(self.grid[k] for k in keys)):
            params = dict(zip(keys, values))
            discipline = params.get("discipline")
            overrides = {k: v for k, v in params.items() if k != "discipline"}
            text, name = load_scenario(self.scenario, **overrides)
            # The key hashes the scenario as the simulator reads it: `6` and `6.0`, or a
            # default written out, are the same run.
            canonical = _csfq.check(text, name)
            for seed in self.seeds:
                h = hashlib.sha256()
                for part in (_binary_hash(), canonical, str(discipline), str(seed)):
                    h.update(part.encode())
                    h.update(b"\0")
                out.append(
                    {
                        "params": params,
                        "seed": seed,
                        "discipline": discipline,
                        "text": text,
                        "name": name,
                        "key": h.hexdigest()[:32],
                    }
                )
        return out

    def _paths(self, key: str) -> Dict[str, pathlib.Path]:
        """Where a run's parts live. The flows are ``STORE/KEY.parquet`` (what
        ``pandas.read_parquet(STORE)`` reads: it skips names starting with ``_``); links,
        series and the run's summary and metadata beside them under ``_links``, ``_series``
        and ``_runs``."""
        return {
            "flows": self.store / f"{key}.parquet",
            "links": self.store / "_links" / f"{key}.parquet",
            "series": self.store / "_series" / f"{key}.parquet",
            "run": self.store / "_runs" / f"{key}.json",
        }

    def _complete(self, key: str) -> bool:
        p = self._paths(key)
        return (
            _readable(p["flows"])
            and _readable(p["links"])
            and _readable(p["series"])
            and _json_readable(p["run"])
        )

    def missing(self) -> List[Dict[str, Any]]:
        """The runs whose results are not stored yet, or not whole (a file cut short, a disk
        that filled, a part absent): those run again."""
        return [r for r in self.runs() if not self._complete(r["key"])]

    def _store(self, run: Dict[str, Any], result: Dict[str, Any]) -> None:
        if result["binary"] != _binary_hash():
            raise RuntimeError(
                f"run {run['key']} was made by another build of the simulator (module hash "
                f"{result['binary']}, here {_binary_hash()}): install this build on every "
                "worker; nothing of it was stored"
            )
        paths = self._paths(run["key"])
        for d in ("links", "series", "run"):
            paths[d].parent.mkdir(parents=True, exist_ok=True)

        def keyed(df: pd.DataFrame) -> pd.DataFrame:
            """The run's key and parameters, its discipline (as run) and seed first."""
            df = df.copy()
            df.insert(0, "key", run["key"])
            at = 1
            for k, v in run["params"].items():
                if k != "discipline":
                    df.insert(at, k, v)
                    at += 1
            for k in ("discipline", "seed"):
                if k not in df.columns:
                    df.insert(at, k, result["summary"][k])
                    at += 1
            return df

        def replace(path: pathlib.Path, write) -> None:
            tmp = path.with_name(f".{path.name}.tmp")
            write(tmp)
            os.replace(tmp, path)

        meta = {
            "key": run["key"],
            "params": run["params"],
            "discipline": run["discipline"],
            "seed": run["seed"],
            "version": __version__,
            "build": __build__,
            "binary": _binary_hash(),
            "scenario_file": run["name"],
            "scenario_text": run["text"],
            "summary": result["summary"],
            "stored_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }
        replace(paths["links"], lambda t: keyed(result["links"]).to_parquet(t, index=False))
        replace(paths["series"], lambda t: keyed(result["series"]).to_parquet(t, index=False))
        replace(paths["run"], lambda t: t.write_text(json.dumps(meta, indent=1, default=str)))
        # The flows last: a run whose flows file is whole has every part.
        replace(paths["flows"], lambda t: keyed(result["flows"]).to_parquet(t, index=False))

    def _read(self, part: str) -> pd.DataFrame:
        frames = []
        for r in self.runs():
            p = self._paths(r["key"])[part]
            if self._complete(r["key"]):
                frames.append(pd.read_parquet(p))
        if not frames:
            return pd.DataFrame()
        return pd.concat(frames, ignore_index=True)

    def links(self) -> pd.DataFrame:
        """Every stored run's links, one row per (run, router-to-router link direction),
        with the run's key and parameters: utilization, drops, queue, sojourn times."""
        return self._read("links")

    def series(self, kind: Optional[str] = None, metric: Optional[str] = None) -> pd.DataFrame:
        """Every stored run's time series (``time_s``, ``kind`` flow or link, ``id``,
        ``metric``, ``value``), with the run's key, parameters, discipline and seed;
        ``kind`` and ``metric`` select (``series("link", "queue_bytes")``). A kind or metric
        the stored runs do not have raises ``ValueError`` naming the ones they have."""
        if kind is not None and kind not in ("flow", "link"):
            raise ValueError(f"unknown kind `{kind}`: expected flow or link")
        df = self._read("series")
        if df.empty:
            return df
        if kind is not None:
            df = df[df["kind"] == kind]
        if metric is not None:
            known = sorted(df["metric"].unique())
            if metric not in known:
                raise ValueError(
                    f"no {kind or 'flow or link'} series `{metric}` in the stored runs: "
                    + (f"expected one of {', '.join(known)}" if known else f"they have no {kind} series")
                )
            df = df[df["metric"] == metric]
        return df.reset_index(drop=True)

    def metadata(self) -> pd.DataFrame:
        """One row per stored run: key, parameters, discipline, seed, the package version,
        the build (``build``: the commit; ``binary``: the module's hash, part of the key),
        the scenario's file and the text the simulator ran (``scenario_text``), its summary
        (name, Jain's index, events, wall time, host) and when it was stored."""
        rows = []
        for r in self.runs():
            p = self._paths(r["key"])["run"]
            if self._complete(r["key"]):
                m = json.loads(p.read_text())
                summary = m.pop("summary")
                params = m.pop("params")
                rows.append({**m, **{k: v for k, v in params.items() if k != "discipline"}, **summary})
        return pd.DataFrame(rows)

    def stale(self) -> List[str]:
        """Keys stored in the store that are not runs of this campaign (another base
        scenario or grid, another build of the simulator: ``metadata()``'s ``build`` and
        ``binary`` say which made each run). A store shared by several campaigns
        holds each other's runs: check before removing them."""
        mine = {r["key"] for r in self.runs()}
        found = {p.stem for p in self.store.glob("*.parquet")}
        for sub, suffix in (("_links", ".parquet"), ("_series", ".parquet"), ("_runs", ".json")):
            found |= {p.name[: -len(suffix)] for p in (self.store / sub).glob(f"*{suffix}")}
        return sorted(found - mine)

    def remove_stale(self) -> List[str]:
        """Removes every part of the runs :meth:`stale` lists; returns their keys."""
        keys = self.stale()
        for k in keys:
            for p in self._paths(k).values():
                p.unlink(missing_ok=True)
        return keys

    def run(
        self,
        backend: str = "local",
        workers: Optional[int] = None,
        scheduler: Any = None,
        progress: bool = True,
    ) -> pd.DataFrame:
        """Computes the missing runs and returns :meth:`results`.

        ``backend="local"``: a pool of ``workers`` threads (default: every core).
        ``backend="dask"``: ``scheduler`` is a ``dask.distributed.Client``, or the address
        of a scheduler to connect to (default: a new ``LocalCluster``)."""
        if backend not in ("local", "dask"):
            raise ValueError(f"unknown backend `{backend}`: expected local or dask")
        todo = self.missing()
        self.store.mkdir(parents=True, exist_ok=True)
        if todo:
            if backend == "local":
                self._run_local(todo, workers, progress)
            else:
                self._run_dask(todo, scheduler, progress)
        return self.results()

    def _bar(self, total: int, progress: bool):
        if not progress:
            return None
        try:
            from tqdm.auto import tqdm
        except ImportError:  # pragma: no cover
            return None
        return tqdm(total=total, desc="csfq sweep", unit="run")

    def _run_local(self, todo, workers, progress) -> None:
        from concurrent.futures import ThreadPoolExecutor, as_completed

        bar = self._bar(len(todo), progress)
        pool = ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1)
        futures = {
            pool.submit(_run_rows, r["text"], r["name"], r["discipline"], r["seed"]): r for r in todo
        }
        stored = set()
        try:
            for f in as_completed(futures):
                self._store(futures[f], f.result())
                stored.add(f)
                if bar is not None:
                    bar.update(1)
        except BaseException:
            # Interrupted (Ctrl-C) or a run failed: queued runs never start; the ones
            # running finish (a thread cannot be stopped) and are kept.
            pool.shutdown(wait=True, cancel_futures=True)
            for f, r in futures.items():
                if f not in stored and f.done() and not f.cancelled() and f.exception() is None:
                    self._store(r, f.result())
            raise
        finally:
            if bar is not None:
                bar.close()
        pool.shutdown()

    def _run_dask(self, todo, scheduler, progress) -> None:
        from dask.distributed import Client, as_completed

        own = None
        if isinstance(scheduler, Client):
            client = scheduler
        else:
            client = own = Client(scheduler) if scheduler is not None else Client(processes=True)
        try:
            bar = self._bar(len(todo), progress)
            futures = {}
            for r in todo:
                f = client.submit(_run_rows, r["text"], r["name"], r["discipline"], r["seed"], pure=False)
                futures[f] = r
            try:
                for f in as_completed(list(futures)):
                    self._store(futures[f], f.result())
                    if bar is not None:
                        bar.update(1)
            except BaseException:
                # Interrupted or failed: the cluster drops what has not run yet.
                client.cancel(list(futures))
                raise
            finally:
                if bar is not None:
                    bar.close()
        finally:
            if own is not None:
                own.close()

    def results(self) -> pd.DataFrame:
        """Every stored run of this campaign, one row per (run, flow), in the campaign's
        order (grid, then seed, then flow)."""
        return self._read("flows")

    def to_xarray(self, var: Optional[str] = None):
        """The results as an xarray Dataset over the grid's parameters, the discipline, the
        seed and the flow: one variable per numeric per-flow column (throughput, reference
        shares, drops by every reason, delays, ...), or only ``var`` and the reference share
        (needs xarray)."""
        import xarray  # noqa: F401  (the error names what to install)

        dims = [k for k in self.grid if k != "discipline"] + ["discipline", "seed", "flow"]
        df = self.results().set_index(dims)
        numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])]
        if var is not None:
            if var not in numeric:
                raise ValueError(f"no numeric column `{var}`: expected one of {', '.join(numeric)}")
            numeric = [var, "reference_mbps"] if var != "reference_mbps" else [var]
        return df[numeric].to_xarray()


def read_store(store: "os.PathLike[str] | str") -> pd.DataFrame:
    """Every run's flows in a store, whatever campaigns wrote them: one row per (run,
    flow), the columns the union of every run's (a grid's parameter missing from another
    campaign's runs is null there). ``pandas.read_parquet(STORE)`` takes the first file's
    columns only, so it drops the parameters of a second grid stored beside the first."""
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    files = sorted(str(p) for p in pathlib.Path(store).glob("*.parquet") if _readable(p))
    if not files:
        return pd.DataFrame()
    schemas = [pq.read_schema(f) for f in files]
    try:
        # A parameter that is an integer in one grid and a float in another.
        schema = pa.unify_schemas(schemas, promote_options="permissive")
    except TypeError:  # pyarrow < 14
        schema = pa.unify_schemas(schemas)
    return ds.dataset(files, schema=schema, format="parquet").to_table().to_pandas()


def sweep(
    scenario: Any,
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    seeds: Iterable[int] = (1,),
    store: "os.PathLike[str] | str" = "campaign",
    backend: str = "local",
    **kwargs: Any,
) -> pd.DataFrame:
    """Runs a campaign (see :class:`Campaign`) and returns its results."""
    return Campaign(scenario, grid, seeds, store).run(backend=backend, **kwargs)
