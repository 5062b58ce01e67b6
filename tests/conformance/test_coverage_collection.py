"""The collection of (opcode, type, modifier) entries the coverage test relies on."""

from __future__ import annotations

import textwrap

from kernelcheck.ptx.parser import parse_ptx
from tests.conformance.coverage import instruction_entries, module_entries, ptx_entries, uncovered


def test_one_type_and_modifiers():
    assert instruction_entries("add", ("cc", "u32")) == {
        ("add", "u32", ""), ("add", "u32", "cc"), ("add.cc", "u32", "")}
    assert instruction_entries("ret", ()) == {("ret", "", "")}


def test_every_type_of_a_conversion_can_be_the_type():
    entries = instruction_entries("cvt", ("rn", "f16x2", "f32"))
    assert {("cvt", "f16x2", "rn"), ("cvt", "f16x2", "f32"), ("cvt", "f32", "f16x2"),
            ("cvt", "f32", "rn"), ("cvt", "f16x2", ""), ("cvt", "f32", "")} <= entries
    assert ("cvt.rn", "f32", "") in entries  # a dotted-opcode reading
    assert ("cvt.rn.f16x2", "f32", "") not in entries  # a type never joins the opcode


def test_all_types_joined_is_a_reading():
    # the dispatch table may name an instruction's types joined, in their written order
    entries = instruction_entries("cvt", ("rn", "f32", "s32"))
    assert {("cvt", "f32.s32", ""), ("cvt", "f32.s32", "rn")} <= entries
    assert ("cvt", "s32.f32", "") not in entries
    pack = instruction_entries("cvt", ("pack", "sat", "u2", "s32", "b32"))
    assert ("cvt", "u2.s32.b32", "pack") in pack


def test_dotted_opcodes_and_vectors():
    entries = instruction_entries("cp", ("async", "ca", "shared", "global"))
    assert {("cp.async", "", "ca"), ("cp.async", "", "shared"), ("cp", "", "async"),
            ("cp.async.ca", "", "global")} <= entries
    ld = instruction_entries("ld", ("global", "v4", "f32"))
    assert ("ld", "f32", "v4") in ld and ("ld", "f32", "global") in ld


def test_module_entries_reads_every_function():
    module = parse_ptx(textwrap.dedent("""\
        .version 8.0
        .target sm_90
        .address_size 64
        .func f() { .reg .b32 %r<2>; popc.b32 %r1, %r0; ret; }
        .visible .entry k() { .reg .b32 %r<2>; brev.b32 %r1, %r0; ret; }
    """))
    entries = module_entries(module)
    assert ("popc", "b32", "") in entries and ("brev", "b32", "") in entries


def test_unparsable_files_are_skipped_and_uncovered_lists_the_rest(tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text("this is not PTX")
    good = tmp_path / "good.ptx"
    good.write_text(".version 8.0\n.target sm_90\n.address_size 64\n"
                    ".visible .entry k() { .reg .b32 %r<2>; not.b32 %r1, %r0; ret; }\n")
    exercised = ptx_entries([bad, good])
    assert ("not", "b32", "") in exercised
    supported = [("not", "b32", ""), ("not", "b16", ""), ("ret", "", "")]
    assert uncovered(supported, exercised) == [("not", "b16", "")]
