"""Every conformance case, run on the emulator and judged by references that do not share
its code (see tests/conformance/README.md). Cases the emulator cannot pass yet are marked
``xfail(strict=True)`` in xfails.py, with what is missing, so that each flips to a failure
("XPASS(strict)") the day it is fixed and its mark must be removed."""

from __future__ import annotations

import pytest

from tests.conformance.harness import discover_cases, run_case
from tests.conformance.xfails import XFAILS

CASES = discover_cases()


def _param(case):
    reason = XFAILS.get(case.id)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_case(case):
    mismatches = run_case(case)
    shown = "\n".join(str(m) for m in mismatches[:25])
    more = f"\n... {len(mismatches) - 25} more" if len(mismatches) > 25 else ""
    assert not mismatches, f"{case.id}: {len(mismatches)} elements differ:\n{shown}{more}"


def test_every_xfail_names_a_case():
    assert set(XFAILS) <= {c.id for c in CASES}
