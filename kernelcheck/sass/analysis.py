"""The idempotency analysis of SASS kernels: lift, then the analysis every kernel gets.

:func:`analyze_sass_kernel` lifts a SASS kernel (:mod:`kernelcheck.sass.lift`) and runs
:func:`kernelcheck.analysis.summary.analyze_kernel` on the result, so a SASS kernel gets the
same classes, conditions and :class:`~kernelcheck.launch.check.LaunchCheck` as a PTX one.
The parameter buffer layout is the kernel's EIATTR_KPARAM_INFO, the same bytes a launch
passes, so a LaunchCheck built here decides instances from the launch's own buffer.

A failure inside the lifter or the analysis is a fault of kernelcheck, not a verdict: it is
reported as a ``not_proven`` summary of that kernel naming it, never raised into a caller
such as the shim's helper (where it would fail every kernel of the image).
"""

from __future__ import annotations

import re
import time
from dataclasses import replace

from kernelcheck.analysis.collector import paused_collector
from kernelcheck.analysis.summary import (
    KernelSummary,
    analyze_kernel,
    forget_kernel_caches,
    unanalysed_summary,
)
from kernelcheck.ir.nodes import Function, Module
from kernelcheck.sass.lift import lift_kernel, module_variables

__all__ = ["analyze_sass_kernel", "analyze_sass_module", "lifted_module"]


def lifted_module(module: Module, function: Function):
    """A one-kernel module of the lifted ``function``, and the
    :class:`~kernelcheck.sass.lift.LiftedFunction`."""
    lifted = lift_kernel(function, module)
    return Module(None, module.target, module.address_size or 64,
                  module_variables((function,)) + (lifted.function,), module.filename), lifted


def analyze_sass_kernel(module: Module, function: Function) -> KernelSummary:
    """Analyze one SASS kernel: its class, reasons, accesses and LaunchCheck.

    Parameters
    ----------
    module : Module
        The SASS module (from :func:`kernelcheck.sass.loader.load_cubin_sass`).
    function : Function
        One of its kernels.

    Returns
    -------
    KernelSummary
        As :func:`kernelcheck.analysis.summary.analyze_kernel` returns for PTX; its
        accesses name the lifted instructions.

    Examples
    --------
    >>> from kernelcheck.sass.loader import module_from_cubin
    >>> m = module_from_cubin(open("fixtures/cubin/sm_90/atomics.cubin", "rb").read())
    >>> analyze_sass_kernel(m, m.get_function("atomic_add_all")).kernel_class
    'never'
    """
    with paused_collector(release=forget_kernel_caches):
        return _analyze_sass_kernel(module, function)


def _analyze_sass_kernel(module: Module, function: Function) -> KernelSummary:
    start = time.perf_counter()
    try:
        lifted, kernel = lifted_module(module, function)
        summary = analyze_kernel(lifted, kernel.function,
                                 locate=_sass_locator(function, kernel.origin))
    except Exception as error:  # noqa: BLE001 - a fault of ours: this kernel is not proven
        return unanalysed_summary(function, f"analysis fault on {function.name}: "
                                            f"{type(error).__name__}: {error}")
    reasons = tuple(_sass_reason(r, kernel, function) for r in summary.reasons)
    conditions = tuple(_sass_reason(c, kernel, function) for c in summary.conditions)
    check = summary.launch_check
    if check is not None and check.not_proven:
        check = replace(check, not_proven="; ".join(reasons))
    summary = replace(summary, reasons=reasons, conditions=conditions, launch_check=check)
    # Accesses name the SASS instruction they come from (index and opcode), so reports
    # line them up with the structural listing of the SASS.
    sass = function.instructions
    accesses = []
    for access in summary.accesses:
        origin = kernel.origin[access.index] if 0 <= access.index < len(kernel.origin) else -1
        if 0 <= origin < len(sass):
            access = replace(access, index=origin, instruction=sass[origin].full_opcode)
        accesses.append(access)
    return KernelSummary(summary.name, summary.kernel_class, summary.reasons,
                         tuple(accesses), summary.launch_check, summary.conditions,
                         time.perf_counter() - start, summary.z3_seconds, summary.params)


_LIFTED = re.compile(r"\b([a-z][a-z0-9_:.]*) #(\d+)")
_UNMODELLED = re.compile(r"^(unknown|unmodelled) instruction ")


def _sass_reason(reason: str, kernel, function: Function) -> str:
    """A reason restated with the SASS instructions its lifted instructions came from:
    ``unknown instruction sass.utmastg.2d #41 in k`` becomes ``unknown instruction
    UTMASTG.2D /*00c0*/ in k`` (as :func:`sass_site` names accesses), with why the lifter
    left it unmodelled where it knows (a call it did not inline, an address it could not
    read)."""
    whys = dict(kernel.reasons)
    sass = function.instructions
    first_why = []

    def name(found: re.Match) -> str:
        index = int(found.group(2))
        origin = kernel.origin[index] if 0 <= index < len(kernel.origin) else -1
        if not 0 <= origin < len(sass):
            return found.group(0)
        if index in whys and not first_why:
            first_why.append(whys[index])
        opcode, ident, line = sass_site(sass[origin])
        return f"{opcode} {ident}{line}"

    text = _LIFTED.sub(name, reason)
    if first_why and _UNMODELLED.match(reason):
        text = f"{text}: {first_why[0]}"
    return text


def sass_site(instruction) -> tuple[str, str, str]:
    """``("STG.E", "/*0120*/", ", line 14")``: a SASS instruction as reasons name it, by its
    offset in the kernel's code (as nvdisasm prints it) and its source line when the cubin
    has line information."""
    offset = instruction.pos.line if instruction.pos is not None else 0
    line = f", line {instruction.loc.line}" if instruction.loc is not None else ""
    return instruction.full_opcode, f"/*{offset:04x}*/", line


def _sass_locator(function: Function, origin):
    """Where a lifted instruction is, named by the SASS instruction it was lifted from (a
    reader has the SASS listing, not the lifted function)."""
    sass = function.instructions

    def locate(lifted) -> tuple[str, str, str]:
        index = origin[lifted.index] if 0 <= lifted.index < len(origin) else -1
        if 0 <= index < len(sass):
            return sass_site(sass[index])
        return lifted.full_opcode, "(lifted)", ""

    return locate


def analyze_sass_module(module: Module) -> tuple[KernelSummary, ...]:
    """:func:`analyze_sass_kernel` for every kernel of a SASS module, in order."""
    return tuple(analyze_sass_kernel(module, k) for k in module.kernels)
