"""csfq: core-stateless fair queueing, the simulator in Python.

The simulation runs in-process (Rust, with the interpreter released: threads run in
parallel) and its results come back as pandas DataFrames::

    import csfq
    r = csfq.run("scenarios/csfq-fig3b.toml", discipline="drr", seed=2)
    r.flows[["kind", "reference_mbps", "throughput_mbps"]]
    r.throughput().plot()

Scenarios are the files of the ``csfq`` command (a path), their text, or a dict of the
same fields; ``**overrides`` change any field by its dotted path
(``**{"link.0.rate_mbps": 20}``, or ``link__0__rate_mbps=20`` as a keyword).
"""

from __future__ import annotations

import copy
import json
import operator
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import pandas as pd
import tomli_w
import tomlkit
import tomlkit.exceptions

from . import _csfq
from ._csfq import ScenarioError, SimulationError

__version__: str = _csfq.__version__

__all__ = [
    "Campaign",
    "Result",
    "Reproduction",
    "ScenarioError",
    "SimulationError",
    "disciplines",
    "drop_reasons",
    "experiments",
    "load_scenario",
    "maxmin",
    "reproduce",
    "run",
    "sweep",
]

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]

def disciplines() -> List[str]:
    """The discipline names a scenario (and ``discipline=``) takes."""
    return list(_csfq.disciplines())


def drop_reasons() -> List[str]:
    """Every reason a packet is dropped for: the ``drops_*`` columns of ``Result.flows``."""
    return list(_csfq.drop_reasons())


def _looks_like_toml(s: str) -> bool:
    # A scenario's text has tables on lines of their own; a one-line string is a path,
    # whatever it holds ("runs/a=b.toml").
    return "\n" in s


def _scenario_error(file: str, field: str, message: str) -> ScenarioError:
    """A :class:`ScenarioError` about a field that no line of a file holds (an override, a
    run option): ``line`` and ``column`` 0."""
    e = ScenarioError(f"{file}: field `{field}`: {message}")
    e.file, e.line, e.column, e.field, e.message = file, 0, 0, field, message
    return e


def _set(doc: Dict[str, Any], key: str, value: Any, name: str = "<scenario>") -> None:
    """Sets a field by its dotted path; list items by index (``link.0.rate_mbps``). A path
    the scenario does not have raises :class:`ScenarioError` naming the override."""
    parts = key.replace("__", ".").split(".")
    node: Any = doc
    for i, part in enumerate(parts):
        where = ".".join(parts[: i + 1])
        last = i == len(parts) - 1
        if isinstance(node, list):
            try:
                index = int(part)
                node[index]
            except (ValueError, IndexError):
                raise _scenario_error(
                    name, key, f"override `{key}`: `{where}` is not an item of a list of {len(node)}"
                ) from None
            if last:
                node[index] = value
            else:
                node = node[index]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            elif part not in node:
                raise _scenario_error(name, key, f"override `{key}`: the scenario has no `{where}`")
            else:
                node = node[part]
        else:
            raise _scenario_error(
                name, key, f"override `{key}`: `{'.'.join(parts[:i])}` is a value, not a table"
            )


def load_scenario(scenario: Scenario, **overrides: Any) -> tuple:
    """Resolves a scenario to ``(toml_text, name)``: a path is read, a dict serialized, and
    overrides applied by dotted path. Errors in the result name ``name`` and its lines."""
    if isinstance(scenario, Mapping):
        doc = copy.deepcopy(dict(scenario))
        name = "<dict>"
        text = None
    elif isinstance(scenario, os.PathLike) or (isinstance(scenario, str) and not _looks_like_toml(scenario)):
        name = str(scenario)
        text, doc = _csfq.read_scenario(name), None
    elif isinstance(scenario, str):
        text, name, doc = scenario, "<string>", None
    else:
        raise TypeError(f"a scenario is a path, TOML text or a dict, not {type(scenario).__name__}")
    if not overrides and text is not None:
        return text, name
    if doc is None:
        # tomlkit keeps the file's layout: an error in the result is on the line it is on
        # in the file, an overridden value where the file has it.
        try:
            doc = tomlkit.parse(text)
        except tomlkit.exceptions.ParseError:
            # Let the simulator's parser report it, with the file, line and field.
            return text, name
        for k, v in overrides.items():
            _set(doc, k, v, name)
        return tomlkit.dumps(doc), f"{name} (with overrides)"
    for k, v in overrides.items():
        _set(doc, k, v, name)
    return tomli_w.dumps(doc), name


