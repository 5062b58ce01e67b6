"""Subroutine inlining in SASS (kernelcheck.sass.inline): the calls ptxas emits for
__noinline__ device functions and its own helpers, and the calls left in place."""

from __future__ import annotations

from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
from kernelcheck.ir import inlining
from kernelcheck.ir.nodes import Module, Param
from kernelcheck.sass import inline as inline_module
from kernelcheck.sass.analysis import analyze_sass_kernel
from kernelcheck.sass.function import function_from_sass
from kernelcheck.sass.inline import inline_subroutines
from kernelcheck.sass.lift import lift_kernel

PARAMS = (Param("param_0", "b64", 0), Param("param_1", "b32", 8))


def _function(lines: list[str], symbols: dict[str, int]):
    return function_from_sass(
        SassFunction("k", tuple(SassInstruction(16 * k, text) for k, text in
                                enumerate(lines))),
        params=PARAMS, directives=(("EIATTR_PARAM_CBANK", (0, 0x210, 12)),),
        symbols=symbols)


def _summary(lines, symbols):
    function = _function(lines, symbols)
    return analyze_sass_kernel(Module(None, ("sm_90",), 64, (function,), None), function)


# p[tid] is read by the kernel, then the subroutine at 0x70 writes p[tid] + 1 to it.
READ_THEN_CALL = [
    "S2R R0, SR_TID.X",                      # 0x00
    "LDC.64 R2, c[0x0][0x210]",              # 0x10
    "IMAD.WIDE.U32 R2, R0, 0x4, R2",         # 0x20
    "LDG.E R5, desc[UR4][R2.64]",            # 0x30
    "MOV R20, 0x60",                         # 0x40
    "CALL.REL.NOINC $k$store",               # 0x50
    "EXIT",                                  # 0x60
    "IADD3 R5, R5, 0x1, RZ",                 # 0x70: $k$store
    "STG.E desc[UR4][R2.64], R5",            # 0x80
    "RET.REL.NODEC R20 k",                   # 0x90
    "BRA 0xa0",                              # 0xa0
]


def test_a_subroutine_that_writes_is_analysed_at_its_call():
    summary = _summary(READ_THEN_CALL, {"$k$store": 0x70})
    assert summary.kernel_class == "never", summary.reasons
    # The write is reported as the subroutine's own STG, by its SASS index.
    assert [a.instruction for a in summary.accesses if a.kind == "write"] == ["STG.E"]
    assert [a.index for a in summary.accesses if a.kind == "write"] == [8]


def test_a_subroutine_called_at_an_offset_is_inlined():
    # ptxas's helpers without a symbol (its 64-bit division on uniform registers in
    # CUTLASS's grouped GEMMs) are called at an offset: ``CALL.REL.NOINC 0x70``.
    lines = list(READ_THEN_CALL)
    lines[5] = "CALL.REL.NOINC 0x70"
    summary = _summary(lines, {})
    assert summary.kernel_class == "never", summary.reasons
    assert [a.index for a in summary.accesses if a.kind == "write"] == [8]


def test_a_subroutine_that_reads_is_seen_before_the_kernel_writes():
    # The subroutine loads p[tid] (a read the kernel's registers alone would not show);
    # the kernel then stores to p[tid]: read then write by the same thread.
    summary = _summary([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.WIDE.U32 R2, R0, 0x4, R2",
        "MOV R20, 0x50",
        "CALL.REL.NOINC $k$load",
        "IADD3 R5, R5, 0x1, RZ",              # 0x50
        "STG.E desc[UR4][R2.64], R5",
        "EXIT",
        "LDG.E R5, desc[UR4][R2.64]",         # 0x80: $k$load
        "RET.REL.NODEC R20 k",
    ], {"$k$load": 0x80})
    assert summary.kernel_class == "never", summary.reasons


def test_a_guarded_call_is_skipped_when_its_guard_fails():
    lines = [
        "S2R R0, SR_TID.X",
        "ISETP.GE.U32.AND P0, PT, R0, 0x10, PT",
        "MOV R20, 0x40",
        "@P0 CALL.REL.NOINC $k$f",
        "EXIT",                               # 0x40
        "STG.E desc[UR4][R2.64], R0",         # 0x50: $k$f (writes: copied, not summarised)
        "RET.REL.NODEC R20 k",                # 0x60
    ]
    inlined = inline_subroutines(_function(lines, {"$k$f": 0x50})).function
    assert "CALL" not in [i.opcode for i in inlined.instructions[:5]]
    skip = inlined.instructions[3]
    assert skip.opcode == "BRA" and skip.guard.register == "P0" and skip.guard.negated


