"""The generated sweep cases on disk are what their sweeps write (tests/conformance/generate.py
writes them; the tests never do), and the sweeps' kernels hold what coverage counts."""

from __future__ import annotations

from tests.conformance.generate import stale_files


def test_generated_cases_are_up_to_date():
    stale = stale_files()
    assert not stale, ("generated cases differ from their sweeps; run "
                       "`python -m tests.conformance.generate`:\n" + "\n".join(stale))