_FLOW_COLUMNS = [
    "flow", "kind", "src", "dst", "weight", "offered_mbps", "max_min_mbps", "per_hop_mbps",
    "reference_mbps", "throughput_mbps", "sent_pkts", "delivered_pkts", "dropped_pkts",
    "ack_drops", "retransmits", "timeouts", "size_pkts", "fct_s", "delay_pkts",
    *(f"{what}_{stat}_ms" for what in ("delay", "queueing") for stat in ("mean", "p50", "p95", "p99", "max")),
    "jitter_ms",
]
_DELAY_COLUMNS = [c for c in _FLOW_COLUMNS if c.endswith("_ms")]
_LINK_COLUMNS = [
    "from", "to", "discipline", "rate_mbps", "tx_pkts", "utilization", "dropped_pkts",
    "mean_queue_bytes", "peak_queue_pkts",
    *(f"sojourn_{stat}_ms" for stat in ("mean", "p50", "p95", "p99", "max")),
]


def _flows_frame(records: List[Dict[str, Any]]) -> pd.DataFrame:
    rows = []
    for r in records:
        r = dict(r)
        for why, n in r.pop("drops").items():
            r[f"drops_{why}"] = n
        rows.append(r)
    df = pd.DataFrame(rows)
    # Every reason a column, zeros where a run had none: one schema whatever the discipline
    # (a campaign store read as one dataset takes its first file's columns).
    drop_cols = [f"drops_{why}" for why in _csfq.drop_reasons()]
    df = df.reindex(columns=_FLOW_COLUMNS + drop_cols)
    df[drop_cols] = df[drop_cols].fillna(0).astype("int64")
    # Float even when no flow of the run has a value (no packet arrived, no finite
    # transfer): one schema whatever the run.
    df[_DELAY_COLUMNS + ["fct_s", "offered_mbps"]] = df[_DELAY_COLUMNS + ["fct_s", "offered_mbps"]].astype("float64")
    df["size_pkts"] = df["size_pkts"].astype("Int64")
    return df.set_index("flow")


@dataclass
class Result:
    """One run: ``summary`` (dict), ``flows`` (one row per flow, indexed by flow; rates in
    Mbit/s, with the flow's max-min, per-hop and reference allocations; one-way and queueing
    delay in ms, ``delay_*_ms``, ``queueing_*_ms``, ``jitter_ms``), ``links`` (one row per
    router-to-router link direction, with its queue's ``sojourn_*_ms``) and ``series`` (one row per sample: ``time_s`` at
    the end of each sample interval, ``kind`` flow or link, ``id``, ``metric``, ``value``)."""

    summary: Dict[str, Any]
    flows: pd.DataFrame
    links: pd.DataFrame
    series: pd.DataFrame = field(repr=False)

    def throughput(self) -> pd.DataFrame:
        """Each flow's throughput in each sample interval, Mbit/s: rows ``time_s``,
        columns flow."""
        s = self.series[(self.series["kind"] == "flow") & (self.series["metric"] == "throughput_mbps")]
        return s.pivot(index="time_s", columns="id", values="value").rename_axis(columns="flow")

    def _repr_html_(self) -> str:  # pragma: no cover - notebooks
        s = self.summary
        head = f"<p><b>{s['scenario']}</b>: {s['discipline']}, seed {s['seed']}, {s['duration_s']} s, Jain {s['jain_index']:.4f}</p>"
        return head + self.flows._repr_html_()


def _links_frame(records: List[Dict[str, Any]]) -> pd.DataFrame:
    """One row per router-to-router link direction; the sojourn columns float64 even when
    no packet crossed a link (one schema whatever the run)."""
    links = pd.DataFrame(records).reindex(columns=_LINK_COLUMNS)
    sojourn = [c for c in _LINK_COLUMNS if c.startswith("sojourn_")]
    links[sojourn] = links[sojourn].astype("float64")
    return links


def _sample_time(k: int, dt: float) -> float:
    """The end of sample interval k, s, rounded to the nanosecond the simulator counts in,
    so ``loc[0.3]`` finds it (0.1 * 3 is 0.30000000000000004)."""
    return round((k + 1) * dt, 9)


def _typed(table: pd.DataFrame) -> pd.DataFrame:
    """The printed table's cells with real dtypes: a column whose cells are all numbers
    (or "-" and blanks, read as missing) becomes numeric; others stay text."""
    out = table.copy()
    for c in out.columns:
        cells = out[c].astype(str).str.strip()
        missing = cells.isin(["-", "", "n/a"])
        parsed = pd.to_numeric(cells.where(~missing), errors="coerce")
        if parsed[~missing].notna().all() and (~missing).any():
            out[c] = parsed
    return out


def _series_frame(data: Dict[str, Any], links: pd.DataFrame) -> pd.DataFrame:
    dt = data["summary"]["sample_interval_s"]
    parts = []
    for i, values in enumerate(data["flow_series"]):
        if values:
            parts.append(
                pd.DataFrame(
                    {
                        "time_s": [_sample_time(k, dt) for k in range(len(values))],
                        "kind": "flow",
                        "id": str(i),
                        "metric": "throughput_mbps",
                        "value": values,
                    }
                )
            )
    for (_, link), series in zip(links.iterrows(), data["link_series"]):
        lid = f"{link['from']}->{link['to']}"
        for metric, values in series.items():
            if values:
                parts.append(
                    pd.DataFrame(
                        {
                            "time_s": [_sample_time(k, dt) for k in range(len(values))],
                            "kind": "link",
                            "id": lid,
                            "metric": metric,
                            "value": [float(v) for v in values],
                        }
                    )
                )
    if not parts:
        return pd.DataFrame(columns=["time_s", "kind", "id", "metric", "value"])
    return pd.concat(parts, ignore_index=True)


