"""Operand roles of PTX instructions, parsed from text as the front end produces them."""

from __future__ import annotations

import pytest

from kernelcheck.ir.nodes import Guard, Instruction, PredicatePair, Register, Sink
from kernelcheck.ir.operands import (
    CARRY_FLAG,
    access_width,
    branch_targets,
    defs,
    is_conditional,
    memory_space,
    memory_spaces,
    uses,
)

from .conftest import snippet

DECLS = """
.reg .pred %p<5>; .reg .b16 %rs<5>; .reg .b32 %r<20>; .reg .f32 %f<10>; .reg .b64 %rd<10>;
.reg .b32 %SP;
.shared .align 4 .b8 buf[64];
"""


def one(text: str) -> Instruction:
    """The single instruction of ``text``, parsed inside a kernel."""
    function = snippet(DECLS + text)
    (instr,) = function.instructions
    return instr


ROLES = [
    # text, defs, uses
    ("add.s32 %r1, %r2, %r3;", ("%r1",), ("%r2", "%r3")),
    ("add.s32 %r1, %r1, %r1;", ("%r1",), ("%r1",)),
    ("mov.u32 %r1, %tid.x;", ("%r1",), ()),
    ("@%p1 mov.u32 %r1, 5;", ("%r1",), ("%p1",)),
    ("@!%p2 bra L;", (), ("%p2",)),
    ("setp.lt.s32 %p1|%p2, %r1, %r2;", ("%p1", "%p2"), ("%r1", "%r2")),
    ("setp.lt.and.s32 %p1|%p2, %r1, %r2, !%p3;", ("%p1", "%p2"), ("%r1", "%r2", "%p3")),
    ("selp.b32 %r1, %r2, %r3, %p1;", ("%r1",), ("%r2", "%r3", "%p1")),
    ("ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];", ("%f1", "%f2", "%f3", "%f4"),
     ("%rd1",)),
    ("ld.global.v2.f32 {%f1, _}, [%rd1];", ("%f1",), ("%rd1",)),
    ("st.global.v2.f32 [%rd2], {%f1, %f2};", (), ("%rd2", "%f1", "%f2")),
    ("mov.b64 {%r1, %r2}, %rd1;", ("%r1", "%r2"), ("%rd1",)),
    ("mov.b64 %rd1, {%r1, %r2};", ("%rd1",), ("%r1", "%r2")),
    ("st.global.f32 [%rd1], %f1;", (), ("%rd1", "%f1")),
    ("red.global.add.u32 [%rd1], %r1;", (), ("%rd1", "%r1")),
    ("atom.global.add.u32 %r1, [%rd1], %r2;", ("%r1",), ("%rd1", "%r2")),
    ("atom.global.cas.b32 %r1, [%rd1], %r2, %r3;", ("%r1",), ("%rd1", "%r2", "%r3")),
    ("bar.sync 0;", (), ()),
    ("bar.red.popc.u32 %r1, 0, %p1;", ("%r1",), ("%p1",)),
    ("ret;", (), ()),
    ("shfl.sync.down.b32 %r1|%p1, %r2, %r3, %r4, %r5;", ("%r1", "%p1"),
     ("%r2", "%r3", "%r4", "%r5")),
    ("add.cc.u32 %r1, %r2, %r3;", ("%r1", CARRY_FLAG), ("%r2", "%r3")),
    ("addc.u32 %r4, %r5, %r6;", ("%r4",), ("%r5", "%r6", CARRY_FLAG)),
    ("addc.cc.u32 %r4, %r5, %r6;", ("%r4", CARRY_FLAG), ("%r5", "%r6", CARRY_FLAG)),
    ("ld.shared.u32 %r1, [buf+4];", ("%r1",), ()),
    ("cvta.to.global.u64 %rd1, %rd2;", ("%rd1",), ("%rd2",)),
    ("cp.async.ca.shared.global [%rd1], [%rd2], 16;", (), ("%rd1", "%rd2")),
    ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%rd1];",
     ("%r1", "%r2", "%r3", "%r4"), ("%rd1",)),
]


@pytest.mark.parametrize(("text", "expected_defs", "expected_uses"), ROLES)
def test_defs_and_uses(text, expected_defs, expected_uses):
    if "bra" in text:
        instr = snippet(DECLS + text + "\nL: ret;").instructions[0]
    else:
        instr = one(text)
    assert defs(instr) == expected_defs
    assert uses(instr) == expected_uses


