#!/usr/bin/env bash
# The self-test on a machine with an NVIDIA GPU: `kernelcheck selftest --device`.
#
# Runs every section against the hardware (re-execution oracle, emulator against the GPU,
# SASS verdicts of the fixture cubins, recovery of faults planted by PTX rewrite, a PyTorch
# training step under `kernelcheck run --recover`, the shim's added cost per launch), prints
# one table and writes selftest-report.json. Exit status 0 all passed, 1 a check failed,
# 2 the self-test could not run (no GPU, no driver). Extra arguments are passed on
# (e.g. --quick, --section reexec). Needs kernelcheck installed (pip install -e . here, or
# offline: docs/selftest.md), gcc, and torch with CUDA for the PyTorch section.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
exec "$PY" -m kernelcheck selftest --device -o "${REPORT:-selftest-report.json}" "$@"
