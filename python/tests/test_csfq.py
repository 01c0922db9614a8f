"""The Python package against independent references: hand-computed max-min allocations,
the `csfq` command's own output for the same run, and the scenario errors the files
contain."""

import json
import os
import pathlib
import re
import subprocess
import threading

import numpy as np
import pandas as pd
import pytest

import csfq

REPO = pathlib.Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"


def csfq_bin() -> str:
    """The `csfq` command built from this tree: CSFQ_BIN (scripts/test.sh sets it), else the
    newer of target/release/csfq and target/debug/csfq."""
    given = os.environ.get("CSFQ_BIN")
    if given:
        if not pathlib.Path(given).is_file():
            pytest.fail(f"CSFQ_BIN={given} is not a file")
        return given
    built = [p for p in (REPO / "target/release/csfq", REPO / "target/debug/csfq") if p.is_file()]
    if not built:
        pytest.fail("no csfq binary: build it with `cargo build --release` or set CSFQ_BIN")
    return str(max(built, key=lambda p: p.stat().st_mtime))


def three_udp(discipline="drr", rate=6.0):
    """Three UDP flows of `rate` Mbit/s over one 10 Mbit/s link."""
    return {
        "name": "three-udp",
        "duration_s": 5.0,
        "discipline": discipline,
        "routers": ["a", "b"],
        "link": [{"between": ["a", "b"], "rate_mbps": 10.0}],
        "flow": [{"kind": "udp", "from": "a", "to": "b", "rate_mbps": rate, "count": 3}],
    }


def test_a_dict_scenario_reaches_its_hand_computed_max_min():
    r = csfq.run(three_udp())
    assert list(r.flows.index) == [0, 1, 2]
    # Hand-computed: 10 Mbit/s shared by three flows that each want 6: 10/3 each.
    assert r.flows["max_min_mbps"].tolist() == pytest.approx([10 / 3] * 3, rel=1e-9)
    # DRR is fair to within a few percent over 5 s (packet granularity, start-up).
    assert r.flows["throughput_mbps"].tolist() == pytest.approx([10 / 3] * 3, rel=0.05)
    assert r.summary["discipline"] == "drr"
    assert r.summary["jain_index"] > 0.999
    link = r.links.iloc[0]
    assert (link["from"], link["to"], link["rate_mbps"]) == ("a", "b", 10.0)
    assert 0.97 < link["utilization"] <= 1.0


