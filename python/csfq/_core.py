"""What the public functions and the campaign store share: reading a scenario (a path,
its text, or a dict, with overrides), and the simulator's JSON as typed DataFrames."""

from __future__ import annotations

import copy
import operator
import os
from typing import Any, Dict, List, Mapping, Union

import pandas as pd
import tomli_w
import tomlkit
import tomlkit.exceptions

from . import _csfq
from ._csfq import ScenarioError

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]

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
    for k, v in overrides.items():
        # TOML has no null: a None would fail in the serializer, far from the override.
        if v is None:
            raise _scenario_error(name, k, f"override `{k}`: None is not a value (TOML has none)")
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


def _links_frame(records: List[Dict[str, Any]]) -> pd.DataFrame:
    """One row per router-to-router link direction; the sojourn columns float64 even when
    no packet crossed a link (one schema whatever the run)."""
    links = pd.DataFrame(records).reindex(columns=_LINK_COLUMNS)
    sojourn = [c for c in _LINK_COLUMNS if c.startswith("sojourn_")]
    links[sojourn] = links[sojourn].astype("float64")
    return links


_DELAY_HIST_COLUMNS = ["kind", "id", "what", "low_ms", "high_ms", "count", "relative_error"]


def _delays_frame(records: List[Dict[str, Any]]) -> pd.DataFrame:
    """One row per histogram bucket with packets (``Result.delays``); one schema even when
    no packet was delivered."""
    df = pd.DataFrame(records).reindex(columns=_DELAY_HIST_COLUMNS)
    df = df.astype({"low_ms": "float64", "high_ms": "float64", "count": "int64", "relative_error": "float64"})
    df["id"] = df["id"].astype(object)
    return df


def _sample_time(k: int, dt: float) -> float:
    """The end of sample interval k, s, rounded to the nanosecond the simulator counts in,
    so ``loc[0.3]`` finds it (0.1 * 3 is 0.30000000000000004)."""
    return round((k + 1) * dt, 9)


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
