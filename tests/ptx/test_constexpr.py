"""Constant expressions (PTX ISA §4.5.4-4.5.5) in operands, addresses and initializers.

The expected values are what ptxas of CUDA 13.0 computes: each expression was compiled as
`mov.u64 %rd2, EXPR; st.global.u64 [...], %rd2;` and the constant read from the SASS.
"""

from __future__ import annotations

import pytest

from kernelcheck.emu import Emulator
from kernelcheck.errors import PtxSyntaxError, UnsupportedFeature
from kernelcheck.ir.nodes import (
    Address,
    Expression,
    Immediate,
    NegatedPredicate,
    PredicatePair,
    Register,
    Sink,
    Symbol,
)
from kernelcheck.ptx.constexpr import ConstExprError, evaluate, parse_expression
from kernelcheck.ptx.parser import parse_ptx
from kernelcheck.ptx.printer import print_ptx

HEADER = ".version 8.8\n.target sm_80\n.address_size 64\n"

PTXAS_VALUES = [
    ("(-1)>>60", -1), ("(.u64)(-1)>>60", 15), ("-7/2", -3), ("7 % 4", 3),
    ("-7 % 4", 1), ("-7 % -4", 2**64 - 7), ("7 % -4", 7), ("-8 % 3", 2),
    ("(.s64)-7 % (.s64)4", 1), ("-7 / -2", 3), ("7 / -2", -3), ("(-9) % 4", 3),
    ("0xFFFFFFFFFFFFFFFF+1", 0), ("~0", -1), ("!0", 1), ("!5", 0), ("1 ? 2 : 3", 2),
    ("0 ? 2 : 3", 3), ("1<<4", 16), ("(1<<4)+3", 19), ("WARP_SZ*2", 64), ("2 > 1 && 3", 1),
    ("5 | 2 ^ 7 & 3", 5), ("-1 < 0", 1), ("(.u64)-1 < 0", 0),
    ("0x8000000000000000 / 2", 2**62), ("-0x7FFFFFFFFFFFFFFF - 1", -2**63),
    ("1 << 63 >> 63", -1), ("07 + 010", 15), ("0b101", 5), ("(7 % 4) - 5 < 0", 0),
    ("(7 / 4) - 5 < 0", 1), ("(1 ? -1 : 2U) < 0", 1), ("(-1 >> 1U) < 0", 1),
    ("(7 % 4) >> 1", 1),
]


@pytest.mark.parametrize("text, value", PTXAS_VALUES)
def test_values_agree_with_ptxas(text, value):
    result, _ = evaluate(parse_expression(text))
    assert result % 2**64 == value % 2**64


@pytest.mark.parametrize("text, message", [
    ("1.5 < 2", "type mismatch"), ("3.7 * 2", "type mismatch"), ("(.s64)3.7", "integer"),
    ("1 / 0", "division by zero"), ("7 % 0", "division by zero"), ("(1 + 2", "expected '\\)'"),
    ("1 +", "ends too early"), ("~1.5", "takes an integer"),
])
def test_ill_typed_or_malformed_expressions_are_errors(text, message):
    with pytest.raises(ConstExprError, match=message):
        evaluate(parse_expression(text))


def _instruction_operands(operand_text: str, decls: str = ".reg .b32 %r<4>;"):
    module = parse_ptx(HEADER + f".visible .entry k(.param .u64 out) {{ {decls} "
                                f"add.u32 %r1, %r2, {operand_text}; ret; }}")
    return module.kernels[0].instructions


@pytest.mark.parametrize("operand, value", [
    ("16-1", 15), ("1<<4", 16), ("-(3*4)", -12), ("(1<<4)", 16), ("7 % 4", 3),
    ("1 ? 2 : 3", 2), ("(.s64)5", 5), ("WARP_SZ*2", 64), ("WARP_SZ", 32), ("~0", -1),
    ("(1)", 1), ("((2))*3", 6), ("-1", -1),
])
def test_constant_operands_fold_to_immediates(operand, value):
    (add, _ret) = _instruction_operands(operand)
    assert add.operands[2] == Immediate(value)


def test_float_expressions_fold_to_float_immediates():
    module = parse_ptx(HEADER + ".visible .entry k() { .reg .f32 %f<3>; "
                                "add.f32 %f1, %f1, 1.5*2.0; add.f32 %f1, %f1, -0.5; ret; }")
    first, second, _ = module.kernels[0].instructions
    assert first.operands[2] == Immediate(3.0, "float")
    assert second.operands[2] == Immediate(-0.5, "float")


