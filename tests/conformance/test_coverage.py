"""Every (opcode, type, modifier) entry the emulator supports is exercised by some case.

``kernelcheck.emu.dispatch_entries()`` lists the entries the emulator dispatches; the cases'
PTX (tests/conformance/cases and the tracking suite bench/isa_suite) is read with
:mod:`tests.conformance.coverage`. A supported entry no case exercises is listed in the
failure: write a case for it. Entries that name no valid PTX instruction are left out by the
rules of :mod:`tests.conformance.not_ptx`, and a rule that leaves out an entry some case does
exercise is wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.coverage import ptx_entries, uncovered
from tests.conformance.not_ptx import excluded

try:
    from kernelcheck.emu import dispatch_entries
except ImportError:  # pragma: no cover - an emulator without a dispatch table listing
    pytest.skip("kernelcheck.emu.dispatch_entries() is not available in this tree",
                allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "tests" / "conformance" / "cases").glob("*/*.ptx")) + sorted(
    (ROOT / "bench" / "isa_suite").glob("**/*.ptx"))


@pytest.fixture(scope="module")
def exercised():
    return ptx_entries(SOURCES)


def test_every_supported_entry_has_a_case(exercised):
    missing = [e for e in uncovered(dispatch_entries(), exercised) if excluded(e) is None]
    shown = "\n".join(f"  {op} {type_ or '-'} {modifier or '-'}" for op, type_, modifier
                      in missing)
    assert not missing, (f"{len(missing)} supported (opcode, type, modifier) entries have no "
                         f"conformance case:\n{shown}")


def test_no_exercised_entry_is_ruled_out_as_not_ptx(exercised):
    wrong = sorted(e for e in exercised if excluded(e) is not None)
    assert not wrong, f"cases exercise entries a not_ptx rule calls invalid: {wrong[:20]}"
