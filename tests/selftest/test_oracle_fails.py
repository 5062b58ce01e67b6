"""The re-execution oracle can fail: an in-place kernel forced to the idempotent list is
reported unsound, with a reproducer that reproduces it."""

from __future__ import annotations

import shlex

from tests.selftest.conftest import selftest


def test_an_instance_mislabelled_idempotent_is_reported_unsound(standin_env, tmp_path):
    case = "inplace_add_one#0"
    code, report, output = selftest(standin_env, "--section", "reexec", "--case", case,
                                    "--assume-idempotent", case, out=tmp_path / "r.json")
    assert code == 1, output
    (section,) = report["sections"]
    assert section["status"] == "failed" and section["figures"]["unsound"] == 1
    (failure,) = section["failures"]
    assert failure["case"] == case and failure["what"].startswith("unsound:")
    assert "two single runs agree" in failure["what"]
    words = shlex.split(failure["reproducer"])
    assert words[:2] == ["kernelcheck", "selftest"] and "--assume-idempotent" in words
    assert failure["reproducer"] in output
    again, report2, _ = selftest(standin_env, *words[2:], out=tmp_path / "again.json")
    assert again == 1 and report2["sections"][0]["failures"][0]["case"] == case


def test_the_same_instance_with_its_own_verdict_passes(standin_env, tmp_path):
    code, report, output = selftest(standin_env, "--section", "reexec", "--case",
                                    "inplace_add_one#0", out=tmp_path / "r.json")
    assert code == 0, output
    figures = report["sections"][0]["figures"]
    assert figures["idempotent"] == 0 and figures["not_claimed_changed"] == 1


def test_an_unknown_case_is_an_error_of_the_selftest(standin_env, tmp_path):
    code, report, output = selftest(standin_env, "--section", "reexec", "--case",
                                    "no_such_kernel#0", out=tmp_path / "r.json")
    assert code == 2, output
    assert "no_such_kernel#0" in report["sections"][0]["reason"]


def test_device_without_a_gpu_is_status_2_for_every_section(standin_env, tmp_path):
    env = dict(standin_env)
    env["LD_LIBRARY_PATH"] = ""  # the system's driver only, and this machine has none
    code, report, output = selftest(env, "--device", "--section", "reexec", "--section",
                                    "launch", out=tmp_path / "r.json")
    assert code == 2, output
    assert [s["status"] for s in report["sections"]] == ["error", "error"]