def test_nested_calls_are_inlined_inside_the_copy():
    lines = [
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.WIDE.U32 R2, R0, 0x4, R2",
        "MOV R20, 0x50",
        "CALL.REL.NOINC $k$outer",
        "EXIT",                               # 0x50
        "MOV R21, R20",                       # 0x60: $k$outer
        "MOV R20, 0x90",
        "CALL.REL.NOINC $k$inner",
        "MOV R20, R21",                       # 0x90
        "RET.REL.NODEC R20 k",
        "STG.E desc[UR4][R2.64], R0",         # 0xb0: $k$inner
        "RET.REL.NODEC R20 k",
    ]
    inlined = inline_subroutines(_function(lines, {"$k$outer": 0x60, "$k$inner": 0xb0}))
    assert not inlined.refused
    kernel_part = inlined.function.instructions
    assert sum(i.opcode == "STG" for i in kernel_part) >= 2  # the copy and the original
    summary = _summary(lines, {"$k$outer": 0x60, "$k$inner": 0xb0})
    assert summary.kernel_class == "always", summary.reasons


def test_recursion_is_not_inlined_and_says_so():
    summary = _summary([
        "MOV R20, 0x20",
        "CALL.REL.NOINC $k$f",
        "EXIT",                               # 0x20
        "MOV R20, 0x50",                      # 0x30: $k$f
        "CALL.REL.NOINC $k$f",
        "RET.REL.NODEC R20 k",                # 0x50
    ], {"$k$f": 0x30})
    assert summary.kernel_class == "not_proven"
    assert any("CALL.REL.NOINC /*0040*/" in r and "recursive call of $k$f" in r
               for r in summary.reasons), summary.reasons


def test_depth_limit_is_the_same_as_for_ptx(monkeypatch):
    monkeypatch.setattr(inline_module, "MAX_CALL_DEPTH", 1)
    monkeypatch.setattr(inlining, "MAX_CALL_DEPTH", 1)
    lines = [
        "MOV R20, 0x20",
        "CALL.REL.NOINC $k$a",
        "EXIT",                               # 0x20
        "MOV R20, 0x50",                      # 0x30: $k$a
        "CALL.REL.NOINC $k$b",
        "RET.REL.NODEC R20 k",                # 0x50
        "STG.E desc[UR4][R2.64], R0",         # 0x60: $k$b (writes: not summarised)
        "RET.REL.NODEC R20 k",                # 0x70
    ]
    summary = _summary(lines, {"$k$a": 0x30, "$k$b": 0x60})
    assert summary.kernel_class == "not_proven"
    assert any("call depth over 1" in r for r in summary.reasons), summary.reasons


def test_size_limit_leaves_the_call_unmodelled(monkeypatch):
    monkeypatch.setattr(inline_module, "MAX_INLINED_INSTRUCTIONS", 2)
    monkeypatch.setattr(inlining, "MAX_INLINED_INSTRUCTIONS", 2)
    summary = _summary(READ_THEN_CALL, {"$k$store": 0x70})
    assert summary.kernel_class == "not_proven"
    assert any("inlined code over 2 instructions" in r for r in summary.reasons)


def test_indirect_call_stays_unmodelled():
    summary = _summary([
        "MOV R20, 0x30",
        "LDC R2, c[0x0][0x218]",
        "CALL.REL.NOINC R2 k",
        "EXIT",
    ], {})
    assert summary.kernel_class == "not_proven"
    assert any("indirect call" in r for r in summary.reasons), summary.reasons


def test_a_call_without_the_return_address_set_is_not_inlined():
    lines = list(READ_THEN_CALL)
    lines[4] = "MOV R20, 0x80"  # not the offset after the call
    inlined = inline_subroutines(_function(lines, {"$k$store": 0x70}))
    assert list(inlined.refused.values()) == [
        "return address of the call of $k$store not recognised"]


# As ptxas compiles a large __noinline__ function called once (flash attention's
# compute_attn_1rowblock_splitkv): the caller sets no return address; the subroutine moves
# the offset after the call (0x60) into a register and returns through a copy of it.
SET_BY_CALLEE = [
    "S2R R0, SR_TID.X",                      # 0x00
    "LDC.64 R2, c[0x0][0x210]",              # 0x10
    "IMAD.WIDE.U32 R2, R0, 0x4, R2",         # 0x20
    "LDG.E R5, desc[UR4][R2.64]",            # 0x30
    "NOP",                                   # 0x40
    "CALL.REL.NOINC $k$store",               # 0x50
    "EXIT",                                  # 0x60
    "MOV R26, 0x60",                         # 0x70: $k$store
    "IADD3 R5, R5, 0x1, RZ",                 # 0x80
    "STG.E desc[UR4][R2.64], R5",            # 0x90
    "MOV R20, R26",                          # 0xa0
    "RET.REL.NODEC R20 k",                   # 0xb0
    "BRA 0xc0",                              # 0xc0
]


