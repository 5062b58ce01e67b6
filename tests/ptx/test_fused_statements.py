"""Statements lexed whole by the table driver give what token-by-token gives.

The driver lexes ``@%p1 bra $L;``, ``$L__BB0_1:``, ``.loc 1 2 3``, nvcc's declarations
(``.reg .b32 %r<4>``, ``.param .u64 p``, ``.local .align 8 .b8 d[16]``) and the ``.loc`` of an
inlined call with one pattern each and reduces them at once (fused rules and statements, see
kernelcheck/ptx/lalr_driver.py). That must change nothing: the same module on valid text, and
the same error, at the same offset with the same expected tokens, on broken text. Both are
checked against a driver built from the same tables without fused rules, over every fixture
and over 1,500 mutated copies of them (truncated, a character deleted, one inserted).
"""

from __future__ import annotations

import random

import pytest

from kernelcheck.ptx import parser as ptx_parser
from kernelcheck.ptx.lalr_driver import LalrDriver
from tests.conftest import fixture_ptx_files

# Characters an edit inserts: punctuation the grammar gives meaning to, and some that start
# or end tokens.
_INSERTS = list(";,{}[]()@%!|.:+-<>$_ \t\nx0") + ["//", "/*", "*/", "ret;", "@%p1 "]


@pytest.fixture(scope="module")
def drivers():
    lark, transformer, fused = ptx_parser._parser()
    plain = LalrDriver(lark, raw_callbacks=ptx_parser.raw_callbacks(lark, transformer))
    return transformer, fused, plain


def _outcome(transformer, driver: LalrDriver, text: str):
    transformer.reset(None, text)
    try:
        return ("parsed", driver.parse(text))
    except Exception as error:  # noqa: BLE001 - the outcome is compared, whatever it is
        return ("failed", type(error).__name__, str(error))
    finally:
        transformer.reset(None)


def _fused_count(driver: LalrDriver, transformer, text: str) -> int:
    calls = 0
    original = LalrDriver._run_fused

    def counting(self, *args):
        nonlocal calls
        result = original(self, *args)
        calls += result is not None
        return result

    LalrDriver._run_fused = counting
    try:
        _outcome(transformer, driver, text)
    finally:
        LalrDriver._run_fused = original
    return calls


