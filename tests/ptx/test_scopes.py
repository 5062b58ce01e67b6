"""Lexical scopes: `{ }` blocks, shadowing, bare register names, labels, undeclared names.

The PTX here is written the way nvcc copies inline assembly into its output
(`asm("{ .reg .pred p; ... }")` blocks with bare names) and the way the PTX ISA's own
examples are written. Every kernel was accepted by ptxas (CUDA 13.0) unless it is an error
case, in which ptxas rejects it too.
"""

from __future__ import annotations

import pytest

from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.emu import Emulator
from kernelcheck.errors import PtxSyntaxError
from kernelcheck.ir.nodes import (
    Address,
    Guard,
    Label,
    NegatedPredicate,
    PredicatePair,
    Register,
    RegisterDecl,
    Symbol,
)
from kernelcheck.ptx.parser import parse_ptx
from kernelcheck.ptx.printer import print_ptx

HEADER = ".version 8.8\n.target sm_80\n.address_size 64\n"

# Outer code reads a[i]; a block declares its own %rd3 and %p1 (shadowing the outer ones),
# and after the block the outer %rd3 (still 4*i) addresses the write: a[i] is read and then
# written by the same thread. A front end with one register per name sees the block's
# %rd3 = 4*n in the write's address and calls the kernel disjoint.
SHADOWED_WRITE = HEADER + """
.visible .entry shadow_rw(.param .u64 a, .param .u32 n)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [a];
  ld.param.u32 %r3, [n];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, %r3;
  @%p1 bra DONE;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r2, [%rd4];
  {
    .reg .b64 %rd3;
    .reg .pred %p1;
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd4, %rd2, %rd3;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 add.u32 %r2, %r2, 1;
  }
  add.u32 %r2, %r2, 1;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r2;
DONE:
  ret;
}
"""

# The inline-asm style: bare names, a predicate declared in a block, `!p`, `p|q`.
INLINE_ASM = HEADER + """
.visible .entry inline_asm(.param .u64 out)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  // begin inline asm
  {
    .reg .pred p, q;
    .reg .b32 t;
    setp.ne.b32 p|q, %r1, 0;
    selp.b32 t, 7, 9, p;
    @!p mov.b32 t, 11;
    and.pred p, !q, p;
    @p add.u32 t, t, 1;
    mov.b32 %r2, t;
  }
  // end inline asm
  st.global.u32 [%rd2], %r2;
  ret;
}
"""


def _kernel(text, name=None):
    module = parse_ptx(text, filename="t.ptx")
    return module, (module.get_function(name) if name else module.kernels[0])


def _error(text) -> PtxSyntaxError:
    with pytest.raises(PtxSyntaxError) as info:
        parse_ptx(text, filename="t.ptx")
    return info.value


def test_shadowing_register_gets_its_own_ir_name():
    _, kernel = _kernel(SHADOWED_WRITE)
    decls = [s for s in kernel.body if type(s) is RegisterDecl]
    assert [d.names for d in decls[3:]] == [("%rd3$1",), ("%p1$1",)]
    inner = kernel.instructions[9:13]
    assert inner[0].operands[0] == Register("%rd3$1")
    assert inner[3].guard == Guard("%p1$1")
    # After the block, the outer names again.
    assert kernel.instructions[14].operands[2] == Register("%rd3")
    assert kernel.register_types["%rd3$1"] == "b64"


@pytest.mark.parametrize("engine", ["fast", "lark"])
def test_shadowed_read_then_write_is_never_idempotent(engine):
    module = parse_ptx(SHADOWED_WRITE, engine=engine)
    summary = analyze_kernel(module, module.kernels[0])
    assert summary.kernel_class == "never"
    assert "read" in summary.reasons[0] and "written" in summary.reasons[0]


def test_shadowed_read_then_write_is_a_clobber_for_the_emulator():
    module = parse_ptx(SHADOWED_WRITE)
    emu = Emulator()
    program = emu.load_module(module)
    a = emu.alloc(4 * 64)
    emu.copy_htod(a, bytes(4 * 64))
    result = emu.launch(program, "shadow_rw", grid=(1,), block=(32,), params=[a, 32],
                        trace=True)
    assert result.trace.verdict == "not_idempotent"
    values = emu.copy_dtoh(a, 4 * 32).view("u4")
    assert (values == 2).all()  # 0 -> 1 inside the block -> 2 after it


