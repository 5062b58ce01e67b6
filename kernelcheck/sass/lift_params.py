"""Parameter reads at a register-indexed offset: ``LDC R2, c[0x0][R0+0x220]``.

A kernel that indexes an array held by value in its parameters (a table of pointers and
sizes, :mod:`kernelcheck.analysis.tables`) reads constant bank 0 at an offset a register
adds to an immediate: ``LDC``/``ULDC`` (also ``.64``, ``.U8``, ``.S8``, ``.U16``,
``.S16``) with ``c[0x0][R+imm]`` or ``c[0x0][UR+imm]``. The lift writes it the way nvcc
writes the same read in PTX, so that one rule of the symbolic walker covers both::

    mov.b64     %b, param_0;           // the address of the parameter buffer
    cvt.u64.u32 %x, R;                  // the index register, unsigned
    add.s64     %a, %b, %x;
    ld.param.u32 %d, [%a + (imm - base)]

with ``base`` the bank offset of the parameters (``EIATTR_PARAM_CBANK``) and ``param_0``
the parameter at offset 0. The walker reads that as the parameter buffer at the offset
``R + imm - base``, which the launch check reads only where it lies inside the buffer
(``PARAMX``): a register value for which the sum leaves the parameter area makes the
read's value unknown, whatever the hardware does with such an offset.
"""

from __future__ import annotations

from kernelcheck.ir.nodes import Address, ConstantRef, Register, Symbol

__all__ = ["indexed_param_read"]

_KINDS = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}


def indexed_param_read(lifter, operand: ConstantRef, width: int, signed: bool = False):
    """A PTX-form register holding ``width`` bytes of constant bank 0 read at the
    register-indexed offset of ``operand``, or ``None`` when the operand is not such a read
    of the parameter bank (another bank, a static offset, no recorded layout)."""
    index = operand.index
    layout = lifter.cbank
    if layout is None or operand.bank != layout[0] or operand.static_offset is not None or (
            type(index) is not Register) or width not in _KINDS:
        return None
    first = next((p for p in lifter.sass.params if p.offset == 0), None)
    if first is None:
        return None
    from kernelcheck.sass.lift_values import src32

    value = src32(lifter, index)
    base = lifter.tmp("b64")
    lifter.emit("mov", ("b64",), (base, Symbol(first.name)), guard=False)
    wide = lifter.tmp("b64")
    lifter.emit("cvt", ("u64", "u32"), (wide, value), guard=False)
    address = lifter.tmp("b64")
    lifter.emit("add", ("s64",), (address, base, wide), guard=False)
    kind = _KINDS[width]
    dest = lifter.tmp("b64" if width == 8 else "b32")
    lifter.emit("ld", ("param", kind), (dest, Address(address, operand.offset - layout[1])),
                guard=False)
    if signed and width < 4:
        extended = lifter.tmp("b32")
        lifter.emit("cvt", ("s32", "s" + kind[1:]), (extended, dest), guard=False)
        return extended
    return dest
