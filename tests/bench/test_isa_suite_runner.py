"""The tracking-suite runner (bench/isa_suite.py): outcome classification, ZLUDA's test list,
and the suite's own files."""

from __future__ import annotations

import json
import textwrap

import pytest

from bench.isa_suite import SUITE, classify, report, suite_jobs
from bench.zluda_tests import launch_document, read_mod_rs
from kernelcheck.launchfile import parse_launch


@pytest.mark.parametrize("code, stdout, stderr, status, detail", [
    (0, "", "", "passed", ""),
    (1, "expect out: 1 elements differ\n  out[0] (byte 0): expected 1, found 2\n", "",
     "wrong value", "out[0] (byte 0): expected 1, found 2"),
    (2, "", "kernelcheck: error: /x/a.ptx:3:5: unsupported: instruction 'bmsk.clamp.b32'\n",
     "unsupported", "instruction 'bmsk.clamp.b32' at /x/a.ptx:3:5"),
    (2, "", "kernelcheck: error: /x/a.ptx:7:12: unexpected character '|' (expected ...)\n",
     "parse error", "a.ptx:7:12: unexpected character '|' (expected ...)"),
    (1, "", "Traceback (most recent call last):\n  ...\nKeyError: 'b128'\n", "crashed",
     "KeyError: 'b128'"),
    (1, "", "kernelcheck: error: kernel failed: /x/a.ptx: kernel k failed on the emulator: "
     "trap\n", "kernel fault", "/x/a.ptx: kernel k failed on the emulator: trap"),
])
def test_classify(code, stdout, stderr, status, detail):
    result = classify("t", code, stdout, stderr)
    assert (result.status, result.detail) == (status, detail)


MOD_RS = textwrap.dedent("""\
    test_ptx!(add, [1u64], [2u64]);
    // test_ptx!(commented_out, [1u32], [1u32]);
    test_ptx!(
        setp_nan,
        [0.5f32, f32::NAN, 0.5],
        [1u32, 0u32]
    );
    test_ptx!(mixed, [u64::max_value(), i32::MIN], [half::f16::from_f32(2.0)]);
    test_ptx!(bits, [half::f16::NAN.to_bits()], [f32::from_bits(0x3f800000)]);
    test_ptx_warp!(vote_any, [1u32, 0]);
    test_ptx!(only_llvm);
    test_ptx!(odd, [something_else()], [1u32]);
""")


def test_zluda_test_lines(tmp_path):
    path = tmp_path / "mod.rs"
    path.write_text(MOD_RS)
    tests, problems = read_mod_rs(path)
    by_name = {t.name: t for t in tests}
    assert set(by_name) == {"add", "setp_nan", "mixed", "bits", "vote_any", "only_llvm"}
    assert problems == [("odd", "unknown literal 'something_else()'")]
    assert by_name["add"].inputs == (("u64", 1),) and by_name["add"].threads == 1
    assert [t for t, _ in by_name["setp_nan"].inputs] == ["f32", "f32", "f32"]
    assert by_name["mixed"].inputs == (("u64", 2 ** 64 - 1), ("s32", -2 ** 31))
    assert by_name["vote_any"].threads == 64 and by_name["vote_any"].inputs is None
    assert by_name["only_llvm"].outputs is None

    document = launch_document(by_name["mixed"], 2)
    spec = parse_launch(document)
    assert spec.get_buffer("input").data == bytes.fromhex("ffffffffffffffff" "00000080")
    assert spec.expectations[0].data == bytes.fromhex("0040")  # f16 2.0
    assert spec.block == (1, 1, 1) and spec.shared_bytes == 1024
    warp = parse_launch(launch_document(by_name["vote_any"], 1))
    assert [p.buffer for p in warp.params] == ["output"] and warp.block == (64, 1, 1)
    bits = parse_launch(launch_document(by_name["bits"], 2))
    assert bits.get_buffer("input").data == bytes.fromhex("007e")  # f16 NaN bits as u16


def test_every_suite_kernel_has_a_launch_file_with_expectations():
    jobs = suite_jobs(SUITE)
    assert len(jobs) >= 60
    for name, ptx, launch in jobs:
        assert ptx.exists(), name
        document = json.loads(launch.read_text())
        assert parse_launch(document).expectations, name


def test_report_counts_and_groups():
    from bench.isa_suite import Result

    text = report("t", [Result("a", "passed"), Result("b", "unsupported", "x at f:1:1"),
                        Result("c", "no expected output")])
    assert "2 tests with expected outputs: 1 passed (50.0%)" in text
    assert "### unsupported (1)" in text and "- `b`: x at f:1:1" in text