def test_bare_names_are_registers_in_every_position():
    _, kernel = _kernel(INLINE_ASM)
    setp, selp, mov, and_, add, out = kernel.instructions[3:9]
    assert setp.operands[0] == PredicatePair(Register("p"), Register("q"))
    assert selp.operands[0] == Register("t") and selp.operands[3] == Register("p")
    assert mov.guard == Guard("p", True)
    assert and_.operands[1] == NegatedPredicate(Register("q"))
    assert add.operands[:2] == (Register("t"), Register("t"))
    assert out.operands[1] == Register("t")
    assert kernel.register_types["p"] == "pred" and kernel.register_types["t"] == "b32"


def test_inline_asm_block_runs_on_the_emulator():
    module = parse_ptx(INLINE_ASM)
    emu = Emulator()
    out = emu.alloc(4)
    emu.launch(emu.load_module(module), "inline_asm", grid=(1,), block=(1,), params=[out])
    # tid 0: p = false, q = true; t = 9, then !p: t = 11; p = !q & p = false: no add.
    assert emu.copy_dtoh(out, 4).view("u4")[0] == 11


def test_two_inline_asm_blocks_declaring_the_same_predicate():
    block = "{ .reg .pred p; setp.ne.b32 p, %r1, 0; @p add.u32 %r2, %r2, 1; }"
    text = HEADER + (".visible .entry k() { .reg .b32 %r<3>; mov.u32 %r1, %tid.x; "
                     f"mov.u32 %r2, 0; {block} {block} {block} ret; }}")
    _, kernel = _kernel(text)
    guards = [i.guard.register for i in kernel.instructions if i.guard is not None]
    assert guards == ["p", "p$1", "p$2"]


def test_renamed_names_avoid_names_the_function_already_uses():
    text = HEADER + (".visible .entry k() { .reg .b32 %r1, %r1$1; "
                     "{ .reg .b32 %r1; mov.u32 %r1, 1; } mov.u32 %r1$1, 2; ret; }")
    _, kernel = _kernel(text)
    assert kernel.instructions[0].operands[0] == Register("%r1$2")
    assert kernel.instructions[1].operands[0] == Register("%r1$1")


def test_nested_blocks_shadow_twice():
    text = HEADER + (".visible .entry k() { .reg .b32 x; mov.u32 x, 1; "
                     "{ .reg .b32 x; mov.u32 x, 2; { .reg .b32 x; mov.u32 x, 3; } "
                     "add.u32 x, x, 1; } add.u32 x, x, 1; ret; }")
    _, kernel = _kernel(text)
    names = [i.operands[0].name for i in kernel.instructions[:-1]]
    assert names == ["x", "x$1", "x$2", "x$1", "x"]


def test_labels_are_scoped_by_block():
    # The mbarrier wait loop CUTLASS inlines many times: the same labels in sibling blocks.
    wait = ("{ .reg .pred P1; LAB_WAIT: setp.eq.u32 P1, %r1, 0; @P1 bra DONE; "
            "bra LAB_WAIT; DONE: }")
    text = HEADER + (".visible .entry k() { .reg .b32 %r<2>; mov.u32 %r1, %tid.x; "
                     f"{wait} {wait} ret; }}")
    _, kernel = _kernel(text)
    labels = [s.name for s in kernel.body if type(s) is Label]
    assert labels == ["LAB_WAIT", "DONE", "LAB_WAIT$1", "DONE$1"]
    branches = [i.operands[0].name for i in kernel.instructions if i.opcode == "bra"]
    assert branches == ["DONE", "LAB_WAIT", "DONE$1", "LAB_WAIT$1"]


def test_a_label_shadows_an_outer_label_inside_its_block():
    text = HEADER + (".visible .entry k() { .reg .b32 %r<2>; .reg .pred p; L: mov.u32 %r1, 0;"
                     " { L: setp.eq.u32 p, %r1, 0; @p bra L; } bra L; ret; }")
    _, kernel = _kernel(text)
    targets = [i.operands[0].name for i in kernel.instructions if i.opcode == "bra"]
    assert targets == ["L$1", "L"]


