"""Kernel parameters in SASS: the layout from ``.nv.info`` and the constant-bank reads of it.

SASS reads kernel parameters from constant bank 0. Where they start is recorded per kernel
in EIATTR_PARAM_CBANK (0x160 on sm_70..sm_89 and 0x210 on sm_90 and later for cubins of
CUDA 12/13, but kernelcheck reads it rather than assuming it). The layout comes from
EIATTR_KPARAM_INFO: ordinal, offset and size of each parameter. A SASS function carries
it as :class:`~kernelcheck.ir.nodes.Param` values named ``param_<ordinal>`` (offsets
relative to the start of the parameter area, as in PTX) and the directive
``("EIATTR_PARAM_CBANK", (bank, base, size))``.

:func:`param_at` answers "which parameter does ``c[0x0][0x218]`` hold", and
:func:`param_references` lists every such read of a function.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelcheck.binary.nvinfo import KernelParam
from kernelcheck.ir.nodes import ConstantRef, Function, ModifiedOperand, Param

__all__ = [
    "PARAM_CBANK_DIRECTIVE",
    "ParamSlice",
    "ParamReference",
    "params_from_kparam_info",
    "param_cbank",
    "param_at",
    "param_references",
    "rename_params",
]

PARAM_CBANK_DIRECTIVE = "EIATTR_PARAM_CBANK"

_SIZE_TYPES = {1: "b8", 2: "b16", 4: "b32", 8: "b64"}


@dataclass(frozen=True, slots=True)
class ParamSlice:
    """Bytes of one parameter read by a constant-bank operand."""

    param: Param
    byte: int


@dataclass(frozen=True, slots=True)
class ParamReference:
    """A read of a parameter: instruction index, operand position and the bytes read."""

    index: int
    operand: int
    param: str
    byte: int


def params_from_kparam_info(records: tuple[KernelParam, ...]) -> tuple[Param, ...]:
    """Parameters ``param_<ordinal>`` with the offsets and sizes of EIATTR_KPARAM_INFO.

    Sizes of 1, 2, 4 and 8 bytes get the untyped ``b8``..``b64``; any other size (a
    struct passed by value) is a ``b8`` array of that many bytes.

    Examples
    --------
    >>> from kernelcheck.binary.nvinfo import KernelParam
    >>> [(p.name, p.offset, p.size) for p in params_from_kparam_info((
    ...     KernelParam(0, 0, 0, 8, 0, 0, 0x1f, True),
    ...     KernelParam(0, 1, 8, 12, 0, 0, 0x1f, True)))]
    [('param_0', 0, 8), ('param_1', 8, 12)]
    """
    params = []
    for record in sorted(records, key=lambda r: r.offset):
        kind = _SIZE_TYPES.get(record.size)
        if kind is None:
            params.append(Param(f"param_{record.ordinal}", "b8", record.offset,
                                array=(record.size,)))
        else:
            params.append(Param(f"param_{record.ordinal}", kind, record.offset))
    return tuple(params)


def param_cbank(function: Function) -> tuple[int, int, int] | None:
    """``(bank, base, size)`` of the parameter area, or None when unknown."""
    for name, values in function.directives:
        if name == PARAM_CBANK_DIRECTIVE and len(values) == 3:
            return values
    return None


def param_at(function: Function, operand) -> ParamSlice | None:
    """The parameter a constant-bank operand reads, or None.

    None when the operand is not a constant-bank read of the parameter area, its offset
    depends on a register, or the function has no recorded layout.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Function, Param
    >>> f = Function("k", "entry", (Param("param_0", "b64", 0), Param("param_1", "b32", 8)),
    ...              directives=(("EIATTR_PARAM_CBANK", (0, 0x210, 12)),))
    >>> param_at(f, ConstantRef(0, 0x218))
    ParamSlice(param=Param(name='param_1', type='b32', offset=8, align=None, array=(), \
attributes=(), space='param', vector=None), byte=0)
    """
    if type(operand) is ModifiedOperand:
        operand = operand.operand
    if type(operand) is not ConstantRef:
        return None
    layout = param_cbank(function)
    offset = operand.static_offset
    if layout is None or offset is None or operand.bank != layout[0]:
        return None
    relative = offset - layout[1]
    if relative < 0 or relative >= layout[2]:
        return None
    for param in function.params:
        if param.offset <= relative < param.offset + max(param.size, 1):
            return ParamSlice(param, relative - param.offset)
    return None


def param_references(function: Function) -> tuple[ParamReference, ...]:
    """Every operand of ``function`` that reads a parameter, in instruction order."""
    found = []
    for instr in function.instructions:
        for position, operand in enumerate(instr.operands):
            hit = param_at(function, operand)
            if hit is not None:
                found.append(ParamReference(instr.index, position, hit.param.name, hit.byte))
    return tuple(found)


def rename_params(function: Function, names: tuple[tuple[str, int, int], ...]) -> Function:
    """The function with its parameters renamed from another layout of the same kernel.

    ``names`` holds ``(name, offset, size)`` per parameter (e.g. from the kernel's PTX).
    The renaming happens only when every offset and size agree; otherwise ``function`` is
    returned unchanged, since a mismatch means they are not the same kernel build.
    """
    mine = tuple((p.offset, p.size) for p in function.params)
    theirs = tuple((offset, size) for _, offset, size in names)
    if mine != theirs:
        return function
    renamed = tuple(
        Param(name, p.type, p.offset, p.align, p.array, p.attributes, p.space, p.vector)
        for p, (name, _, _) in zip(function.params, names, strict=True)
    )
    return Function(function.name, function.kind, renamed, function.return_params,
                    function.attributes, function.directives, function.body,
                    function.noreturn, function.pos)
