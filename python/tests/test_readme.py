"""The README's Python examples, run as written: every ```python block, in order, from the
repository's root as the README assumes. The one line that names a Dask scheduler by a
placeholder address gets a real one: a LocalCluster's."""

import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def blocks():
    """The README's ```python blocks, with the line each starts on."""
    text = (REPO / "README.md").read_text()
    found = []
    for m in re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M):
        found.append((text[: m.start()].count("\n") + 2, m.group(1)))
    return found


def test_the_readme_has_python_examples():
    # Fails if the blocks move out of reach of this test (a renamed fence).
    assert len(blocks()) >= 2
    assert any("SCHEDULER" in code for _, code in blocks())


def test_the_readme_python_examples_run_as_written(tmp_path, monkeypatch):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    distributed = pytest.importorskip("dask.distributed")
    # The README runs from the repository's root; its campaign writes campaigns/fig3b
    # there, so it runs beside a link to the root's scenarios instead.
    (tmp_path / "scenarios").symlink_to(REPO / "scenarios")
    monkeypatch.chdir(tmp_path)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    ) as cluster:
        scope = {}
        for line, code in blocks():
            code = code.replace("tcp://SCHEDULER:8786", cluster.scheduler_address)
            try:
                exec(compile(code, f"README.md:{line}", "exec"), scope)
            except Exception as e:  # the block and line that failed
                raise AssertionError(f"README.md block at line {line} failed: {e!r}") from e
    assert (tmp_path / "campaigns" / "fig3b").is_dir()
