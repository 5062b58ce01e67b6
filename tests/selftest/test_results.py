"""The report: exit status from the sections' states, JSON round trip, the printed table."""

from __future__ import annotations

from kernelcheck.selftest.results import SectionResult, SelftestReport


def _report(*sections: SectionResult) -> SelftestReport:
    return SelftestReport(list(sections), {"description": "test device"}, {})


def test_exit_status_is_0_when_every_section_passed_or_was_skipped():
    ok = SectionResult("reexec", passed=3).finish()
    assert _report(ok, SectionResult.skipped("sass", "no device")).exit_code == 0


def test_a_failed_check_is_status_1_even_beside_a_section_that_could_not_run():
    failed = SectionResult("reexec")
    failed.fail("k#0", "unsound: ...", "kernelcheck selftest --case 'k#0'")
    failed.finish()
    assert failed.status == "failed"
    assert _report(failed, SectionResult.error("sass", "crashed")).exit_code == 1


def test_a_section_that_could_not_run_is_status_2():
    assert _report(SectionResult("reexec").finish(),
                   SectionResult.error("launch", "no compiler")).exit_code == 2


def test_json_round_trip_and_table():
    s = SectionResult("recovery", passed=2, summary="2 faults")
    s.fail("vec_add#0", "detected but not recovered\n  (twice)", "kernelcheck selftest x")
    s.notes.append("1 context lost")
    s.finish()
    again = SectionResult.from_json(s.to_json())
    assert again == s and again.failures[0].what == "detected but not recovered (twice)"
    table = _report(s).table()
    assert "| recovery | failed | 2 | 1 |" in table
    assert "reproduce: kernelcheck selftest x" in table and "1 context lost" in table
    assert table.rstrip().endswith("s)") and "exit status 1" in table