def test_expressions_in_addresses():
    module = parse_ptx(HEADER + ".visible .entry k(.param .u64 out) { .reg .b64 %rd<3>; "
                                ".reg .b32 %r<3>; ld.param.u64 %rd1, [out]; "
                                "ld.global.u32 %r1, [%rd1+(2*4)]; ld.global.u32 %r1, [%rd1+2*4];"
                                " ld.global.u32 %r1, [%rd1 - 4 + 12]; ld.param.u64 %rd2, [out+0];"
                                " ret; }")
    loads = module.kernels[0].instructions[1:5]
    assert [i.operands[1] for i in loads] == [Address(Register("%rd1"), 8)] * 3 + [
        Address(Symbol("out"), 0)]


def test_register_plus_immediate_becomes_an_add_into_a_fresh_register():
    # ptxas computes `add.u32 %r2, %r1+1, 3` as %r1 + 4 (read from its SASS).
    module = parse_ptx(HEADER + ".visible .entry k(.param .u64 out) { .reg .b32 %r<4>;"
                                " .reg .b64 %rd<2>; ld.param.u64 %rd1, [out];"
                                " mov.u32 %r1, %tid.x; add.u32 %r2, %r1+1, 3;"
                                " st.global.u32 [%rd1], %r2; ret; }")
    kernel = module.kernels[0]
    lowered, add = kernel.instructions[2:4]
    assert (lowered.opcode, lowered.modifiers) == ("add", ("u32",))
    assert lowered.operands == (Register("$tmp1"), Register("%r1"), Immediate(1))
    assert add.operands == (Register("%r2"), Register("$tmp1"), Immediate(3))
    assert kernel.register_types["$tmp1"] == "b32"
    assert [i.index for i in kernel.instructions] == list(range(len(kernel.instructions)))
    emu = Emulator()
    out = emu.alloc(4 * 8)
    emu.launch(emu.load_module(module), "k", grid=(1,), block=(1,), params=[out])
    assert emu.copy_dtoh(out, 4).view("u4")[0] == 4
    assert parse_ptx(print_ptx(module)) == module


def test_symbol_plus_immediate_stays_an_address_constant():
    module = parse_ptx(HEADER + ".global .u32 tbl[4];\n.visible .entry k() { .reg .b64 %rd<2>;"
                                " mov.u64 %rd1, tbl+8; mov.u64 %rd1, 4+tbl; ret; }")
    first, second, _ = module.kernels[0].instructions
    assert first.operands[1] == Expression("tbl+8")
    assert second.operands[1] == Expression("tbl+4")


def test_predicate_forms_are_built_without_waiting():
    module = parse_ptx(HEADER + ".visible .entry k() { .reg .pred %p<3>; .reg .b32 %r<3>;"
                                " setp.lt.s32 %p1|_, %r1, %r2; setp.lt.s32 %p1|%p2, %r1, %r2;"
                                " and.pred %p1, !%p2, %p1; ret; }")
    a, b, c, _ = module.kernels[0].instructions
    assert a.operands[0] == PredicatePair(Register("%p1"), Sink())
    assert b.operands[0] == PredicatePair(Register("%p1"), Register("%p2"))
    assert c.operands[1] == NegatedPredicate(Register("%p2"))


def test_an_expression_error_points_into_the_operand():
    with pytest.raises(PtxSyntaxError) as info:
        parse_ptx(HEADER + ".visible .entry k() {\n .reg .b32 %r<3>;\n"
                           " add.u32 %r1, %r2, 1/0;\n ret; }", filename="e.ptx")
    assert (info.value.line, info.value.column) == (6, 20)
    assert "division by zero" in str(info.value)


def test_an_expression_over_registers_is_unsupported_with_its_place():
    with pytest.raises(UnsupportedFeature) as info:
        parse_ptx(HEADER + ".visible .entry k() {\n .reg .b32 %r<3>;\n"
                           " add.u32 %r1, %r2, %r1*2;\n ret; }", filename="e.ptx")
    assert str(info.value).startswith("e.ptx:6:20: unsupported: expression '%r1*2'")


def test_initializers_take_constant_expressions():
    module = parse_ptx(HEADER + ".global .u32 g[2] = {1+2, 1<<3};\n"
                                ".global .u64 h = g+4;\n"
                                ".global .u64 h3 = generic(g)+4;\n"
                                ".global .u8 bytes[4] = {0xFF(g), 0xFF00(g), 0xFF0000(g),"
                                " 0xFF000000(g)};\n"
                                ".global .f32 fl[2] = {1.5, -2.0};\n"
                                ".visible .entry k() { ret; }\n")
    g, h, h3, masks, fl = module.variables
    assert g.initializer == (Immediate(3), Immediate(8))
    assert h.initializer == (Expression("g+4"),)
    assert h3.initializer == (Expression("generic(g)+4"),)
    assert masks.initializer[1] == Expression("0xFF00(g)")
    assert fl.initializer == (Immediate(1.5, "float"), Immediate(-2.0, "float"))
    assert parse_ptx(print_ptx(module)) == module
