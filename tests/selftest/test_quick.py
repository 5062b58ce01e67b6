"""``kernelcheck selftest --quick`` on the stand-in driver: every section that can run here
passes, the others say why they are skipped, and the run fits CI's budget."""

from __future__ import annotations

from tests.selftest.conftest import selftest


def test_quick_selftest_on_the_standin_passes_every_section_that_can_run(
        standin_env, tmp_path, record_property):
    code, report, output = selftest(standin_env, "--quick", "--driver", "standin",
                                    out=tmp_path / "report.json")
    assert code == 0, output
    sections = {s["name"]: s for s in report["sections"]}
    assert set(sections) == {"reexec", "emulator", "sass", "recovery", "pytorch", "launch"}
    assert report["device"]["standin"] is True
    for name in ("sass", "pytorch"):
        assert sections[name]["status"] == "skipped"
        assert sections[name]["summary"].startswith("skipped: no device"), sections[name]
    for name in ("reexec", "emulator", "recovery", "launch"):
        s = sections[name]
        assert s["status"] == "passed" and s["passed"] > 0 and s["failed"] == 0, s
        assert not s["capped"], s
    reexec = sections["reexec"]["figures"]
    assert reexec["cases"] >= 70 and reexec["idempotent_confirmed"] == reexec["idempotent"]
    assert reexec["not_claimed_changed"] > 0
    recovery = sections["recovery"]["figures"]
    assert recovery["unrecovered"] == 0 and recovery["recovered"] > 0
    assert recovery["saved_ratio"] >= recovery["saved_ratio_floor"]
    assert "| reexec | passed |" in output
    record_property("quick_selftest_seconds", report["seconds"])
    assert report["seconds"] < 300  # CI's budget is 180 s on 2 idle cores
