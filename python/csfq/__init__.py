"""csfq: core-stateless fair queueing, the simulator in Python.

The simulation runs in-process (Rust, with the interpreter released: threads run in
parallel) and its results come back as pandas DataFrames::

    import csfq
    r = csfq.run("scenarios/csfq-fig3b.toml", discipline="drr", seed=2)
    r.flows[["kind", "reference_mbps", "throughput_mbps"]]
    r.plot()

Scenarios are the files of the ``csfq`` command (a path), their text, or a dict of the
same fields; ``**overrides`` change any field by its dotted path
(``**{"link.0.rate_mbps": 20}``, or ``link__0__rate_mbps=20`` as a keyword).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

import pandas as pd

from . import _csfq
from ._core import (
    Scenario,
    _delays_frame,
    _flows_frame,
    _links_frame,
    _scenario_error,
    _seed,
    _series_frame,
    load_scenario,
)
from ._csfq import ScenarioError, SimulationError

__version__: str = _csfq.__version__
#: The commit the simulator module was built from (", modified" when tracked files differed).
__build__: str = _csfq.__build__

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
    "read_store",
]

def disciplines() -> List[str]:
    """The discipline names a scenario (and ``discipline=``) takes."""
    return list(_csfq.disciplines())


def drop_reasons() -> List[str]:
    """Every reason a packet is dropped for: the ``drops_*`` columns of ``Result.flows``."""
    return list(_csfq.drop_reasons())


@dataclass
class Result:
    """One run: ``summary`` (dict), ``flows`` (one row per flow, indexed by flow; rates in
    Mbit/s, with the flow's max-min, per-hop and reference allocations; one-way and queueing
    delay in ms, ``delay_*_ms``, ``queueing_*_ms``, ``jitter_ms``), ``links`` (one row per
    router-to-router link direction some flow crosses, with its queue's ``sojourn_*_ms``;
    ``summary["unused_links"]`` counts the others) and ``series`` (one row per sample: ``time_s`` at
    the end of each sample interval, ``kind`` flow or link, ``id``, ``metric``, ``value``);
    :meth:`delays` gives the delay histograms."""

    summary: Dict[str, Any]
    flows: pd.DataFrame
    links: pd.DataFrame
    series: pd.DataFrame = field(repr=False)
    histograms: pd.DataFrame = field(repr=False, default_factory=lambda: _delays_frame([]))

    def delays(self) -> pd.DataFrame:
        """The delay histograms the percentiles come from, one row per bucket with packets:
        ``kind`` flow (``what`` queueing: each delivered data packet's queueing delay; add the
        flow's ``delay_mean_ms - queueing_mean_ms`` for one-way) or link (``what`` sojourn:
        each packet's time in that queue), ``id`` (flow number, or ``"A->B"``), the bucket
        ``[low_ms, high_ms)``, ``count``, and ``relative_error`` (the scenario's
        ``delay_precision`` as met: a percentile taken at a bucket's middle is within it).
        Runs of one precision share bucket edges, so seeds merge exactly:
        ``pd.concat(r.delays() for r in runs).groupby(["kind", "id", "what", "low_ms",
        "high_ms"])["count"].sum()``."""
        return self.histograms

    def throughput(self) -> pd.DataFrame:
        """Each flow's throughput in each sample interval, Mbit/s: rows ``time_s``,
        columns flow."""
        s = self.series[(self.series["kind"] == "flow") & (self.series["metric"] == "throughput_mbps")]
        return s.pivot(index="time_s", columns="id", values="value").rename_axis(columns="flow")

    def plot(self, ax: Any = None) -> Any:
        """Each flow's throughput over time (needs matplotlib), on ``ax`` or a new figure's:
        the flows that do not react to loss (udp, onoff) drawn one by one and named, the
        others thin and grey under one legend entry per kind, each distinct reference share
        dashed; axes labeled, the legend beside the plot whatever the number of flows.
        Returns the axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(9, 4.5))
        t = self.throughput()
        kinds = self.flows["kind"]
        named = set()
        for flow in t.columns:
            kind = kinds.loc[flow]
            if kind in ("udp", "onoff"):
                ax.plot(t.index, t[flow], linewidth=2, label=f"{kind} flow {flow}")
            else:
                label = None if kind in named else f"{kind} flows ({(kinds == kind).sum()})"
                named.add(kind)
                ax.plot(t.index, t[flow], color="0.6", linewidth=0.7, alpha=0.8, label=label)
        for share in sorted(set(self.flows["reference_mbps"].dropna().round(6))):
            ax.axhline(share, color="black", linestyle="--", linewidth=1)
        if len(self.flows["reference_mbps"].dropna()):
            ax.plot([], [], color="black", linestyle="--", linewidth=1, label="reference share")
        ax.set_xlabel("time, s")
        ax.set_ylabel("throughput, Mbit/s")
        s = self.summary
        ax.set_title(f"{s['scenario']} ({s['discipline']}, seed {s['seed']})")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
        return ax

    def _repr_html_(self) -> str:  # pragma: no cover - notebooks
        s = self.summary
        head = f"<p><b>{s['scenario']}</b>: {s['discipline']}, seed {s['seed']}, {s['duration_s']} s, Jain {s['jain_index']:.4f}</p>"
        return head + self.flows._repr_html_()


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


def run(
    scenario: Scenario,
    discipline: Optional[str] = None,
    seed: Optional[int] = None,
    long: bool = False,
    **overrides: Any,
) -> Result:
    """Runs a scenario in-process and returns its :class:`Result`.

    ``discipline`` runs every link with that discipline (see :func:`disciplines`); ``seed``
    replaces the scenario's. A scenario that does not load raises :class:`ScenarioError`
    (``file``, ``line``, ``column``, ``field``, ``message``). A run estimated to take more
    than a day (from each flow's share, packet size and duration, as ``csfq run`` does)
    raises :class:`SimulationError` before it starts, unless ``long=True``."""
    # A flag, not a truth value: run(long="False") must not enable a week-long run.
    if not isinstance(long, bool):
        raise TypeError(f"long is True or False, not {long!r}")
    text, name = load_scenario(scenario, **overrides)
    if seed is not None:
        try:
            seed = _seed(seed)
        except (TypeError, ValueError) as e:
            raise _scenario_error(name, "seed", str(e)) from None
    data = json.loads(_csfq.run(text, name, discipline, seed, long))
    flows = _flows_frame(data["flows"])
    links = _links_frame(data["links"])
    series = _series_frame(data, links)
    flow_ids = series["kind"] == "flow"
    series["id"] = series["id"].astype(object)
    series.loc[flow_ids, "id"] = series.loc[flow_ids, "id"].astype(int)
    return Result(
        summary=data["summary"], flows=flows, links=links, series=series, histograms=_delays_frame(data["delays"])
    )


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
    "kind",
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


from .sweep import Campaign, read_store, sweep  # noqa: E402  (needs the definitions above)
