"""``LOP3.LUT`` in the SASS lifter: three-input bitwise functions given by a lookup table.

Bit ``i`` of ``LOP3.LUT d, a, b, c, lut`` is ``lut[a_i<<2 | b_i<<1 | c_i]``. With ``RZ`` or an
all-ones immediate fixing inputs, the table often reduces to a function of at most two
registers: a constant, a move, ``not``, ``and``, ``or``, ``xor`` or ``x & ~y``
(:func:`_reduce_lut`), lifted exactly. With one input a constant mask ``m`` (a bit-field
insert or select), the result is one two-input function ``g1`` where ``m`` has a 1 and
another ``g0`` where it has a 0: ``(g1 & m) | (g0 & ~m)`` (:func:`_masked_lut`), whose two
halves never share a bit, so the analysis reads the ``or`` as a sum. Any other table makes
the destination opaque. ``tests/sass/test_lift_modern.py`` checks every reduced form against
the lookup table on random words.
"""

from __future__ import annotations

from kernelcheck.ir.nodes import Immediate, NegatedPredicate, Register
from kernelcheck.sass.lift_memory import opaque_instruction
from kernelcheck.sass.lift_state import is_predicate
from kernelcheck.sass.lift_values import is_zero, opaque_pred, plain, src32, write32

__all__ = ["lop3"]


def _opaque_preds(lifter, names) -> None:
    for name in names:
        if name not in ("PT", "UPT"):
            opaque_pred(lifter, lifter.reg(name))
            lifter.state.kill(name)


def lop3(lifter, instr):
    """``LOP3.LUT [P,] d, a, b, c, lut`` (see the module documentation)."""
    operands = list(instr.operands)
    preds = []
    if operands and type(operands[0]) is Register and is_predicate(operands[0].name):
        preds.append(operands.pop(0).name)
    if len(operands) < 5 or type(operands[0]) is not Register or (
            type(operands[4]) is not Immediate):
        return opaque_instruction(lifter, instr)
    dest = operands[0].name
    inputs = operands[1:4]
    lut = operands[4].value & 0xFF
    _opaque_preds(lifter, preds)
    form = _reduce_lut(lut, inputs)
    if form is not None:
        value = _form_value(lifter, form)
        _nonzero_predicate(lifter, preds, operands, value)
        return write32(lifter, dest, lambda r: lifter.emit("mov", ("b32",), (r, value)))
    masked = _masked_lut(lifter, lut, inputs)
    if masked is None:
        return opaque_instruction(lifter, instr, skip_preds=True)
    _nonzero_predicate(lifter, preds, operands, masked)
    write32(lifter, dest, lambda r: lifter.emit("mov", ("b32",), (r, masked)))


def _nonzero_predicate(lifter, preds: list, operands: list, value) -> None:
    """``LOP3.LUT P, d, a, b, c, lut, !PT``: ``P`` is whether the result is not zero (how
    ptxas tests ``(x & 15) != 0`` for a pointer's alignment). Other predicate inputs leave
    ``P`` opaque."""
    last = operands[5] if len(operands) == 6 else None
    if len(preds) != 1 or preds[0] in ("PT", "UPT") or type(last) is not NegatedPredicate or (
            last.register.name not in ("PT", "UPT")):
        return
    target = lifter.reg(preds[0])
    lifter.emit("setp", ("ne", "u32"), (target, value, Immediate(0)))
    lifter.state.kill(preds[0])


def _form_value(lifter, form):
    """A PTX operand holding the value of a :func:`_reduce_lut` form (computed into a
    temporary, unguarded: it has no effect but the value)."""
    kind = form[0]
    if kind == "const":
        return Immediate(-1 if form[1] else 0)
    if kind == "id":
        return src32(lifter, form[1])
    out = lifter.tmp("b32")
    if kind == "not":
        lifter.emit("not", ("b32",), (out, src32(lifter, form[1])), guard=False)
        return out
    x, y = src32(lifter, form[1]), src32(lifter, form[2])
    if form[3]:  # x & ~y
        inverted = lifter.tmp("b32")
        lifter.emit("not", ("b32",), (inverted, y), guard=False)
        y = inverted
    lifter.emit(kind, ("b32",), (out, x, y), guard=False)
    return out


