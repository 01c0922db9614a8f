"""Campaigns: every run's stored rows equal a direct run of the same variant, a rerun
computes only what is missing, and a Dask LocalCluster of two worker processes stores the
same bytes as the local thread pool."""

import pathlib
import subprocess
import sys

import pandas as pd
import pytest

import csfq


def base():
    """Three UDP flows of 8 Mbit/s over one link (rate swept)."""
    return {
        "name": "sweep-base",
        "duration_s": 2.0,
        "discipline": "fifo",
        "routers": ["a", "b"],
        "link": [{"between": ["a", "b"], "rate_mbps": 10.0}],
        "flow": [{"kind": "udp", "from": "a", "to": "b", "rate_mbps": 8.0, "count": 3}],
    }


GRID = {"link.0.rate_mbps": [6.0, 12.0], "discipline": ["drr", "csfq"]}


def test_campaign_rows_equal_direct_runs_and_max_min(tmp_path):
    c = csfq.Campaign(base(), GRID, seeds=[1, 2], store=tmp_path / "c")
    df = c.run(progress=False)
    assert len(df) == 2 * 2 * 2 * 3
    assert set(df.columns) >= {"key", "link.0.rate_mbps", "discipline", "seed", "flow", "throughput_mbps"}
    for (rate, d, seed), rows in df.groupby(["link.0.rate_mbps", "discipline", "seed"]):
        direct = csfq.run(base(), discipline=d, seed=seed, **{"link.0.rate_mbps": rate}).flows
        assert rows["throughput_mbps"].tolist() == direct["throughput_mbps"].tolist()
        assert rows["dropped_pkts"].tolist() == direct["dropped_pkts"].tolist()
        # Hand-computed max-min: rate/3 each (every flow wants 8 > rate/3).
        assert rows["max_min_mbps"].tolist() == pytest.approx([rate / 3] * 3)
        if d == "drr":
            assert rows["throughput_mbps"].tolist() == pytest.approx([rate / 3] * 3, rel=0.05)


def test_a_rerun_computes_only_what_is_missing(tmp_path):
    store = tmp_path / "c"
    c = csfq.Campaign(base(), GRID, seeds=[1], store=store)
    first = c.run(progress=False)
    stamps = {p.name: p.stat().st_mtime_ns for p in store.glob("*.parquet")}
    assert len(stamps) == 4 and c.missing() == []
    wider = csfq.Campaign(base(), GRID, seeds=[1, 2], store=store)
    assert len(wider.missing()) == 4
    both = wider.run(progress=False)
    assert {p.name: p.stat().st_mtime_ns for p in store.glob("*.parquet") if p.name in stamps} == stamps
    assert len(list(store.glob("*.parquet"))) == 8
    pd.testing.assert_frame_equal(both[both["seed"] == 1].reset_index(drop=True), first)
    # A changed base scenario is a different run.
    other = base()
    other["duration_s"] = 1.0
    assert len(csfq.Campaign(other, GRID, seeds=[1], store=store).missing()) == 4


def test_dask_local_cluster_stores_the_same_bytes(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    local = csfq.Campaign(base(), GRID, seeds=[1, 2], store=tmp_path / "local")
    a = local.run(progress=False)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    ) as cluster, distributed.Client(cluster) as client:
        remote = csfq.Campaign(base(), GRID, seeds=[1, 2], store=tmp_path / "dask")
        b = remote.run(backend="dask", scheduler=client, progress=False)
        assert len({w["id"] for w in client.scheduler_info()["workers"].values()}) == 2
    pd.testing.assert_frame_equal(a, b)
    for p in (tmp_path / "local").glob("*.parquet"):
        assert p.read_bytes() == (tmp_path / "dask" / p.name).read_bytes(), p.name