def test_call_passes_arguments_through_param_memory():
    from kernelcheck.ptx.parser import parse_ptx

    from .conftest import HEADER

    module = parse_ptx(HEADER + ".extern .func (.param .b32 r) f (.param .b64 a);\n"
                       ".visible .entry k()\n{\n" + DECLS + """
    { .param .b64 param0; .param .b32 retval0;
      st.param.b64 [param0], %rd1;
      call.uni (retval0), f, (param0);
      ld.param.b32 %r1, [retval0]; }
    }""")
    store, call, load = module.get_function("k").instructions
    assert (defs(call), uses(call)) == ((), ())
    assert uses(store) == ("%rd1",) and memory_space(store) == "param"
    assert defs(load) == ("%r1",) and memory_space(load) == "param"


def test_a_call_defines_the_registers_it_returns_into_and_uses_its_register_arguments():
    from kernelcheck.ptx.parser import parse_ptx

    from .conftest import HEADER

    module = parse_ptx(HEADER + ".func (.reg .v2 .u32 r, .reg .b32 s) f (.reg .v2 .u32 a);\n"
                       ".visible .entry k()\n{\n" + DECLS + """
    .reg .v2 .u32 %v;
    call.uni (%v, %r3), f, (%v);
    }""")
    (call,) = module.get_function("k").instructions
    # A vector register is its elements (kernelcheck.ir.nodes.RegisterDecl).
    assert defs(call) == ("%v.x", "%v.y", "%r3")
    assert uses(call) == ("%v.x", "%v.y")


def test_unknown_opcode_first_register_is_a_definition():
    instr = Instruction("frobnicate", ("b32",), (Register("%r1"), Register("%r2")),
                        guard=Guard("%p1"), known=False)
    assert defs(instr) == ("%r1",)
    assert uses(instr) == ("%p1", "%r2")


def test_sink_in_predicate_pair_defines_nothing():
    instr = Instruction("setp", ("lt", "s32"), (PredicatePair(Register("%p1"), Sink()),
                                                Register("%r1"), Register("%r2")))
    assert defs(instr) == ("%p1",)
    assert uses(instr) == ("%r1", "%r2")


def test_is_conditional():
    assert is_conditional(one("@%p1 add.s32 %r1, %r2, %r3;"))
    assert not is_conditional(one("add.s32 %r1, %r2, %r3;"))


def test_branch_targets_of_bra_and_brx():
    function = snippet(DECLS + """
    ts: .branchtargets A, B, A;
    brx.idx %r1, ts;
    A: bra.uni B;
    B: ret;
    """)
    brx, bra, ret = function.instructions
    assert branch_targets(brx) == ("ts",)
    assert branch_targets(brx, {"ts": ("A", "B", "A")}) == ("A", "B")
    assert uses(brx) == ("%r1",) and defs(brx) == ()
    assert branch_targets(bra) == ("B",)
    assert branch_targets(ret) == ()


SPACES = [
    ("ld.global.nc.f32 %f1, [%rd1];", "global", 4),
    ("ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];", "global", 16),
    ("ld.f64 %rd1, [%rd2];", "generic", 8),
    ("st.shared.v2.u16 [%r1], {%rs1, %rs2};", "shared", 4),
    ("ld.local.u8 %rs1, [%rd1];", "local", 1),
    ("ld.const.b64 %rd1, [%rd2];", "const", 8),
    ("atom.global.cas.b64 %rd1, [%rd2], %rd3, %rd4;", "global", 8),
    ("red.shared.add.f32 [%r1], %f1;", "shared", 4),
    ("ldu.global.b32 %r1, [%rd1];", "global", 4),
    ("cp.async.cg.shared.global [%rd1], [%rd2], 16;", "shared", 16),
    ("add.s32 %r1, %r2, %r3;", None, None),
    ("cvta.to.global.u64 %rd1, %rd2;", None, None),
    ("cp.async.wait_group 0;", None, None),
]


@pytest.mark.parametrize(("text", "space", "width"), SPACES)
def test_memory_space_and_access_width(text, space, width):
    instr = one(text)
    assert memory_space(instr) == space
    assert access_width(instr) == width


def test_copy_names_destination_and_source_spaces():
    instr = one("cp.async.ca.shared.global [%rd1], [%rd2], 8;")
    assert memory_spaces(instr) == ("shared", "global")