def run(
    scenario: Scenario,
    discipline: Optional[str] = None,
    seed: Optional[int] = None,
    **overrides: Any,
) -> Result:
    """Runs a scenario in-process and returns its :class:`Result`.

    ``discipline`` runs every link with that discipline (see :func:`disciplines`); ``seed``
    replaces the scenario's. A scenario that does not load raises :class:`ScenarioError`
    (``file``, ``line``, ``column``, ``field``, ``message``)."""
    text, name = load_scenario(scenario, **overrides)
    if seed is not None:
        try:
            seed = _seed(seed)
        except (TypeError, ValueError) as e:
            raise _scenario_error(name, "seed", str(e)) from None
    data = json.loads(_csfq.run(text, name, discipline, seed))
    flows = _flows_frame(data["flows"])
    links = _links_frame(data["links"])
    series = _series_frame(data, links)
    flow_ids = series["kind"] == "flow"
    series["id"] = series["id"].astype(object)
    series.loc[flow_ids, "id"] = series.loc[flow_ids, "id"].astype(int)
    return Result(summary=data["summary"], flows=flows, links=links, series=series)


def maxmin(scenario: Scenario, **overrides: Any) -> pd.DataFrame:
    """The exact allocations of a scenario's flows, Mbit/s: end-to-end max-min (TCP flows
    greedy), per hop (where it settles), and the reference each flow is judged by."""
    text, name = load_scenario(scenario, **overrides)
    return pd.DataFrame(json.loads(_csfq.maxmin(text, name))).set_index("flow")


def experiments() -> pd.DataFrame:
    """The published experiments ``reproduce`` runs: id, setup, what the paper reports,
    the disciplines compared and the number of runs."""
    return pd.DataFrame(json.loads(_csfq.experiments())).set_index("id")


_VERDICT_COLUMNS = [
    "what",
    "ours",
    "published",
    "tolerance",
    "lo",
    "hi",
    "outcome",
    "source",
    "note",
    "seeds_in_band",
    "seeds_judged",
    "per_seed",
]


@dataclass
class Reproduction:
    """One experiment reproduced: ``table`` (our numbers beside the paper's, as the
    ``csfq reproduce`` table), ``verdicts`` (one row per check: our value, the paper's,
    the tolerance, the outcome), ``notes`` and ``numbers`` (the values behind the table)."""

    id: str
    setup: str
    published: str
    table: pd.DataFrame
    verdicts: pd.DataFrame
    notes: List[str]
    numbers: Any = field(repr=False)
    seeds: List[int] = field(default_factory=list)


def _seed(s: Any) -> int:
    if isinstance(s, bool):
        raise TypeError(f"a seed is a whole number, not {s!r}")
    try:
        s = operator.index(s)  # int, numpy integers; not floats or strings
    except TypeError:
        raise TypeError(f"a seed is a whole number, not {s!r}") from None
    if not 0 <= s < 2**64:
        raise ValueError(f"seed {s} is outside 0 .. 2**64 - 1")
    return s


def reproduce(id: str, seed: Optional[int] = None, seeds: Optional[Sequence[int]] = None) -> Reproduction:
    """Runs a published experiment (its runs on all cores, at every seed) and judges it
    against the paper's numbers, as ``csfq reproduce ID`` does: each verdict is the mean
    over ``seeds`` (default 1-8; ``seed=S`` for one), with each seed's number in
    ``verdicts.per_seed`` and how many fall in the band in ``seeds_in_band``. The table is
    the first seed's."""
    if seed is not None and seeds is not None:
        raise ValueError("give seed or seeds, not both")
    if seed is not None:
        chosen = [_seed(seed)]
    elif seeds is not None:
        if isinstance(seeds, (str, bytes)):
            raise TypeError("seeds is a sequence of whole numbers, not a string")
        chosen = [_seed(s) for s in seeds]
        if not chosen or any(b <= a for a, b in zip(chosen, chosen[1:])):
            raise ValueError("seeds must be non-empty, increasing, each once")
        if len(chosen) > 1000:
            raise ValueError(f"{len(chosen)} seeds; at most 1000")
    else:
        chosen = None
    data = json.loads(_csfq.reproduce(id, chosen))
    return Reproduction(
        id=data["id"],
        setup=data["setup"],
        published=data["published"],
        table=_typed(pd.DataFrame(data["rows"], columns=data["header"])),
        verdicts=pd.DataFrame(data["checks"]).reindex(columns=_VERDICT_COLUMNS),
        notes=data["notes"],
        numbers=data["numbers"],
        seeds=data["seeds"],
    )


from .sweep import Campaign, sweep  # noqa: E402  (needs the definitions above)