def test_to_xarray_and_errors(tmp_path):
    pytest.importorskip("xarray")
    c = csfq.Campaign(base(), GRID, seeds=[1, 2], store=tmp_path / "c")
    c.run(progress=False)
    ds = c.to_xarray()
    assert dict(ds.sizes) == {"link.0.rate_mbps": 2, "discipline": 2, "seed": 2, "flow": 3}
    v = ds["throughput_mbps"].sel({"link.0.rate_mbps": 12.0, "discipline": "drr", "seed": 1})
    assert v.values.tolist() == pytest.approx([4.0] * 3, rel=0.05)
    # Every numeric per-flow column is a variable, with the values results() has.
    df = c.results()
    numeric = {k for k in df.columns if pd.api.types.is_numeric_dtype(df[k]) and df[k].dtype != bool}
    assert set(ds.data_vars) == numeric - {"link.0.rate_mbps", "seed", "flow"}
    assert {"dropped_pkts", "drops_overflow", "delay_p99_ms", "reference_mbps"} <= set(ds.data_vars)
    row = df[(df["link.0.rate_mbps"] == 12.0) & (df["discipline"] == "drr") & (df["seed"] == 1)]
    got = ds["dropped_pkts"].sel({"link.0.rate_mbps": 12.0, "discipline": "drr", "seed": 1})
    assert got.values.tolist() == row["dropped_pkts"].tolist()
    # One variable asked for: it and the reference share, as before.
    assert set(c.to_xarray("throughput_mbps").data_vars) == {"throughput_mbps", "reference_mbps"}
    with pytest.raises(ValueError, match="no numeric column `nosuch`"):
        c.to_xarray("nosuch")
    with pytest.raises(ValueError, match="give seeds as `seeds`"):
        csfq.Campaign(base(), {"seed": [1, 2]})
    with pytest.raises(csfq.ScenarioError, match="the scenario has no `nosuch`"):
        csfq.Campaign(base(), {"nosuch.x": [1]}).runs()
    bad = base()
    bad["link"][0]["rate_mbps"] = -1.0
    with pytest.raises(csfq.ScenarioError):
        csfq.Campaign(bad, {"duration_s": [1.0]}, store=tmp_path / "bad").run(progress=False)
    with pytest.raises(ValueError, match="unknown backend"):
        csfq.Campaign(base(), GRID, store=tmp_path / "c").run(backend="nosuch")


def _cli(args, **env):
    """`python -m csfq sweep ARGS` in a fresh interpreter."""
    import os
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "csfq", "sweep", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )


def test_the_command_line_stores_what_the_campaign_does(tmp_path):
    import tomli_w

    scenario = tmp_path / "base.toml"
    scenario.write_text(tomli_w.dumps(base()))
    args = [str(scenario), "--set", "link.0.rate_mbps=6.0,12.0", "--set", "discipline=drr,csfq",
            "--seeds", "1-2", "--store", str(tmp_path / "cli"), "--quiet", "--csv", str(tmp_path / "rows.csv")]
    r = _cli(args)
    assert r.returncode == 0, r.stderr
    assert "8 runs (2 link.0.rate_mbps x 2 discipline, 2 seeds): 8 computed, 0 already in" in r.stdout
    api = csfq.Campaign(scenario, GRID, seeds=[1, 2], store=tmp_path / "api").run(progress=False)
    # The same keys, and the same bytes in every stored file.
    cli_files = sorted((tmp_path / "cli").glob("*.parquet"))
    assert [p.name for p in cli_files] == sorted(p.name for p in (tmp_path / "api").glob("*.parquet"))
    for p in cli_files:
        assert p.read_bytes() == (tmp_path / "api" / p.name).read_bytes()
    rows = pd.read_csv(tmp_path / "rows.csv")
    assert len(rows) == len(api) == 24
    # The summary: one line per grid point; DRR's Jain's index over its 3 flows is ~1.
    lines = [l.split() for l in r.stdout.splitlines() if l.split()[:1] in (["6.0"], ["12.0"], ["csfq"], ["drr"])]
    assert len(lines) == 4, r.stdout
    jain = api.groupby(["link.0.rate_mbps", "discipline", "seed"])["jain_index"].first()
    assert jain.loc[(6.0, "drr")].mean() > 0.99
    # A rerun computes nothing; nor does one that writes the rates as integers (the key
    # hashes the scenario as the simulator reads it).
    again = _cli(args)
    assert "8 runs (2 link.0.rate_mbps x 2 discipline, 2 seeds): 0 computed, 8 already in" in again.stdout
    args[2] = "link.0.rate_mbps=6,12"
    ints = _cli(args)
    assert "8 runs (2 link.0.rate_mbps x 2 discipline, 2 seeds): 0 computed, 8 already in" in ints.stdout