def test_a_return_address_set_by_the_subroutine_called_once_is_inlined():
    inlined = inline_subroutines(_function(SET_BY_CALLEE, {"$k$store": 0x70}))
    assert inlined.refused == {}
    summary = _summary(SET_BY_CALLEE, {"$k$store": 0x70})
    assert summary.kernel_class == "never", summary.reasons
    assert [a.instruction for a in summary.accesses if a.kind == "write"] == ["STG.E"]


def test_a_return_address_in_a_subroutine_called_twice_is_not_trusted():
    # Two calls enter the subroutine: a return address it sets itself cannot be right for
    # both, so neither call is inlined.
    lines = list(SET_BY_CALLEE)
    lines[4] = "CALL.REL.NOINC $k$store"     # 0x40: a second call
    inlined = inline_subroutines(_function(lines, {"$k$store": 0x70}))
    assert sorted(inlined.refused.values()) == [
        "return address of the call of $k$store not recognised"] * 2


def test_a_return_address_the_subroutine_sets_elsewhere_is_not_trusted():
    lines = list(SET_BY_CALLEE)
    lines[7] = "MOV R26, 0x80"               # not the offset after the call
    inlined = inline_subroutines(_function(lines, {"$k$store": 0x70}))
    assert list(inlined.refused.values()) == [
        "return address of the call of $k$store not recognised"]


def test_a_register_only_subroutine_is_summarised_not_copied():
    # The subroutine at 0x70 computes in registers only (as the slow path of a division
    # does): the call stays, the registers it writes become opaque, and the kernel's own
    # store through R2:R3, which the subroutine does not write, keeps its address.
    lines = [
        "S2R R0, SR_TID.X",                      # 0x00
        "LDC.64 R2, c[0x0][0x210]",              # 0x10
        "IMAD.WIDE.U32 R2, R0, 0x4, R2",         # 0x20
        "MOV R20, 0x50",                         # 0x30
        "CALL.REL.NOINC $k$f",                   # 0x40
        "STG.E desc[UR4][R2.64], R5",            # 0x50
        "EXIT",                                  # 0x60
        "IADD3 R5, R0, 0x1, RZ",                 # 0x70: $k$f
        "RET.REL.NODEC R20 k",                   # 0x80
    ]
    inlined = inline_subroutines(_function(lines, {"$k$f": 0x70}))
    assert not inlined.refused and inlined.inlined == 0
    assert list(inlined.summarized.values()) == [(("R5",), False)]
    summary = _summary(lines, {"$k$f": 0x70})
    assert summary.kernel_class == "always", summary.reasons
    # A subroutine that reads global memory is copied instead (its read is an access).
    lines[7] = "LDG.E R5, desc[UR4][R2.64]"
    assert inline_subroutines(_function(lines, {"$k$f": 0x70})).inlined == 2



def test_a_subroutine_called_many_times_is_examined_once(monkeypatch):
    # A math-heavy kernel calls a few slow paths hundreds of times: each call is
    # summarised alike, and the subroutine's blocks are walked once, not once per call.
    calls = 6
    lines = ["S2R R0, SR_TID.X", "LDC.64 R2, c[0x0][0x210]", "IMAD.WIDE.U32 R2, R0, 0x4, R2"]
    for _ in range(calls):
        after = 16 * (len(lines) + 2)
        lines += [f"MOV R20, {after:#x}", "CALL.REL.NOINC $k$f"]
    lines += ["STG.E desc[UR4][R2.64], R5", "EXIT"]
    entry = 16 * len(lines)
    lines += ["IADD3 R5, R0, 0x1, RZ", "RET.REL.NODEC R20 k"]
    examined = []
    real = inline_module._register_only
    monkeypatch.setattr(inline_module, "_register_only",
                        lambda region: examined.append(region) or real(region))
    inlined = inline_subroutines(_function(lines, {"$k$f": entry}))
    assert len(examined) == 1
    assert not inlined.refused and inlined.inlined == 0
    assert list(inlined.summarized.values()) == [(("R5",), False)] * calls
    assert _summary(lines, {"$k$f": entry}).kernel_class == "always"

def test_origins_name_the_instructions_copied_from():
    function = _function(READ_THEN_CALL, {"$k$store": 0x70})
    lifted = lift_kernel(function)
    stores = [k for k, i in enumerate(lifted.function.instructions)
              if i.opcode == "st" and "global" in i.modifiers]
    assert {lifted.origin[k] for k in stores} == {8}


def test_the_limits_are_those_of_the_ptx_analysis():
    from kernelcheck.analysis import symbolic

    assert inline_module.MAX_CALL_DEPTH == inlining.MAX_CALL_DEPTH == symbolic._MAX_CALL_DEPTH
    assert inline_module.MAX_INLINED_INSTRUCTIONS == inlining.MAX_INLINED_INSTRUCTIONS