@pytest.mark.parametrize("path", fixture_ptx_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fused_driver_builds_the_same_module(drivers, path):
    transformer, fused, plain = drivers
    text = path.read_text()
    assert _outcome(transformer, fused, text) == _outcome(transformer, plain, text)


def test_most_statements_of_the_corpus_are_lexed_whole(drivers):
    transformer, fused, _ = drivers
    instructions = taken = 0
    for path in fixture_ptx_files():
        text = path.read_text()
        module = ptx_parser.parse_ptx(text)
        instructions += sum(len(f.instructions) for f in module.functions)
        taken += _fused_count(fused, transformer, text)
    assert taken > 0.9 * instructions, (taken, instructions)


def _mutations(text: str, rng: random.Random, count: int):
    for _ in range(count):
        offset = rng.randrange(len(text))
        edit = rng.randrange(3)
        if edit == 0:
            yield text[:offset]
        elif edit == 1:
            yield text[:offset] + text[offset + 1:]
        else:
            yield text[:offset] + rng.choice(_INSERTS) + text[offset:]


def test_broken_text_fails_the_same_way(drivers):
    transformer, fused, plain = drivers
    rng = random.Random(16)
    paths = fixture_ptx_files()
    failures = compared = 0
    for path in rng.sample(paths, min(60, len(paths))):
        text = path.read_text()
        for mutated in _mutations(text, rng, 25):
            expected = _outcome(transformer, plain, mutated)
            assert _outcome(transformer, fused, mutated) == expected, (path.name, mutated[-200:])
            compared += 1
            failures += expected[0] == "failed"
    assert compared == 1500
    assert failures > 300  # the edits do break text; most of the rest are in comments


@pytest.mark.parametrize("statement", [
    "mov.u32 %r1, %r2;",
    "@%p1 bra $L__BB0_1;",
    "@!%p1 ret;",
    "ret;",
    "setp.ne.s32 %p1|%p2, %r1, %r2;",  # an operand the run cannot take: token by token
    "add.s32 %r1, %r2, -1;",
    "ld.global.v2.u32 {%r1, %r2}, [%rd1];",
    "mov.u32 %r1, %r2 /* , %r3; */ ;",
    "mov.u32 %r1, %r2 // ;\n;",
    "abc.d1, %r1;",  # not an instruction: the run must not re-split the opcode
    "mov.u32 %r1 %r2;",
    "mov.u32 %r1, %r2",
    "@%p1;",
    "@ %p1 bra $L__BB0_1;",
    ".loc 1 2 3",
    ".loc 1 2 3 ,",
    ".loc 1 2 3\n, inlined_at 1 5 7",
    ".loc 1 2 3 }",
    "$L__x:",
    "$L__y: .callprototype",
    "$L__z: }",
    "$L__w: ,",
    # Declarations and the .loc of an inlined call: spellings lexed whole though their
    # rules have nonterminals, and near misses that must go token by token.
    ".reg .b32 %q<4>;",
    ".reg .b32 %q<4>, %x;",
    ".reg .b32 %q <4>;",
    ".reg .b32 %q<0x4>;",
    ".reg .b32 %q<4>",
    ".reg .v4 .b32 %v;",
    ".reg .pred p;",
    ".reg .b32 %s;",
    ".reg .b32 %s, %t;",
    ".reg .b32 %s = 1;",
    ".local .align 8 .b8 depot[16];",
    ".local .align 8 .b8 depot[16][2];",
    ".local .align 8 .b8 depot[];",
    ".local .align 8 .b8 depot[16] = {1};",
    ".shared .align 16 .b8 /* c */ smem[0x400];",
    ".shared .b32 flag;",
    ".shared .b32 .align 4 flag;",
    ".local .align .b8 depot[16];",
    ".loc 1 2 3, function_name $L__info_string0, inlined_at 1 5 7",
    ".loc 1 2 3, function_name $L__info_string0+12, inlined_at 1 5 7",
    ".loc 1 2 3, function_name $L__info_string0",
    ".loc 1 2 3, function_name $L__info_string0, inlined_at 1 5",
    ".loc 1 2 3, function_name $L__info_string0, inlined_at 1 5 7, function_name f",
    ".loc 1 2 3, function_name $L__info_string0 + , inlined_at 1 5 7",
    ".loc 1 2 3, inlined_at 1 5 7",
])
def test_statements_fused_or_not_agree(drivers, statement):
    transformer, fused, plain = drivers
    text = (".version 8.0\n.target sm_90\n.address_size 64\n"
            ".visible .entry k()\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .pred %p<4>;\n"
            f"$L__BB0_1:\n{statement}\n{statement}\nret;\n}}\n")
    assert _outcome(transformer, fused, text) == _outcome(transformer, plain, text)


@pytest.mark.parametrize("params", [
    ".param .u64 a, .param .u32 b",
    ".param .align 8 .b8 a[16], .param .u32 b",
    ".param .align 8 .b8 a[], .param .u32 b",
    ".param .align 8 .b8 a[16][4]",
    ".param .u64 .ptr .global .align 16 a",
    ".param .u64 a[2",
    ".param .u64 a .param .u64 b",
    ".param .u64 %a",
    ".param .v2 .f32 a",
    ".param .u64 a,",
])
def test_parameters_fused_or_not_agree(drivers, params):
    transformer, fused, plain = drivers
    text = (".version 8.0\n.target sm_90\n.address_size 64\n"
            f".visible .entry k({params})\n{{\nret;\n}}\n"
            f".func (.param .b32 r) f({params})\n{{\nret;\n}}\n")
    assert _outcome(transformer, fused, text) == _outcome(transformer, plain, text)


def test_declarations_and_inlined_locs_are_lexed_whole(drivers):
    transformer, fused, _ = drivers
    text = (".version 8.0\n.target sm_90\n.address_size 64\n"
            ".visible .entry k(.param .u64 a, .param .align 8 .b8 b[16])\n{\n"
            ".local .align 8 .b8 depot[16];\n.reg .b32 %r<4>;\n"
            ".loc 1 2 3, function_name $L__info_string0, inlined_at 1 5 7\n"
            "ret;\n}\n")
    # Two parameters, two declarations, the .loc and the ret.
    assert _fused_count(fused, transformer, text) == 6


@pytest.mark.parametrize(("regexp", "first"), [
    (r"@!?%?[\w$]+", "@"),
    (r"[a-z_][\w]*(?:\.[\w$]+)*", "_a-z"),
    (r"(?:\-)?0[xX][0-9a-fA-F]+U?|\d+U?", r"0\-\d"),
    (r"(?=x)\.loc[ \t]+\d+", r"\."),
    (r"a*", None),  # can match nothing
    (r"[^x]", None),  # a negated class is not read
    (r"(?i)abc", None),
])
def test_first_character_class(regexp, first):
    from kernelcheck.ptx.lalr_driver import _first_class

    assert _first_class(regexp) == first
