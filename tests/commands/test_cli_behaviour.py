"""What a person and a CI job rely on: --fail-on statuses, several inputs (files,
directories, stdin), --kernel by every name, records with kernel/class/verdict/reason,
short names, the class histogram."""

from __future__ import annotations

import json
import re
import shutil
import sys

import pytest

from kernelcheck.cli import main
from kernelcheck.commands.exitcodes import ANALYZE_CLASSES, findings_status, parse_fail_on
from kernelcheck.names import match_kernels, short_name
from tests.commands.badinput import stdin_bytes
from tests.conftest import FIXTURES

PTX90 = FIXTURES / "ptx" / "sm_90"
ELEMENTWISE = str(PTX90 / "elementwise.ptx")
ATOMICS = str(PTX90 / "atomics.ptx")
TEMPLATES = str(PTX90 / "templates.ptx")


@pytest.mark.parametrize(("fail_on", "path", "status"), [
    ("never", ELEMENTWISE, 0), ("conditional", ELEMENTWISE, 1), ("never", ATOMICS, 1),
    ("any", ELEMENTWISE, 1), ("none", ATOMICS, 0), ("never,not_proven", ELEMENTWISE, 0)])
def test_fail_on_sets_the_exit_status(fail_on, path, status, capsys):
    assert main(["analyze", path, "--fail-on", fail_on, "--format", "jsonl"]) == status


def test_the_policy_functions_other_commands_call():
    assert parse_fail_on("any", ANALYZE_CLASSES) == {"conditional", "never", "not_proven"}
    assert findings_status(["always"], parse_fail_on("any", ANALYZE_CLASSES)) == 0