def test_flows_equal_the_csfq_command_on_the_same_run(tmp_path):
    path = SCENARIOS / "csfq-fig3b.toml"
    r = csfq.run(path, discipline="csfq", seed=3)
    subprocess.run(
        [csfq_bin(), "run", str(path), "--discipline", "csfq", "--seed", "3", "--out", str(tmp_path)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    cli = json.loads((tmp_path / "summary.json").read_text())
    assert r.summary["events"] == cli["events"]
    assert r.summary["jain_index"] == cli["jain_index"]
    ours = r.flows
    for f in cli["flows"]:
        row = ours.loc[f["flow"]]
        assert row["throughput_mbps"] == f["throughput_mbps"]
        assert row["delivered_pkts"] == f["delivered_pkts"]
        assert row["dropped_pkts"] == f["dropped_pkts"]
        for why, n in f["drops"]:
            assert row[f"drops_{why}"] == n
    # The series: one row per flow and sample, the CLI's numbers.
    tp = r.throughput()
    assert tp.shape == (len(cli["flows"][0]["series_mbps"]), len(cli["flows"]))
    # Sample times are exact decimals: the third sample ends at 0.3 s.
    assert tp.loc[0.3].tolist() == [f["series_mbps"][2] for f in cli["flows"]]
    assert tp[0].tolist() == cli["flows"][0]["series_mbps"]
    dt = cli["sample_interval_s"]
    assert tp.index[0] == pytest.approx(dt) and tp.index[-1] == pytest.approx(dt * len(tp))
    q = r.series[(r.series["kind"] == "link") & (r.series["metric"] == "queue_bytes")]
    assert q[q["id"] == "r1->r2"]["value"].tolist() == [float(v) for v in cli["links"][0]["queue_bytes"]]
    # Delay: the CLI's per-flow statistics, column by column, and the link's sojourn.
    for f in cli["flows"]:
        row, d = ours.loc[f["flow"]], f["delay"]
        assert row["delay_pkts"] == d["packets"]
        assert row["jitter_ms"] == d["jitter_ms"]
        for what, key in [("delay", "one_way_ms"), ("queueing", "queueing_ms")]:
            for stat in ["mean", "p50", "p95", "p99", "max"]:
                assert row[f"{what}_{stat}_ms"] == d[key][stat]
    link = r.links.iloc[0]
    assert link["sojourn_p99_ms"] == cli["links"][0]["sojourn_ms"]["p99"]
    # The histograms: the command's delays.csv is the delays() frame, row for row, and
    # summary.json holds the links'.
    d = r.delays()
    csv = pd.read_csv(tmp_path / "delays.csv")
    assert len(csv) == len(d)
    assert csv["kind"].tolist() == d["kind"].tolist()
    assert csv["id"].astype(str).tolist() == d["id"].astype(str).tolist()
    assert csv["count"].tolist() == d["count"].tolist()
    assert ((csv["low_ns"] / 1e6 - d["low_ms"]).abs() < 1e-9).all()
    assert ((csv["high_ns"] / 1e6 - d["high_ms"]).abs() < 1e-9).all()
    assert (csv["relative_error"] == d["relative_error"]).all()
    rows = d[(d["kind"] == "link") & (d["id"] == "r1->r2")]
    assert rows["count"].tolist() == [b[2] for b in cli["links"][0]["sojourn_histogram"]["buckets"]]


def test_delay_columns_are_floats_even_when_nothing_arrives():
    # A flow that starts too late to deliver anything: its delay cells are NaN, and the
    # columns keep their dtype (a campaign store's schema must not depend on the run).
    sc = three_udp("fifo")
    sc["duration_s"] = 0.001
    r = csfq.run(sc)
    assert (r.flows["delay_pkts"] == 0).all()
    assert r.flows["delay_pkts"].dtype == np.int64
    for c in [c for c in r.flows.columns if c.endswith("_ms")]:
        assert r.flows[c].dtype == np.float64, c
        assert r.flows[c].isna().all(), c
    for c in [c for c in r.links.columns if c.startswith("sojourn_")]:
        assert r.links[c].dtype == np.float64, c


def test_delay_histograms_hold_every_packet_and_give_the_percentiles():
    # Flows' queueing histograms count each delivered packet once, links' each packet the
    # link sent; the p50 the flows frame gives is the middle of the bucket where half the
    # packets are reached (whole nanoseconds); an empty run has an empty frame with the
    # same columns.
    r = csfq.run(SCENARIOS / "csfq-fig3b.toml", duration_s=2.0)
    d = r.delays()
    assert list(d.columns) == ["kind", "id", "what", "low_ms", "high_ms", "count", "relative_error"]
    # Links at delay_precision's default 0.01 (met as 2^-7), flows at twice it (2^-6).
    assert (d[d["kind"] == "link"]["relative_error"] == 0.0078125).all()
    assert (d[d["kind"] == "flow"]["relative_error"] == 0.015625).all()
    per_flow = d[d["kind"] == "flow"].groupby("id")["count"].sum()
    pd.testing.assert_series_equal(
        per_flow.sort_index(), r.flows["delay_pkts"][r.flows["delay_pkts"] > 0].sort_index(), check_names=False
    )
    links = d[d["kind"] == "link"].groupby("id")["count"].sum()
    for _, l in r.links.iterrows():
        assert links[f"{l['from']}->{l['to']}"] == l["tx_pkts"]
    for flow, h in d[d["kind"] == "flow"].groupby("id"):
        h = h.sort_values("low_ms")
        reached = h["count"].cumsum() >= np.ceil(0.5 * h["count"].sum())
        b = h[reached].iloc[0]
        lo, hi = round(b["low_ms"] * 1e6), round(b["high_ms"] * 1e6)
        mid = (lo + (hi - lo) // 2) / 1e6
        assert r.flows.loc[flow, "queueing_p50_ms"] == pytest.approx(min(mid, r.flows.loc[flow, "queueing_max_ms"]), abs=1e-9)
    empty = three_udp("fifo")
    empty["duration_s"] = 0.001
    e = csfq.run(empty).delays()
    assert list(e.columns) == list(d.columns) and len(e[e["kind"] == "flow"]) == 0
    # Two seeds merge exactly: their buckets share edges.
    r2 = csfq.run(SCENARIOS / "csfq-fig3b.toml", duration_s=2.0, seed=2)
    both = pd.concat([d, r2.delays()]).groupby(["kind", "id", "what", "low_ms", "high_ms"])["count"].sum()
    assert both.sum() == d["count"].sum() + r2.delays()["count"].sum()
    assert len(both) < len(d) + len(r2.delays())


def test_delay_precision_is_a_scenario_option():
    coarse = csfq.run(SCENARIOS / "csfq-fig3b.toml", duration_s=2.0, delay_precision=0.25).delays()
    fine = csfq.run(SCENARIOS / "csfq-fig3b.toml", duration_s=2.0, delay_precision=0.001).delays()
    assert (coarse["relative_error"] == 0.25).all()
    assert (fine[fine["kind"] == "link"]["relative_error"] == 2.0**-10).all()
    assert (fine[fine["kind"] == "flow"]["relative_error"] == 2.0**-9).all()
    assert len(fine) > len(coarse)
    assert coarse["count"].sum() == fine["count"].sum()
    with pytest.raises(csfq.ScenarioError) as e:
        csfq.run(SCENARIOS / "csfq-fig3b.toml", delay_precision=0.5)
    assert e.value.field == "delay_precision"


def test_runs_are_deterministic_and_seeds_matter():
    a = csfq.run(SCENARIOS / "csfq-fig3b.toml", seed=5)
    b = csfq.run(SCENARIOS / "csfq-fig3b.toml", seed=5)
    c = csfq.run(SCENARIOS / "csfq-fig3b.toml", seed=6)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.series, b.series)
    assert not a.flows["throughput_mbps"].equals(c.flows["throughput_mbps"])


def test_threads_give_the_sequential_results():
    seeds = [1, 2, 3, 4]
    alone = {s: csfq.run(three_udp("csfq"), seed=s).flows for s in seeds}
    together = {}

    def one(s):
        together[s] = csfq.run(three_udp("csfq"), seed=s).flows

    threads = [threading.Thread(target=one, args=(s,)) for s in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in seeds:
        pd.testing.assert_frame_equal(alone[s], together[s])


def test_overrides_by_dotted_path_and_keyword():
    r = csfq.run(SCENARIOS / "csfq-fig3b.toml", duration_s=2.0, **{"link.0.rate_mbps": 20.0})
    assert r.summary["duration_s"] == 2.0
    assert r.links.iloc[0]["rate_mbps"] == 20.0
    r = csfq.run(three_udp(), flow__0__rate_mbps=1.0)
    # 1 Mbit/s each, 3 Mbit/s in all: under capacity, every flow gets what it sends.
    assert r.flows["max_min_mbps"].tolist() == pytest.approx([1.0] * 3)
    with pytest.raises(csfq.ScenarioError, match="the scenario has no `nosuch`") as e:
        csfq.run(three_udp(), **{"nosuch.rate": 1})
    assert e.value.field == "nosuch.rate"
    with pytest.raises(csfq.ScenarioError, match="not an item of a list of 1") as e:
        csfq.run(three_udp(), **{"link.3.rate_mbps": 1})
    assert (e.value.field, e.value.line) == ("link.3.rate_mbps", 0)
    for bad in [-1, 2**64, 1.5, "3"]:
        with pytest.raises(csfq.ScenarioError) as e:
            csfq.run(three_udp(), seed=bad)
        assert e.value.field == "seed", bad


def test_hostile_arguments_are_clear_errors(tmp_path):
    # A string is not a flag: "False" used to enable a long run.
    with pytest.raises(TypeError, match="long is True or False"):
        csfq.run(three_udp(), long="False")
    # None overrides nothing: a ScenarioError naming the field, not the serializer's error.
    with pytest.raises(csfq.ScenarioError, match="None is not a value") as e:
        csfq.run(SCENARIOS / "csfq-fig3b.toml", duration_s=None)
    assert e.value.field == "duration_s"
    # A GraphML file nested 20 000 deep used to overflow the stack and kill the
    # interpreter: an error at the element that goes too deep.
    n = 20000
    (tmp_path / "deep.graphml").write_text("<graphml>" + "<a>" * n + "</a>" * n + "</graphml>")
    scenario = tmp_path / "deep.toml"
    scenario.write_text(
        'name = "deep"\nduration_s = 1.0\ndiscipline = "fifo"\n[graphml]\nfile = "deep.graphml"\n'
        '[[flow]]\nkind = "udp"\nfrom = "a"\nto = "b"\nrate_mbps = 1\n'
    )
    with pytest.raises(csfq.ScenarioError, match="nesting too deep"):
        csfq.run(scenario)


def test_an_overridden_file_keeps_its_lines(tmp_path):
    # An error in a file run with overrides is on the line the file has it on (the text
    # used to be written anew, and the line moved).
    text = (SCENARIOS / "csfq-fig3b.toml").read_text()
    lines = text.splitlines()
    at = next(i for i, l in enumerate(lines) if l.startswith("rate_mbps"))
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace(lines[at], "rate_mbps = -3", 1))
    with pytest.raises(csfq.ScenarioError) as e:
        csfq.run(bad, duration_s=1.0)
    assert e.value.field == "rate_mbps"
    with pytest.raises(csfq.ScenarioError) as plain:
        csfq.run(bad)
    assert e.value.line == plain.value.line > 0


def test_errors_cross_processes():
    # Exceptions pickle (a process pool or Dask sends them back to the caller) with their
    # fields.
    import pickle

    with pytest.raises(csfq.ScenarioError) as e:
        csfq.run(three_udp(), **{"link.3.rate_mbps": 1})
    back = pickle.loads(pickle.dumps(e.value))
    assert type(back) is csfq.ScenarioError
    assert (back.field, back.message, str(back)) == (e.value.field, e.value.message, str(e.value))
    with pytest.raises(csfq.ScenarioError) as e:
        csfq.run("name = 1\nrouters = [\n")
    back = pickle.loads(pickle.dumps(e.value))
    assert (back.file, back.line, back.column) == (e.value.file, e.value.line, e.value.column)
    with pytest.raises(csfq.SimulationError) as s:
        csfq.reproduce("nosuch")
    assert str(pickle.loads(pickle.dumps(s.value))) == str(s.value)


def test_maxmin_of_a_parking_lot_is_the_hand_computed_one():
    # Flow 0 crosses both links; flow 1 only a-b (10 Mbit/s), flow 2 only b-c (4 Mbit/s):
    # b-c is the bottleneck of 0 and 2 (2 each), and flow 1 takes the rest of a-b (8).
    s = {
        "name": "parking-lot",
        "duration_s": 1.0,
        "discipline": "fifo",
        "routers": ["a", "b", "c"],
        "link": [
            {"between": ["a", "b"], "rate_mbps": 10.0},
            {"between": ["b", "c"], "rate_mbps": 4.0},
        ],
        "flow": [
            {"kind": "tcp", "from": "a", "to": "c"},
            {"kind": "tcp", "from": "a", "to": "b"},
            {"kind": "tcp", "from": "b", "to": "c"},
        ],
    }
    m = csfq.maxmin(s)
    assert m["max_min_mbps"].tolist() == pytest.approx([2.0, 8.0, 2.0])


def test_scenario_errors_carry_file_line_column_and_field(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text((SCENARIOS / "csfq-fig3b.toml").read_text().replace("rate_mbps = 10", "rate_mbps = -10", 1))
    line = next(i + 1 for i, l in enumerate(bad.read_text().splitlines()) if "rate_mbps = -10" in l)
    with pytest.raises(csfq.ScenarioError) as e:
        csfq.run(bad)
    assert e.value.file == str(bad)
    assert e.value.line == line
    assert e.value.column > 0
    assert e.value.field == "rate_mbps"
    assert f"{bad}:{line}:" in str(e.value)
    # A missing required field, named.
    s = three_udp()
    del s["discipline"]
    with pytest.raises(csfq.ScenarioError) as e:
        csfq.run(s)
    assert e.value.field == "discipline" and e.value.file == "<dict>"
    # The whole file: unreadable, or not text.
    with pytest.raises(csfq.ScenarioError) as e:
        csfq.run(tmp_path / "missing.toml")
    assert e.value.line == 0 and "cannot read" in e.value.message
    (tmp_path / "bin.toml").write_bytes(b'name = "x"\n\xff\xfe')
    with pytest.raises(csfq.ScenarioError) as e:
        csfq.run(tmp_path / "bin.toml")
    assert (e.value.line, e.value.column) == (2, 1)
    # Errors are exceptions of the usual kinds too.
    assert issubclass(csfq.ScenarioError, ValueError)
    with pytest.raises(ValueError, match="unknown discipline `nosuch`: expected one of"):
        csfq.run(three_udp(), discipline="nosuch")
    # A network without a route is a scenario error at the flow's table.
    s = three_udp()
    s["routers"] = ["a", "b", "c"]
    s["flow"][0]["to"] = "c"
    with pytest.raises(csfq.ScenarioError, match="no route"):
        csfq.run(s)


def test_experiments_are_the_commands_list():
    e = csfq.experiments()
    listed = subprocess.run([csfq_bin(), "reproduce", "--list"], check=True, capture_output=True, text=True).stdout
    # The table's first cell on each row (wrapped lines leave it empty).
    ids = {m.group(1) for m in re.finditer(r"^│ ([a-z0-9]+(?:-[a-z0-9]+)+) ", listed, re.M)}
    assert set(e.index) == ids
    assert "csfq-fig3a" in e.index and e.loc["csfq-fig3a", "runs"] > 0
    assert "drr" in e.loc["csfq-fig3a", "disciplines"]


def test_reproduce_gives_the_commands_verdicts(tmp_path):
    rep = csfq.reproduce("csfq-fig3b")
    subprocess.run(
        [csfq_bin(), "reproduce", "csfq-fig3b", "--out", str(tmp_path)], check=True, stdout=subprocess.DEVNULL
    )
    cli = json.loads((tmp_path / "summary.json").read_text())
    assert rep.id == "csfq-fig3b"
    assert len(rep.table) > 0 and list(rep.table.columns)[0] != 0
    assert len(rep.verdicts) == len(cli["verdicts"]) > 0
    assert rep.verdicts["outcome"].tolist() == [c["outcome"] for c in cli["verdicts"]]
    assert rep.verdicts["ours"].tolist() == [c["ours"] for c in cli["verdicts"]]
    assert list(rep.verdicts.columns[:4]) == ["what", "ours", "published", "tolerance"]
    # The table's numbers are numbers: the results.csv the command writes, cell by cell.
    numeric = [c for c in rep.table.columns if pd.api.types.is_numeric_dtype(rep.table[c])]
    assert numeric, rep.table.dtypes
    assert all(rep.table[c].dtype != object for c in numeric)
    with pytest.raises(csfq.SimulationError, match="unknown experiment `nosuch`"):
        csfq.reproduce("nosuch")


def test_reproduce_judges_the_mean_over_seeds():
    rep = csfq.reproduce("csfq-fig3b", seeds=[1, 2, 3])
    assert rep.seeds == [1, 2, 3]
    for _, v in rep.verdicts.iterrows():
        per_seed = v["per_seed"]
        assert len(per_seed) == 3 and v["seeds_judged"] == 3
        assert v["ours"] == pytest.approx(sum(per_seed) / 3)
        lo, hi = v["lo"], v["hi"]
        in_band = sum(1 for x in per_seed if (pd.isna(lo) or x >= lo) and (pd.isna(hi) or x <= hi))
        assert v["seeds_in_band"] == in_band
    # One seed: the verdicts are that seed's own numbers.
    one = csfq.reproduce("csfq-fig3b", seed=np.int64(2))
    assert one.seeds == [2]
    # (A group of alternatives, "the better of FRED-1 and FRED-2", may choose another
    # member at one seed than over three; compare the others.)
    plain = ~rep.verdicts["note"].fillna("").str.startswith("the better here")
    assert one.verdicts["ours"][plain].tolist() == [p[1] for p in rep.verdicts["per_seed"][plain]]
    for bad, err in [({"seeds": "12"}, TypeError), ({"seeds": [1.5]}, TypeError), ({"seeds": [2, 1]}, ValueError),
                     ({"seeds": []}, ValueError), ({"seed": -1}, ValueError), ({"seed": 1, "seeds": [1]}, ValueError),
                     ({"seeds": list(range(1001))}, ValueError), ({"seeds": [1, 1]}, ValueError)]:
        with pytest.raises(err):
            csfq.reproduce("csfq-fig3b", **bad)


def test_disciplines():
    assert {"fifo", "drr", "csfq", "fq_codel"} <= set(csfq.disciplines())


def test_a_run_of_years_is_refused_unless_asked_for():
    # 1 Tbit/s of 1000-byte packets for a million seconds: about 10^14 packets, some 650
    # days of wall time; refused at once (estimated before anything runs), as csfq run does.
    years = {
        "name": "years", "duration_s": 1e6, "discipline": "fifo", "routers": ["a", "b"],
        "link": [{"between": ["a", "b"], "rate_mbps": 1e6}],
        "flow": [{"kind": "udp", "from": "a", "to": "b", "rate_mbps": 1e6}],
    }
    with pytest.raises(csfq.SimulationError, match="(days|years) at .*long=True"):
        csfq.run(years)
    # Short runs are not refused and long=True is accepted.
    short = dict(years, duration_s=0.01)
    assert len(csfq.run(short, long=True).flows) == 1


def test_plot_names_the_udp_labels_its_axes_and_keeps_the_legend_short():
    """csfq-fig3b's 1 UDP and 31 TCPs: the UDP one line of its own, the TCPs one legend
    entry, the reference share dashed; the lines drawn are the throughput() series."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    r = csfq.run(str(REPO / "scenarios/csfq-fig3b.toml"), discipline="csfq", **{"duration_s": 3.0})
    ax = r.plot()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["udp flow 0", "tcp flows (31)", "reference share"], labels
    assert ax.get_ylabel() == "throughput, Mbit/s" and ax.get_xlabel() == "time, s"
    udp = next(line for line in ax.get_lines() if line.get_label() == "udp flow 0")
    assert list(udp.get_ydata()) == list(r.throughput()[0])