def test_the_command_line_names_bad_arguments(tmp_path):
    import tomli_w

    scenario = tmp_path / "base.toml"
    scenario.write_text(tomli_w.dumps(base()))
    store = ["--store", str(tmp_path / "s")]
    for args, code, said in [
        (["--set", "foo"], 2, "--set foo: expected FIELD=V1,V2"),
        (["--set", "link.0.rate_mbps=1,", ], 2, "an empty value"),
        (["--seeds", "5-2"], 2, "--seeds 5-2: expected seeds like 1-8"),
        (["--set", "link.3.rate_mbps=1"], 1, "`link.3` is not an item of a list of 1"),
        (["--set", "link.0.rate_mbps=-1"], 1, "field `rate_mbps`"),
        (["--set", "discipline=fifo,nonsense"], 1, "nonsense"),
        (["--backend", "slurm"], 2, "invalid choice: 'slurm'"),
        (["--seeds", "0-18446744073709551616"], 2, "seeds are below 2**64"),
        (["--seeds", "1-100000000"], 2, "100000000 seeds; at most 100000"),
    ]:
        r = _cli([str(scenario), *args, *store, "--quiet"])
        assert r.returncode == code and said in r.stderr, (args, r.returncode, r.stderr)
        assert "Traceback" not in r.stderr
    assert not list((tmp_path / "s").glob("*.parquet"))
    # A store that is a file, and a CSV that cannot be written: said, no traceback.
    (tmp_path / "f").write_text("")
    r = _cli([str(scenario), "--store", str(tmp_path / "f"), "--quiet"])
    assert r.returncode == 2 and "a file, not a directory" in r.stderr and "Traceback" not in r.stderr
    r = _cli([str(scenario), *store, "--quiet", "--csv", "/dev/full"])
    assert r.returncode == 1 and "cannot write /dev/full" in r.stderr and "Traceback" not in r.stderr


def test_campaign_arguments_are_checked_not_coerced(tmp_path):
    # Seeds are whole numbers, each once: 1.2 and 1.9 used to collapse to seed 1, "12"
    # to seeds 1 and 2; a grid's values are a list, not a string to iterate by character.
    with pytest.raises(TypeError, match="whole number"):
        csfq.Campaign(base(), GRID, seeds=[1.2, 1.9])
    with pytest.raises(TypeError, match="not a string"):
        csfq.Campaign(base(), GRID, seeds="12")
    with pytest.raises(ValueError, match="each seed once"):
        csfq.Campaign(base(), GRID, seeds=[1, 1])
    with pytest.raises(TypeError, match=r"grid `discipline`: a list of values"):
        csfq.Campaign(base(), {"discipline": "drr"})
    np = pytest.importorskip("numpy")
    assert csfq.Campaign(base(), GRID, seeds=np.arange(1, 3)).seeds == [1, 2]


def test_a_path_with_an_equals_sign_is_a_path(tmp_path):
    import tomli_w

    path = tmp_path / "a=b.toml"
    path.write_text(tomli_w.dumps(base()))
    r = csfq.run(str(path))
    assert len(r.flows) == 3


def test_the_store_reads_as_one_schema(tmp_path):
    # FIFO runs drop by overflow only, CSFQ runs by its probability too: every drop reason
    # is a column of every file, so pandas reads the directory as the campaign does.
    store = tmp_path / "c"
    c = csfq.Campaign(base(), {"discipline": ["fifo", "csfq"]}, seeds=[1], store=store)
    df = c.run(progress=False)
    whole = pd.read_parquet(store)
    assert sorted(whole.columns) == sorted(df.columns)
    assert {f"drops_{w}" for w in csfq.drop_reasons()} <= set(df.columns)
    fifo = df[df["discipline"] == "fifo"]
    assert (fifo["drops_csfq_prob"] == 0).all() and (fifo["drops_overflow"] > 0).all()
    assert df["queueing_p99_ms"].dtype == "float64"


