"""The example notebook runs from start to end, and its numbers are the package's."""

import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_the_example_notebook_runs():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    path = REPO / "examples" / "csfq-python.ipynb"
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    # The UDP flow's throughput per discipline: CSFQ and DRR near its fair share
    # (0.3125 Mbit/s), FIFO above 8 (the paper's Figure 3(b)).
    text = "".join(o.get("data", {}).get("text/plain", "") for o in outputs[:1])
    values = {line.split()[0]: float(line.split()[1]) for line in text.splitlines() if line.split()[:1] and line.split()[0] in ("fifo", "red", "fred1", "drr", "csfq")}
    assert values["fifo"] > 8.0
    assert values["csfq"] < 0.5 and values["drr"] < 0.5
