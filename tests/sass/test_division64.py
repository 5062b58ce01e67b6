"""ptxas's 64-bit division subroutine (kernelcheck.sass.division64): recognised in the
fixture cubins, its quotient lifted as div.u64, and any deviation left opaque."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kernelcheck.analysis import symbolic
from kernelcheck.analysis.terms import Bound, Const, Mul, contains
from kernelcheck.ir.nodes import Immediate
from kernelcheck.sass.analysis import lifted_module
from kernelcheck.sass.division64 import DivU64, match_div_u64
from kernelcheck.sass.inline import inline_subroutines
from kernelcheck.sass.loader import module_from_cubin

ROOT = "fixtures/cubin"


def _kernel(flavour: str):
    module = module_from_cubin(open(f"{ROOT}/{flavour}/gridstride.cubin", "rb").read())
    return module, module.get_function("copy_gridstride_i64")


def _subroutine(function):
    """The instructions from the division subroutine's label to its RET."""
    body = []
    inside = False
    for block in function.blocks:
        if any("div_u64" in label for label in block.labels):
            inside = True
        if inside:
            body.extend(block.instructions)
            if block.last is not None and block.last.opcode == "RET":
                return body
    raise AssertionError("no division subroutine")


@pytest.mark.parametrize("flavour, dividend", [("sm_80", ("R9", "R7")),
                                               ("sm_90", ("R7", "R9"))])
def test_the_fixture_subroutines_match_with_their_registers(flavour, dividend):
    _, function = _kernel(flavour)
    assert match_div_u64(_subroutine(function)) == DivU64(dividend, ("R4", "R5"),
                                                          ("R8", "R9"))


def test_a_changed_constant_matches_no_template():
    _, function = _kernel("sm_80")
    body = _subroutine(function)
    k = next(k for k, i in enumerate(body) if i.opcode == "IADD3" and any(
        type(o) is Immediate and o.value == 0x1FFFFFFE for o in i.operands))
    operands = tuple(Immediate(0x1FFFFFFF) if type(o) is Immediate else o
                     for o in body[k].operands)
    body[k] = replace(body[k], operands=operands)
    assert match_div_u64(body) is None


def test_a_register_used_for_two_template_registers_matches_no_template():
    _, function = _kernel("sm_80")
    body = _subroutine(function)
    first = body[0]  # I2F.U64.RP R6, R4: R4 stands for the divisor's low word
    body[0] = replace(first, operands=(first.operands[0], first.operands[0]))
    assert match_div_u64(body) is None


@pytest.mark.parametrize("flavour", ["sm_80", "sm_90"])
def test_the_call_gives_a_div_u64_quotient(flavour):
    module, function = _kernel(flavour)
    assert list(inline_subroutines(function).divisions.values())
    _, lifted = lifted_module(module, function)
    assert any(i.opcode == "div" and i.modifiers == ("u64",)
               for i in lifted.function.instructions)


def test_the_unrolled_loop_after_the_remainder_loop_is_capped(monkeypatch):
    """The 4x-unrolled grid-stride loop of sm_80 gets the cap ``x <= n - 1 - 3*s`` that
    kernelcheck.analysis.unroll proves from the remainder loop's count ``(q + 1) % 4``,
    with ``q`` the quotient of the division the subroutine computes (the 64-bit index in
    32-bit halves joined by carries)."""
    caps = []
    original = symbolic._Walker._unrolled_cap

    def recording(self, *args):
        cap = original(self, *args)
        caps.append(cap)
        return cap

    monkeypatch.setattr(symbolic._Walker, "_unrolled_cap", recording)
    module, function = _kernel("sm_80")
    kernel, lifted = lifted_module(module, function)
    symbolic.symbolic_kernel(kernel, lifted.function)
    assert any(type(c) is Bound and c.hi is not None and contains(
        c.hi, lambda u: type(u) is Mul and u.args[0] == Const(-3)) for c in caps)