def test_a_cut_short_file_is_run_again(tmp_path):
    store = tmp_path / "c"
    c = csfq.Campaign(base(), GRID, seeds=[1], store=store)
    first = c.run(progress=False)
    victim = sorted(store.glob("*.parquet"))[0]
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2])
    assert [r["key"] for r in c.missing()] == [victim.stem]
    again = c.run(progress=False)
    pd.testing.assert_frame_equal(again, first)
    assert victim.read_bytes() == data


def test_an_interrupted_campaign_starts_nothing_more(tmp_path, monkeypatch):
    # Ctrl-C while the first result is stored: the queued runs never start (they used to
    # all run, and be thrown away, before the call returned).
    import sys

    sw = sys.modules["csfq.sweep"]  # the module (csfq.sweep is also the function)
    started = []
    real = sw._run_rows

    def counted(*args):
        started.append(args)
        return real(*args)

    monkeypatch.setattr(sw, "_run_rows", counted)
    c = csfq.Campaign(base(), {"link.0.rate_mbps": [float(r) for r in range(4, 24)]}, seeds=[1], store=tmp_path / "c")

    def interrupt(self, run, rows):
        raise KeyboardInterrupt

    monkeypatch.setattr(sw.Campaign, "_store", interrupt)
    with pytest.raises(KeyboardInterrupt):
        c.run(progress=False, workers=1)
    assert len(started) <= 2, len(started)


def test_the_store_keeps_links_series_and_metadata(tmp_path):
    store = tmp_path / "c"
    c = csfq.Campaign(base(), GRID, seeds=[1], store=store)
    c.run(progress=False)
    runs = c.runs()
    # Each run's links and series equal a direct run's.
    links, series, meta = c.links(), c.series(), c.metadata()
    assert len(meta) == len(runs) == 4
    for r in runs:
        direct = csfq.run(base(), discipline=r["discipline"], seed=1, **{k: v for k, v in r["params"].items() if k != "discipline"})
        mine = links[links["key"] == r["key"]]
        assert mine["utilization"].tolist() == direct.links["utilization"].tolist()
        # (NaN on the reverse direction, which carries no packet)
        pd.testing.assert_series_equal(
            mine["sojourn_p99_ms"].reset_index(drop=True), direct.links["sojourn_p99_ms"], check_names=False
        )
        q = series[(series["key"] == r["key"]) & (series["metric"] == "queue_bytes")]
        dq = direct.series[direct.series["metric"] == "queue_bytes"]
        assert q["value"].tolist() == dq["value"].tolist()
        m = meta[meta["key"] == r["key"]].iloc[0]
        assert (m["seed"], m["discipline"], m["version"]) == (1, r["discipline"], csfq.__version__)
        assert m["scenario_text"] == r["text"] and m["events"] == direct.summary["events"]
        assert m["wall_s"] > 0 and m["host"]
    assert set(c.series("link", "queue_bytes")["metric"]) == {"queue_bytes"}
    # pandas reading the directory still sees only the flows.
    assert sorted(pd.read_parquet(store).columns) == sorted(c.results().columns)
    # Runs of another campaign in the same store are stale to this one, and only they go.
    other = csfq.Campaign(base(), {"discipline": ["fifo"]}, seeds=[1], store=store)
    other.run(progress=False)
    theirs = {r["key"] for r in other.runs()}
    assert set(c.stale()) == theirs
    assert set(c.remove_stale()) == theirs
    assert c.stale() == [] and c.missing() == [] and len(other.missing()) == 1
    assert not [p for k in theirs for p in store.rglob(f"{k}*")]
    # A part removed by hand makes its run missing, and a rerun restores it.
    victim = runs[0]["key"]
    (store / "_series" / f"{victim}.parquet").unlink()
    assert [r["key"] for r in c.missing()] == [victim]
    c.run(progress=False)
    assert c.missing() == []