def test_a_branch_into_a_block_is_an_error():
    error = _error(HEADER + ".visible .entry k() { .reg .b32 %r<2>;\n bra L;\n"
                            " { L: mov.u32 %r1, 0; }\n ret; }")
    assert (error.line, error.column) == (5, 6)
    assert "undeclared identifier L" in str(error)


def test_a_register_shadowing_a_parameter_in_a_block():
    # ptxas accepts it: inside the block `out` is the register, also as an address.
    text = HEADER + (".visible .entry k(.param .u64 out) { .reg .b64 %rd<3>; "
                     "{ .reg .b64 out; mov.u64 out, 5; ld.param.u64 %rd1, [out]; } "
                     "ld.param.u64 %rd2, [out]; ret; }")
    _, kernel = _kernel(text)
    inner, outer = kernel.instructions[1], kernel.instructions[2]
    assert inner.operands[1] == Address(Register("out$1"))
    assert outer.operands[1] == Address(Symbol("out"))


def test_undeclared_register_names_file_line_and_column():
    error = _error(HEADER + ".visible .entry k()\n{\n  .reg .b32 %r<3>;\n"
                            "  add.s32 %r1, %r2, %r7;\n  ret;\n}\n")
    assert (error.filename, error.line, error.column) == ("t.ptx", 7, 21)
    assert "undeclared register %r7" in str(error)
    assert str(error).startswith("t.ptx:7:21: ")


def test_register_declared_only_in_a_closed_block_is_undeclared_after_it():
    error = _error(HEADER + ".visible .entry k()\n{\n  { .reg .pred p; }\n"
                            "  @p ret;\n}\n")
    assert (error.line, error.column) == (7, 4)
    assert "guard predicate p is undeclared" in str(error)


def test_use_before_declaration_is_undeclared():
    # ptxas: "Label expected for forward reference of 't'".
    error = _error(HEADER + ".visible .entry k() {\n mov.u32 t, 1;\n .reg .b32 t;\n ret; }\n")
    assert (error.line, error.column) == (5, 10)


@pytest.mark.parametrize("body", [
    ".reg .b32 a; .reg .b32 a;",
    ".reg .b32 %r<4>; .reg .b32 %r2;",
    ".reg .b64 L; L: ret;",
    ".reg .b64 out;",
    "{ .reg .b32 a; .reg .pred a; }",
])
def test_a_name_declared_twice_in_one_block_is_an_error(body):
    error = _error(HEADER + f".visible .entry k(.param .u64 out) {{ {body} ret; }}")
    assert "duplicate declaration" in str(error) and error.line == 4


def test_a_percent_named_parameter_is_not_a_register():
    _, kernel = _kernel(HEADER + ".visible .entry k(.param .u64 %out) { .reg .b64 %rd<2>; "
                                 "ld.param.u64 %rd1, [%out]; ret; }")
    assert kernel.instructions[0].operands[1] == Address(Symbol("%out"))


@pytest.mark.parametrize("engine", ["fast", "lark"])
def test_renamed_module_prints_and_parses_back_equal(engine):
    for text in (SHADOWED_WRITE, INLINE_ASM):
        module = parse_ptx(text, engine=engine)
        printed = print_ptx(module)
        assert parse_ptx(printed, engine=engine) == module
        assert print_ptx(parse_ptx(printed)) == printed


def test_both_engines_agree_on_scoped_code():
    for text in (SHADOWED_WRITE, INLINE_ASM):
        assert parse_ptx(text, engine="fast") == parse_ptx(text, engine="lark")


def test_a_use_outside_the_declaring_block_is_reported_at_that_use():
    # The block's own `t` is fine; the use after the block is the error.
    error = _error(HEADER + ".visible .entry k(.param .u64 out)\n{\n .reg .b64 %rd<3>;\n"
                            " ld.param.u64 %rd1, [out];\n { .reg .b32 t;\n   mov.u32 t, 1; }\n"
                            " st.global.u32 [%rd1], t;\n ret;\n}\n")
    assert (error.line, error.column) == (10, 24)