def test_jsonl_records_carry_kernel_class_verdict_and_reason(capsys):
    assert main(["analyze", ELEMENTWISE, "--format", "jsonl", "--quiet"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["kernel"] for r in records} == {"vec_add", "saxpy", "relu_f32", "fill_f32",
                                               "write_thread_ids"}
    for r in records:
        assert {"kernel", "class", "verdict", "reason", "results"} <= r.keys()
    vec_add = next(r for r in records if r["kernel"] == "vec_add")
    assert (vec_add["class"], vec_add["verdict"]) == ("conditional", "depends_on_arguments")
    assert vec_add["reason"].startswith("not idempotent when vec_add_param_0 overlaps")


def test_jsonl_with_an_instance_gives_the_instance_verdict(capsys):
    assert main(["analyze", ELEMENTWISE, "--format", "jsonl", "--kernel", "vec_add",
                 "--instance", "p0=0x7f0000000000,p1=0x7f0000000000,p2=0x7f0000002000,"
                 "p3=1024", "--grid", "4", "--block", "256"]) == 0
    (record,) = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert record["verdict"] == "not_idempotent" and record["decided_by"] == "overlap"


def test_several_files_a_directory_and_stdin(tmp_path, capsys, monkeypatch):
    (tmp_path / "a").mkdir()
    shutil.copy(ELEMENTWISE, tmp_path / "a" / "k1.txt")  # found by content, not by name
    shutil.copy(FIXTURES / "cubin" / "sm_90" / "atomics.cubin", tmp_path / "a" / "blob")
    (tmp_path / "a" / "README").write_text("not device code\n")
    assert main(["analyze", str(tmp_path / "a"), ATOMICS, "--format", "jsonl", "-q"]) == 0
    files = {json.loads(x)["file"] for x in capsys.readouterr().out.splitlines()}
    assert files == {str(tmp_path / "a" / "k1.txt"), str(tmp_path / "a" / "blob"), ATOMICS}
    monkeypatch.setattr(sys, "stdin", stdin_bytes((PTX90 / "inplace.ptx").read_bytes()))
    assert main(["analyze", "-", "--kernel", "inplace_add_one"]) == 0
    assert "<stdin>: PTX" in capsys.readouterr().out
    monkeypatch.chdir(tmp_path)
    assert main(["list", "a/b*", "--no-kernels"]) == 0
    assert "a/blob: cubin" in capsys.readouterr().out


@pytest.mark.parametrize(("pattern", "expected"), [
    ("_Z5axpbyIfEvPT_PKS0_S3_S0_S0_i", ["axpby"]),
    ("void axpby<float>(float*, float const*, float const*, float, float, int)", ["axpby"]),
    ("axpby<float>", ["axpby"]),
    ("axpby", ["axpby<float>", "axpby<double>"]),
    ("kc::scale_shift_inplace", ["scale_shift_inplace"]),
    ("copy_n", ["copy_n"]),
    ("kc::", ["scale_shift_inplace", "copy_n"]),
])
def test_kernel_by_any_name(pattern, expected, capsys):
    """A short name two reported kernels share is shown with its template arguments."""
    assert main(["analyze", TEMPLATES, "--kernel", pattern]) == 0
    captured = capsys.readouterr()
    shown = [line.split(":")[0].split(" ", 1)[1] for line in captured.out.splitlines()
             if line.startswith("entry ")]
    assert shown == expected
    assert ("matched 2 kernels" in captured.err) == (len(expected) == 2)


def test_short_names_as_nsight_compute_shows_them():
    numba = ("_ZN13numba_kernels11scale_numbaB2v2B106cw51cXTLSUwv1sDUaKthqaNgoKmjgMVuW1AiA8r"
             "AEg2UjxRKtuAIAMYDWpKAqkSkPiQB1BQFk0DyoW21Oizc1a0UoPGnDpQE8oxrNQE_3dE5ArrayIfLi1E"
             "1C7mutable7alignedE5ArrayIfLi1E1C7mutable7alignedEf")
    assert short_name(numba) == "scale_numba"
    assert short_name("_ZN12_GLOBAL__N_13fooEv") == "foo"
    assert short_name("_Z6kernelIZ4mainEUliE_EvT_") == "kernel"
    assert match_kernels("scale_numba", [numba]) == [numba]


def test_full_names_on_request(capsys):
    assert main(["analyze", TEMPLATES, "--kernel", "copy_n", "--full-names"]) == 0
    assert "entry void kc::detail::copy_n<int>(int*, int const*, int):" in \
        capsys.readouterr().out


def test_conditions_are_one_line_per_pointer_pair(capsys):
    triton = FIXTURES / "ptx" / "triton" / "add_kernel_sm90.ptx"
    assert main(["analyze", str(triton), "--format", "json"]) == 0
    (kernel,) = json.loads(capsys.readouterr().out)["modules"][0]["kernels"]
    assert len(kernel["launch_check"]["pairs"]) == 8
    assert kernel["conditions"] == [
        "not idempotent when add_kernel_param_2 overlaps add_kernel_param_0 (written by "
        "st.global.b32 #29 and #30, line 25; read by ld.global.b32 #16 and #18, line 23)",
        "not idempotent when add_kernel_param_2 overlaps add_kernel_param_1 (written by "
        "st.global.b32 #29 and #30, line 25; read by ld.global.b32 #22 and #24, line 24)"]


def test_sass_reasons_name_offsets_and_source_lines_never_lifted_numbers(capsys):
    assert main(["analyze", str(FIXTURES / "cubin" / "sm_90" / "atomics.cubin")]) == 0
    out = capsys.readouterr().out
    reasons = [line for line in out.splitlines() if line.startswith("    - ")]
    assert reasons and all("/*0" in r for r in reasons if " at " in r or "written" in r)
    assert not any(" #" in r for r in reasons)
    assert re.search(r"at REDG\.E\.ADD\.F32\.FTZ\.RN\.STRONG\.GPU /\*00d0\*/, line \d+$",
                     out, re.M)


def test_plot_draws_the_class_histogram(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "classes.png"
    assert main(["analyze", str(PTX90), "--format", "jsonl", "-o", str(tmp_path / "k.jsonl"),
                 "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "class histogram of" in capsys.readouterr().err


def test_plot_without_matplotlib_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["analyze", ELEMENTWISE, "--plot", str(tmp_path / "p.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "matplotlib" in err
