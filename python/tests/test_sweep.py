"""Campaigns: every run's stored rows equal a direct run of the same variant, a rerun
computes only what is missing, and a Dask LocalCluster of two worker processes stores the
same bytes as the local thread pool."""

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
    with pytest.raises(ValueError, match="give seeds as `seeds`"):
        csfq.Campaign(base(), {"seed": [1, 2]})
    with pytest.raises(KeyError, match="the scenario has no `nosuch`"):
        csfq.Campaign(base(), {"nosuch.x": [1]}).runs()
    bad = base()
    bad["link"][0]["rate_mbps"] = -1.0
    with pytest.raises(csfq.ScenarioError):
        csfq.Campaign(bad, {"duration_s": [1.0]}, store=tmp_path / "bad").run(progress=False)
    with pytest.raises(ValueError, match="unknown backend"):
        csfq.Campaign(base(), GRID, store=tmp_path / "c").run(backend="nosuch")