def test_runs_of_another_build_are_made_again_and_stale(tmp_path, monkeypatch):
    """The key holds the compiled module's hash, not the version number: after a rebuild
    (here the hash replaced, as another binary would give) the old runs are missing again
    and listed as stale, and the metadata says which build made each run."""
    sweep = sys.modules["csfq.sweep"]  # the module (csfq.sweep is also the function)
    store = tmp_path / "c"
    c = csfq.Campaign(base(), {"discipline": ["fifo"]}, seeds=[1], store=store)
    c.run(progress=False)
    old = {r["key"] for r in c.runs()}
    m = c.metadata().iloc[0]
    assert m["build"] == csfq.__build__ and m["binary"] == sweep._binary_hash()
    assert len(m["binary"]) == 16 and c.missing() == []
    # The commit is one of this repository's (when the package is built from a work
    # tree; the module may predate the last commit if it was not rebuilt since).
    here = pathlib.Path(__file__).parent
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True).returncode == 0:
        commit = csfq.__build__.split(",")[0]
        known = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=here, capture_output=True)
        assert known.returncode == 0, csfq.__build__
    monkeypatch.setattr(sweep, "_BINARY", "0" * 16)
    assert {r["key"] for r in c.runs()}.isdisjoint(old)
    assert len(c.missing()) == 1 and set(c.stale()) == old
    # A worker of another build (a Dask worker with an older install): refused, nothing kept.
    real = sweep._run_rows
    monkeypatch.setattr(sweep, "_run_rows", lambda *a: dict(real(*a), binary="f" * 16))
    with pytest.raises(RuntimeError, match="another build"):
        c.run(progress=False)
    assert len(c.missing()) == 1


def test_every_frame_carries_its_runs_parameters_and_unknown_names_raise(tmp_path):
    """links() and series() carry each run's discipline and seed beside its key and grid
    parameters, as results() does; a metric or kind no run has raises, naming the ones
    there are."""
    c = csfq.Campaign(base(), {"discipline": ["fifo", "drr"]}, seeds=[1, 2], store=tmp_path / "c")
    c.run(progress=False)
    for frame in (c.results(), c.links(), c.series()):
        assert {"key", "discipline", "seed"} <= set(frame.columns)
        assert set(frame["discipline"]) == {"fifo", "drr"} and set(frame["seed"]) == {1, 2}
    # Each run's rows name the run the key says (as its flows do).
    flows = c.results().groupby("key")[["discipline", "seed"]].first()
    for frame in (c.links(), c.series()):
        for key, rows in frame.groupby("key"):
            assert set(rows["discipline"]) == {flows.loc[key, "discipline"]}
            assert set(rows["seed"]) == {flows.loc[key, "seed"]}
    q = c.series("link", "queue_bytes")
    assert len(q) > 0 and set(q["metric"]) == {"queue_bytes"}
    with pytest.raises(ValueError, match="queue_bytes"):
        c.series("link", "queue_byte")
    with pytest.raises(ValueError, match="expected flow or link"):
        c.series("links")


def test_read_store_keeps_every_grids_columns(tmp_path):
    """Two campaigns of different grids in one store: pandas.read_parquet keeps one
    file's columns; read_store has both grids' parameters, null where a run lacks one."""
    store = tmp_path / "c"
    a = csfq.Campaign(base(), {"link.0.rate_mbps": [12.0]}, seeds=[1], store=store)
    b = csfq.Campaign(base(), {"duration_s": [2.0]}, seeds=[1], store=store)
    a.run(progress=False)
    b.run(progress=False)
    df = csfq.read_store(store)
    assert {"link.0.rate_mbps", "duration_s"} <= set(df.columns)
    assert len(df) == len(a.results()) + len(b.results())
    mine = df[df["key"].isin(set(a.results()["key"]))]
    assert mine["link.0.rate_mbps"].eq(12.0).all() and mine["duration_s"].isna().all()
    assert csfq.read_store(tmp_path / "empty").empty
