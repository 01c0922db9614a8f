#!/usr/bin/env bash
# The whole test suite: the Rust workspace, then the Python package (built with maturin
# into a virtual environment under target/, its tests run with pytest).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says how long it took (seconds since the start), so a slow machine shows where.
step() { echo "scripts/test.sh: $1 done at ${SECONDS} s" >&2; }

# Every target in one build, so the dependencies are compiled once, with one set of
# features: the libraries, the binaries and the integration tests, the examples (compiled
# as tests), and the per-packet benchmark, each case once (its driver checks that every
# discipline runs at a congested link, packets conserved and the link busy, before it would
# be timed).
cargo test --workspace --all-targets
step "cargo test --workspace --all-targets"
cargo test --workspace --doc
step "the documentation's examples"
# The API documentation builds without a warning (no link to a missing or private item).
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q
step "the API documentation"

target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
venv="$target/py-venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip
# The package's dependencies and its test extras (the Dask test starts a LocalCluster on
# loopback; the example notebook runs in a Jupyter kernel).
"$venv/bin/python" -m pip install -q "maturin>=1.9,<2" "pandas>=1.5" "pyarrow>=12" "tomli-w>=1.0" \
    "tqdm>=4.60" "pytest>=7" "dask[distributed]>=2023.1" "xarray>=2023.1" "nbclient>=0.8" \
    "nbformat>=5" "ipykernel>=6" "matplotlib>=3.6"
(cd python && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" \
    CARGO_TARGET_DIR="$target" maturin develop --release -q)
step "the Python package's build"
# The Python tests compare the package with the `csfq` command built from this tree: the
# one the first step built (the test profile: optimized, with debug assertions).
if [ ! -x "$target/debug/csfq" ]; then
    echo "scripts/test.sh: $target/debug/csfq was not built" >&2
    exit 1
fi
CSFQ_BIN="$target/debug/csfq" "$venv/bin/python" -m pytest -q python/tests
step "the Python tests"
