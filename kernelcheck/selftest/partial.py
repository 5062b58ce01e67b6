"""A PTX rewrite that runs part of a launch: blocks at or above a drawn index exit at once.

Idempotency is defined over partial executions (any subset of an instance's threads done,
their writes visible), so the re-execution oracle runs a kernel rewritten by
:func:`rewrite_early_exit` first and the unchanged kernel after it. At the kernel's entry the
rewrite computes the linear block index ``%ctaid.x + %nctaid.x * (%ctaid.y + %nctaid.y *
%ctaid.z)`` (x fastest, the order CUDA numbers blocks in) and executes ``exit`` when it is
at least ``first_exiting``; blocks below it run the unchanged body. A block whose threads all
exit at entry reaches no barrier, so no ``bar.sync`` waits on it (PTX ISA, "Parallel
Synchronization and Communication Instructions: bar": the barrier counts the threads of the
executing CTA only).

The rewritten module is printed by :func:`kernelcheck.ptx.printer.print_ptx`; it adds three
registers and nine instructions before the first instruction of the kernel, as the
fault-injection rewriter (:mod:`kernelcheck.faults.rewrite`) does.
"""

from __future__ import annotations

from dataclasses import replace

from kernelcheck.errors import UnsupportedFeature
from kernelcheck.ir.nodes import (
    Function,
    Guard,
    Immediate,
    Instruction,
    Module,
    Register,
    RegisterDecl,
    SpecialRegister,
)
from kernelcheck.ptx.printer import print_ptx

__all__ = ["rewrite_early_exit"]

_T, _L, _P = "%kcpx_t", "%kcpx_l", "%kcpx_p"


def _i(opcode: str, mods: tuple[str, ...], *ops, guard: Guard | None = None) -> Instruction:
    return Instruction(opcode, mods, tuple(ops), guard)


def _prologue(first_exiting: int) -> list:
    # linear = ctaid.x + nctaid.x * (ctaid.y + nctaid.y * ctaid.z), 32-bit: a grid has at
    # most 2^31-1 x 65535 x 65535 blocks, but the instances checked here have far fewer.
    return [RegisterDecl("b32", (_T, _L)), RegisterDecl("pred", (_P,)),
            _i("mov", ("u32",), Register(_L), SpecialRegister("%ctaid.z")),
            _i("mov", ("u32",), Register(_T), SpecialRegister("%nctaid.y")),
            _i("mul", ("lo", "u32"), Register(_L), Register(_L), Register(_T)),
            _i("mov", ("u32",), Register(_T), SpecialRegister("%ctaid.y")),
            _i("add", ("u32",), Register(_L), Register(_L), Register(_T)),
            _i("mov", ("u32",), Register(_T), SpecialRegister("%nctaid.x")),
            _i("mul", ("lo", "u32"), Register(_L), Register(_L), Register(_T)),
            _i("mov", ("u32",), Register(_T), SpecialRegister("%ctaid.x")),
            _i("add", ("u32",), Register(_L), Register(_L), Register(_T)),
            _i("setp", ("ge", "u32"), Register(_P), Register(_L), Immediate(first_exiting)),
            _i("exit", (), guard=Guard(_P))]


def _rewrite(function: Function, first_exiting: int) -> Function:
    body = []
    placed = False
    for stmt in function.body:
        if not placed and type(stmt) is Instruction:
            body += _prologue(first_exiting)
            placed = True
        body.append(stmt)
    if not placed:
        raise UnsupportedFeature("early exit in a kernel without instructions", function.name)
    return replace(function, body=tuple(body))


def rewrite_early_exit(module: Module, kernel: str, first_exiting: int) -> str:
    """PTX text of ``module`` where blocks of ``kernel`` numbered ``first_exiting`` or more
    exit at entry.

    Parameters
    ----------
    module : Module
        The parsed module.
    kernel : str
        The ``.entry`` to rewrite; other functions are printed unchanged.
    first_exiting : int
        The first linear block index that does nothing.

    Raises
    ------
    UnsupportedFeature
        No kernel of that name with a body.

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> m = parse_ptx(".version 8.0\\n.target sm_80\\n.address_size 64\\n"
    ...               ".visible .entry k() { ret; }")
    >>> "@%kcpx_p exit;" in rewrite_early_exit(m, "k", 2)
    True
    """
    items = []
    found = False
    for item in module.items:
        if type(item) is Function and item.name == kernel and item.body is not None \
                and item.is_kernel:
            item = _rewrite(item, int(first_exiting))
            found = True
        items.append(item)
    if not found:
        raise UnsupportedFeature(f"kernel {kernel} with a body", module.filename or "module")
    return print_ptx(replace(module, items=tuple(items)))