def _masked_lut(lifter, lut: int, inputs):
    """``LOP3.LUT`` of two registers and a constant mask ``m`` (a bit-field insert or
    select, ``(a & m) | (c & ~m)``, ``a | (c & m)``): where ``m`` has a 1 the result is
    one two-input function of the registers, where it has a 0 another. Lifted as
    ``(g1 & m) | (g0 & ~m)``, or ``g0 | (c & m)`` when ``g1 = g0 | c``; None when either
    function is not a simple one."""
    masks = [k for k, o in enumerate(inputs) if type(plain(o)) is Immediate
             and plain(o).kind == "int" and not is_zero(o)
             and plain(o).value & 0xFFFFFFFF != 0xFFFFFFFF]
    if len(masks) != 1:
        return None
    k = masks[0]
    mask = plain(inputs[k]).value & 0xFFFFFFFF
    ones = list(inputs)
    ones[k] = Immediate(0xFFFFFFFF)
    zeros = list(inputs)
    zeros[k] = Immediate(0)
    high, low = _reduce_lut(lut, ones), _reduce_lut(lut, zeros)
    if high is None or low is None:
        return None
    word = Immediate(mask - (1 << 32) if mask >= 1 << 31 else mask)
    inverse = ~mask & 0xFFFFFFFF
    inverse_word = Immediate(inverse - (1 << 32) if inverse >= 1 << 31 else inverse)
    if high[0] == "or" and not high[3] and low[0] == "id" and low[1] in high[1:3]:
        # a | (c & m): the bits outside m are a's, inside a | c.
        other = high[2] if high[1] is low[1] else high[1]
        part = lifter.tmp("b32")
        lifter.emit("and", ("b32",), (part, src32(lifter, other), word), guard=False)
        out = lifter.tmp("b32")
        lifter.emit("or", ("b32",), (out, src32(lifter, low[1]), part), guard=False)
        return out
    parts = []
    for form, bits in ((high, word), (low, inverse_word)):
        if form == ("const", 0):
            continue
        part = lifter.tmp("b32")
        lifter.emit("and", ("b32",), (part, _form_value(lifter, form), bits), guard=False)
        parts.append(part)
    if not parts:
        return Immediate(0)
    if len(parts) == 1:
        return parts[0]
    out = lifter.tmp("b32")
    lifter.emit("or", ("b32",), (out, parts[0], parts[1]), guard=False)
    return out


def _reduce_lut(lut: int, inputs):
    """The simple form of ``LOP3.LUT`` with these inputs: ``("const", bit)``, ``("id", x)``,
    ``("not", x)``, ``(op, x, y, invert_y)`` for and/or/xor; None otherwise."""
    fixed: dict[int, int] = {}
    variables = []
    for k, operand in enumerate(inputs):
        p = plain(operand)
        if is_zero(operand):
            fixed[k] = 0
        elif type(p) is Immediate and p.kind == "int" and p.value & 0xFFFFFFFF == 0xFFFFFFFF:
            fixed[k] = 1
        else:
            variables.append(k)
    if len(variables) > 2:
        return None

    def f(bits: dict[int, int]) -> int:
        index = (bits[0] << 2) | (bits[1] << 1) | bits[2]
        return (lut >> index) & 1

    table = {}
    for combo in range(1 << len(variables)):
        bits = dict(fixed)
        for j, k in enumerate(variables):
            bits[k] = (combo >> (len(variables) - 1 - j)) & 1
        table[combo] = f(bits)
    values = tuple(table[c] for c in range(1 << len(variables)))
    if len(set(values)) == 1:
        return ("const", values[0])
    if len(variables) == 1:
        x = inputs[variables[0]]
        return ("id", x) if values == (0, 1) else ("not", x)
    x, y = inputs[variables[0]], inputs[variables[1]]
    forms = {(0, 0, 0, 1): ("and", x, y, False), (0, 1, 1, 1): ("or", x, y, False),
             (0, 1, 1, 0): ("xor", x, y, False), (0, 0, 1, 0): ("and", x, y, True),
             (0, 1, 0, 0): ("and", y, x, True)}
    # ``values`` is the table of (x, y) = (0, 0), (0, 1), (1, 0), (1, 1).
    one_input = {(0, 0, 1, 1): ("id", x), (1, 1, 0, 0): ("not", x),
                 (0, 1, 0, 1): ("id", y), (1, 0, 1, 0): ("not", y)}
    if values in one_input:
        return one_input[values]
    return forms.get(values)
