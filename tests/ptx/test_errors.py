"""Malformed PTX gives one clear error naming the file, line, column and expected tokens."""

from __future__ import annotations

import pytest

from kernelcheck.errors import PtxSyntaxError
from kernelcheck.ptx.parser import parse_ptx, parse_ptx_file
from tests.conftest import FIXTURES

HEADER = ".version 9.0\n.target sm_90\n.address_size 64\n"
VEC_ADD = (FIXTURES / "ptx/sm_90/elementwise.ptx").read_text()


def _error(text, filename="bad.ptx", engine="fast") -> PtxSyntaxError:
    with pytest.raises(PtxSyntaxError) as info:
        parse_ptx(text, filename=filename, engine=engine)
    return info.value


@pytest.mark.parametrize("engine", ["fast", "lark"])
def test_error_points_at_line_and_column(engine):
    text = HEADER + ".visible .entry k()\n{\n  add.s32 %r1, %r2 %r3;\n  ret;\n}\n"
    error = _error(text, engine=engine)
    assert (error.filename, error.line) == ("bad.ptx", 6)
    assert error.column == 20
    assert "';'" in error.expected or "','" in error.expected
    assert str(error).startswith("bad.ptx:6:20: ")
    assert error.excerpt().splitlines()[1].index("^") == 19


def test_empty_file():
    error = _error("")
    assert "empty input" in str(error) and error.line == 1


def test_whitespace_only_file():
    assert "empty input" in str(_error("\n\n   \t\n"))


def test_comment_only_file_is_an_empty_module():
    module = parse_ptx("// nothing here\n/* at all */\n")
    assert module.items == () and module.version is None


def test_binary_garbage():
    error = _error(bytes(range(256)) * 4)
    assert "not PTX text" in str(error)


def test_nul_byte_is_named_with_its_position():
    error = _error(HEADER + "\x00\x01\x02")
    assert error.line == 4 and "NUL" in str(error)


def test_truncated_ptx():
    cut = VEC_ADD[: VEC_ADD.index("st.global")]
    error = _error(cut)
    assert "end of input" in str(error)
    assert error.line == cut.count("\n") + 1


def test_unknown_module_directive():
    error = _error(HEADER + ".frobnicate 12;\n")
    assert (error.line, error.column) == (4, 1)


def test_unknown_directive_inside_a_body():
    text = HEADER + ".visible .entry k()\n{\n  .frobnicate 3;\n  ret;\n}\n"
    error = _error(text)
    assert error.line == 6


def test_two_megabyte_line_of_garbage_reports_position_quickly():
    error = _error(HEADER + "x" * (2 << 20) + "\n")
    assert error.line == 4 and error.column == 1
    assert len(str(error)) < 500, "the message stays one short line"


def test_two_megabyte_single_line_module_parses():
    # A whole module with its statements on one line, grown past 2 MB by repetition.
    body = " ".join(["add.s32 %r1, %r2, %r3;"] * 95_000)
    text = (HEADER + ".visible .entry k() { .reg .b32 %r<4>; " + body + " ret; }").replace(
        "\n", " "
    )
    assert len(text) > 2 << 20
    module = parse_ptx(text)
    assert len(module.kernels[0].instructions) == 95_001


def test_file_errors_name_the_file(tmp_path):
    path = tmp_path / "broken.ptx"
    path.write_text(HEADER + ".visible .entry k() { ret }\n")
    with pytest.raises(PtxSyntaxError) as info:
        parse_ptx_file(path)
    assert str(info.value).startswith(f"{path}:4:")


def test_fifty_megabyte_file_reports_an_error_at_its_end(tmp_path):
    # 50 MB of real PTX (fixture kernels repeated) with one bad statement on the last line:
    # the error names that line, and nothing in the parser grows worse than linearly.
    body = VEC_ADD[VEC_ADD.index(".visible .entry") :]
    copies = (50 << 20) // len(body) + 1
    text = VEC_ADD[: VEC_ADD.index(".visible .entry")] + body * copies + "bogus statement\n"
    assert len(text) >= 50 << 20
    path = tmp_path / "huge.ptx"
    path.write_text(text)
    with pytest.raises(PtxSyntaxError) as info:
        parse_ptx_file(path)
    assert info.value.line == text.count("\n")
    assert info.value.column == 1
