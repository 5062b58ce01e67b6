"""Translation rules of the SASS lifter: integer arithmetic, moves, compares and control.

Each rule emits the PTX form of one SASS instruction through the helpers of
:mod:`kernelcheck.sass.lift_values`. Semantics follow NVIDIA's "CUDA Binary Utilities"
instruction-set tables (Volta to Hopper) and the forms nvdisasm of CUDA 12/13 prints:

* ``IMAD a, b, c`` is ``a*b + c`` modulo 2**32; ``.WIDE``/``.WIDE.U32`` the full signed /
  unsigned 64-bit product plus the 64-bit pair ``c``; ``.HI`` the high word (opaque here).
* ``IADD3 d, P, Q, a, b, c`` adds three words and writes the carries to ``P``/``Q``;
  ``IADD3.X`` adds them back in: the two instructions together are one 64-bit sum
  (:func:`_carry_chain`). ``LEA d, P, a, b, s`` is ``(a << s) + b``, and
  ``LEA.HI.X[.SX32]`` its high word; together ``(hi:a << s) + b``.
* ``ISETP.cmp[.U32].{AND,OR}[.EX] Pd, Pq, a, b, Pc[, Pchain]``: ``Pd = (a cmp b) op Pc``,
  ``Pq = !(a cmp b) op Pc``; ``.EX`` continues a compare of the low words begun by the
  previous ``ISETP`` into one 64-bit compare.
* ``LOP3.LUT d, a, b, c, lut``: :mod:`kernelcheck.sass.lift_logic`.
* ``SEL d, a, b, P`` is ``P ? a : b``; ``IMNMX``/``VIMNMX d, a, b, P`` is ``min`` when ``P``
  is true (``PT``) and ``max`` when false (``!PT``), unsigned with ``.U32``.

Memory instructions are in :mod:`kernelcheck.sass.lift_memory`. Anything else defines its
destinations as opaque values.
"""

from __future__ import annotations

from kernelcheck.ir.nodes import (
    ConstantRef,
    Guard,
    Immediate,
    Instruction,
    NegatedPredicate,
    Register,
    SpecialRegister,
    Symbol,
)
from kernelcheck.ir.operands import defs as _defs
from kernelcheck.sass.calls import bank_functions, branch_targets
from kernelcheck.sass.function import label_for_offset
from kernelcheck.sass.lift_chains import carry_high, lea, snap, snap_value, start_chain
from kernelcheck.sass.lift_logic import lop3
from kernelcheck.sass.lift_memory import MEMORY_RULES, call, opaque_instruction
from kernelcheck.sass.lift_modern import MODERN_RULES, add64
from kernelcheck.sass.lift_state import STABLE_SPECIALS, is_predicate
from kernelcheck.sass.lift_values import (
    build64,
    cbank_offset,
    const_pred,
    constant32,
    is_zero,
    opaque32,
    opaque_pred,
    pair64,
    plain,
    src32,
    src_pred,
    write32,
    write64,
)

__all__ = ["TRANSLATED_OPCODES", "lift_instruction"]

_CMP = {"LT": "lt", "LE": "le", "GT": "gt", "GE": "ge", "EQ": "eq", "NE": "ne"}
_INVERSE = {"lt": "ge", "ge": "lt", "le": "gt", "gt": "le", "eq": "ne", "ne": "eq"}
#: Instructions with no value and no memory access the analysis models: barriers, fences,
#: convergence marks, and the waits of programmatic dependent launch (``ACQBULK`` is PTX's
#: ``griddepcontrol.wait``, ``PREEXIT`` its ``griddepcontrol.launch_dependents``).
_NOTHING = frozenset({"NOP", "BSSY", "BSYNC", "WARPSYNC", "YIELD", "BAR", "MEMBAR", "FENCE",
                      "ERRBAR", "CCTL", "CCTLL", "DEPBAR", "LDGDEPBAR", "NANOSLEEP", "BREAK",
                      "BMOV", "PREEXIT", "ARRIVES", "CGAERRBAR", "ACQBULK"})


def lift_instruction(lifter, instr: Instruction) -> None:
    """Emit the PTX form of one SASS instruction (see the module documentation)."""
    op = instr.opcode
    if op in _NOTHING and not (op in ("BAR", "BMOV") and _defs(instr)):
        return
    modern = MODERN_RULES.get(op) or _UNIFORM_BRANCHES.get(op)
    if modern is not None:
        return modern(lifter, instr)
    if not instr.known:
        opaque_instruction(lifter, instr)
        return
    if "64" in instr.modifiers and op in _RULES and op not in _READS_64:
        # A 64-bit form of a 32-bit rule: the sum of register pairs, or opaque.
        return add64(lifter, instr)
    rule = _RULES.get(op) or MEMORY_RULES.get(op)
    if rule is None:
        opaque_instruction(lifter, instr)
        return
    rule(lifter, instr)


def _dest(instr: Instruction, k: int = 0) -> str | None:
    operand = instr.operands[k] if len(instr.operands) > k else None
    return operand.name if type(operand) is Register else None


def _split_predicates(operands):
    """Leading destination predicates and the rest (``IADD3 R2, P0, P1, a, b, c``)."""
    first, rest = operands[0], list(operands[1:])
    preds = []
    while rest and type(rest[0]) is Register and is_predicate(rest[0].name):
        preds.append(rest.pop(0).name)
    return first, preds, rest


def _opaque_preds(lifter, names) -> None:
    for name in names:
        if name not in ("PT", "UPT"):
            opaque_pred(lifter, lifter.reg(name))
            lifter.state.kill(name)


# ---------------------------------------------------------------------------- moves


def _mov(lifter, instr):
    dest = _dest(instr)
    if dest is None or len(instr.operands) < 2:
        return opaque_instruction(lifter, instr)
    if "64" in instr.modifiers:
        value = pair64(lifter, instr.operands[1])
        return write64(lifter, dest, _next(dest), value)
    source = instr.operands[1]
    value = src32(lifter, source)
    write32(lifter, dest, lambda r: lifter.emit("mov", ("b32",), (r, value)))
    _copy_fact(lifter, dest, source)


def _copy_fact(lifter, dest: str, source) -> None:
    """A copied register keeps the facts of its source; a constant-bank read gets one,
    and a register without such a fact ``("eq", source)``. A guarded copy of a 64-bit half
    is that half whenever the same guard holds."""
    source = plain(source)
    if lifter.guard is not None:
        fact = lifter.state.tags.get(source.name) if type(source) is Register else None
        if fact is not None and fact[0] == "v":
            lifter.state.tags[dest] = ("g", fact[1], fact[2]) + lifter.sass_guard
        elif fact is not None and fact[0] == "g" and fact[2] is not None and (
                fact[3:] in lifter.guard_keys):
            lifter.state.tags[dest] = fact
        return
    offset = cbank_offset(lifter, source)
    if type(source) is Immediate and source.kind == "int":
        lifter.state.tags[dest] = ("k", source.value & 0xFFFFFFFF)
    elif offset is not None:
        lifter.state.tags[dest] = ("cb", offset)
    elif type(source) is Register and source.name in lifter.state.tags and (
            lifter.state.tags[source.name][0] in ("v", "cb", "sr", "k", "pl")):
        lifter.state.tags[dest] = lifter.state.tags[source.name]
    elif type(source) is Register and not is_zero(source) and source.name != dest and (
            not source.name.startswith("%")):
        # A plain copy: the same value as its source until either is written.
        lifter.state.tags[dest] = ("eq", source.name)


def _next(name: str) -> str:
    """The register after ``name`` in a pair or quad; the zero register's is itself (a
    64-bit write to ``RZ``, such as ``CS2R RZ, SRZ``, discards both words)."""
    if name in ("RZ", "URZ"):
        return name
    prefix = "UR" if name.startswith("UR") else "R"
    return f"{prefix}{int(name[len(prefix):]) + 1}"


def _s2r(lifter, instr):
    dest = _dest(instr)
    source = instr.operands[1] if len(instr.operands) > 1 else None
    value = src32(lifter, source)
    write32(lifter, dest, lambda r: lifter.emit("mov", ("b32",), (r, value)))
    if dest is not None and lifter.guard is None and type(source) is SpecialRegister and (
            source.name in STABLE_SPECIALS):
        lifter.state.tags[dest] = ("sr", source.name)



def _cs2r(lifter, instr):
    """``CS2R Rd, SRZ`` zeroes the pair ``Rd:Rd+1`` (one register with ``.32``); any other
    special register (``SR_CLOCKLO``) makes both opaque."""
    dest = _dest(instr)
    source = instr.operands[1] if len(instr.operands) > 1 else None
    wide = "32" not in instr.modifiers
    if dest is None:
        return opaque_instruction(lifter, instr)
    if type(source) in (Register, SpecialRegister) and source.name == "SRZ":
        if wide:
            return write64(lifter, dest, _next(dest), pair64(lifter, Immediate(0)))
        return write32(lifter, dest, lambda r: lifter.emit("mov", ("b32",), (r, Immediate(0))))
    return _opaque_words(lifter, dest, 2 if wide else 1)


def _ldc(lifter, instr):
    """``LDC``/``ULDC``/``LDCU`` (sm_100's load into a uniform register): a read of the
    constant bank, which no kernel writes: a form not lifted only makes its destination
    registers opaque."""
    dest = _dest(instr)
    source = instr.operands[1] if len(instr.operands) > 1 else None
    mods = instr.modifiers
    if dest is None:
        return opaque_instruction(lifter, instr)
    if type(source) is not ConstantRef:
        return _opaque_words(lifter, dest, 4 if "128" in mods else 2 if "64" in mods else 1)
    if "64" in mods:
        symbol = _function_address(lifter, source)  # before the index register changes
        write64(lifter, dest, _next(dest), pair64(lifter, source))
        if symbol is not None:
            lifter.state.tags[dest] = ("fn", symbol)
        return None
    if "128" in mods:
        offset = source.static_offset
        if offset is None or dest in ("RZ", "URZ"):
            return _opaque_words(lifter, dest, 4)
        name = dest
        for k in range(4):
            word = ConstantRef(source.bank, offset + 4 * k)
            value = constant32(lifter, word)
            write32(lifter, name, lambda r, v=value: lifter.emit("mov", ("b32",), (r, v)))
            _copy_fact(lifter, name, word)
            name = _next(name)
        return None
    width, signed = 4, False
    for mod, (w, s) in {"U8": (1, False), "S8": (1, True), "U16": (2, False),
                        "S16": (2, True)}.items():
        if mod in mods:
            width, signed = w, s
    if any(m not in ("U8", "S8", "U16", "S16", "32") for m in mods):
        return _opaque_words(lifter, dest, 1)
    value = constant32(lifter, source, width, signed)
    write32(lifter, dest, lambda r: lifter.emit("mov", ("b32",), (r, value)))
    if width == 4:
        _copy_fact(lifter, dest, source)


def _function_address(lifter, source: ConstantRef) -> str | None:
    """``LDC.64 Rx, c[0x4][off]``: the runtime function whose address bank 4 holds there
    (:mod:`kernelcheck.sass.calls`), remembered on ``Rx`` so that a ``CALL.ABS Rx`` in a
    later block still names it; ``off`` may be an index register known to hold a
    constant."""
    if lifter.guard is not None or type(source.bank) is not int or source.bank != 4:
        return None
    offset = source.static_offset
    if offset is None and source.index is not None:
        fact = lifter.state.tags.get(source.index.name)
        offset = source.offset + fact[1] if fact and fact[0] == "k" else None
    return bank_functions(lifter.sass).get((4, offset)) if offset is not None else None


def _opaque_words(lifter, first: str, count: int) -> None:
    name = first
    for _ in range(count):
        if name not in ("RZ", "URZ"):
            write32(lifter, name, lambda r: opaque32(lifter, r))
        name = _next(name) if name[len("UR" if name.startswith("UR") else "R"):].isdigit() \
            else name


# ---------------------------------------------------------------------------- arithmetic


def _imad(lifter, instr):
    mods = instr.modifiers
    dest, preds, rest = _split_predicates(instr.operands)
    if type(dest) is not Register or len(rest) < 3:
        return opaque_instruction(lifter, instr)
    a, b, c = rest[:3]
    if "WIDE" in mods:
        kind = "u32" if "U32" in mods else "s32"
        scaled = _scaled_low(lifter, a, b) if kind == "u32" else None
        x, y = src32(lifter, a), src32(lifter, b)
        product = lifter.tmp("b64")
        lifter.emit("mul", ("wide", kind), (product, x, y), guard=False)
        total = lifter.tmp("b64")
        addend = pair64(lifter, c)
        lifter.emit("add", ("s64",), (total, product, addend), guard=False)
        _opaque_preds(lifter, preds)
        write64(lifter, dest.name, _next(dest.name), total)
        if scaled is not None:
            _remember_scaled_sum(lifter, dest.name, scaled, addend)
        return None
    if "HI" in mods:
        return _imad_hi(lifter, instr, dest, preds, a, b, c)
    if "X" in mods:
        return carry_high(lifter, instr, dest, [("mul", a, b), c], rest[3:])
    _opaque_preds(lifter, preds)
    if _completes_scaled_sum(lifter, dest.name, a, b, c):
        return None
    if is_zero(a) or is_zero(b):
        value = src32(lifter, c)
        write32(lifter, dest.name, lambda r: lifter.emit("mov", ("b32",), (r, value)))
        return _copy_fact(lifter, dest.name, c)
    high_fact = _high_word_of(lifter, a) if is_zero(c) and lifter.guard is None else None
    x, y, z = src32(lifter, a), src32(lifter, b), src32(lifter, c)
    write32(lifter, dest.name, lambda r: lifter.emit("mad", ("lo", "s32"), (r, x, y, z)))
    if "SHL" in mods and type(plain(b)) is Immediate and is_zero(c) and lifter.guard is None:
        value = plain(b).value & 0xFFFFFFFF
        if value and value & (value - 1) == 0 and type(plain(a)) is Register:
            _shift_fact(lifter, dest.name, plain(a).name, value.bit_length() - 1)
    elif high_fact is not None and type(plain(b)) is Immediate:
        # The high word of a 64-bit value times a constant: the part of the 64-bit product
        # that IMAD.WIDE.U32 of the low word leaves out.
        lifter.state.tags[dest.name] = ("mhi", high_fact, plain(b).value & 0xFFFFFFFF)


def _high_word_of(lifter, operand) -> str | None:
    """The 64-bit virtual register whose high word the register ``operand`` holds."""
    operand = plain(operand)
    if type(operand) is not Register:
        return None
    fact = lifter.state.tags.get(operand.name)
    return fact[1] if fact and fact[0] == "v" and fact[2] == "hi" else None


def _scaled_low(lifter, a, b) -> tuple | None:
    """``(x, k)`` for ``IMAD.WIDE.U32 d, a, k, c`` whose ``a`` holds the low word of the
    64-bit virtual register ``x`` and ``k`` is a constant; read before ``d`` is written."""
    a_p, b_p = plain(a), plain(b)
    if lifter.guard is not None or type(a_p) is not Register or type(b_p) is not Immediate:
        return None
    fact = lifter.state.tags.get(a_p.name)
    if not fact or fact[0] != "v" or fact[2] != "lo":
        return None
    return fact[1], b_p.value & 0xFFFFFFFF


def _remember_scaled_sum(lifter, low: str, scaled: tuple, addend: Register) -> None:
    """After ``IMAD.WIDE.U32 d, lo(x), k, c``: the pair ``d`` holds ``lo(x)*k + c``, which
    becomes ``x*k + c`` once its high word adds ``hi(x)*k`` (``IMAD.IADD``, below). The
    values of ``x`` and ``c`` are copied now (their registers may change before then); the
    entry is dropped when ``x`` or the pair is rewritten."""
    fact = lifter.state.tags.get(low)
    if not fact or fact[0] != "v" or fact[2] != "lo":
        return
    x, k = scaled
    x_copy, c_copy = lifter.tmp("b64"), lifter.tmp("b64")
    lifter.emit("mov", ("b64",), (x_copy, Register(x)), guard=False)
    lifter.emit("mov", ("b64",), (c_copy, addend), guard=False)
    lifter.state.pending[("scaled", fact[1])] = ("scaled", x, k, x_copy, c_copy,
                                                (fact[1], x))


def _completes_scaled_sum(lifter, dest: str, a, b, c) -> bool:
    """``IMAD.IADD hi, hi, 0x1, m`` (or ``IMAD hi, m, 0x1, hi``, or ``IADD3 hi, hi, m, RZ``)
    where ``lo:hi`` holds ``lo(x)*k + c`` from ``IMAD.WIDE.U32`` and ``m`` holds
    ``hi(x)*k``: the pair is then the 64-bit ``x*k + c`` (mod 2**64), how ptxas multiplies
    a 64-bit stride by a constant. Exact: the high word of ``x*k + c`` is that of
    ``lo(x)*k + c`` plus ``hi(x)*k`` modulo 2**32, and the low words agree. Written as that
    pair, the low register kept; False (nothing emitted) for anything else."""
    if lifter.guard is not None:
        return False
    b_p = plain(b)
    if type(b_p) is not Immediate or b_p.value & 0xFFFFFFFF != 1:
        return False
    for own, other in ((a, c), (c, a)):
        own_p, other_p = plain(own), plain(other)
        if type(own_p) is not Register or own_p.name != dest or type(other_p) is not Register:
            continue
        fact = lifter.state.tags.get(dest)
        if not fact or fact[0] != "v" or fact[2] != "hi":
            continue
        entry = lifter.state.pending.get(("scaled", fact[1]))
        low = _previous(dest)
        if entry is None or low is None or lifter.state.tags.get(low) != ("v", fact[1], "lo"):
            continue
        _, x, k, x_copy, c_copy, _ = entry
        high = lifter.state.tags.get(other_p.name)
        if not high or high[0] != "mhi" or high[2] != k:
            continue
        if not _same_value(lifter, x, high[1]):
            continue
        product = lifter.tmp("b64")
        lifter.emit("mul", ("lo", "u64"), (product, x_copy, Immediate(k)), guard=False)
        total = lifter.tmp("b64")
        lifter.emit("add", ("s64",), (total, product, c_copy), guard=False)
        write64(lifter, low, dest, total, low_kept=True)
        return True
    return False


def _same_value(lifter, a: str, b: str) -> bool:
    """Whether the 64-bit virtual registers ``a`` and ``b`` hold one value (the same
    register, or one moved from the other and neither written since)."""
    tags = lifter.state.tags
    return a == b or tags.get(a) == ("same", b) or tags.get(b) == ("same", a)


def _previous(name: str) -> str | None:
    """The register before ``name`` (``R16`` for ``R17``), when ``name`` is the odd one."""
    prefix = "UR" if name.startswith("UR") else "R"
    number = name[len(prefix):]
    if not number.isdigit() or int(number) % 2 == 0:
        return None
    return f"{prefix}{int(number) - 1}"


def _imad_hi(lifter, instr, dest, preds, a, b, c):
    """``IMAD.HI[.U32] d, a, b, c``: the high word of the 64-bit product plus the 64-bit
    addend held in the register pair ``c:c+1`` (``c`` the low word), lifted exactly so that
    a quotient keeps its bounds (the multiply-high of a division by a constant, by
    PyTorch's IntDivider magic number, and of the division by a runtime value).

    The addend is a pair: ptxas writes ``umulhi(a, b) + c`` as ``IMAD.HI.U32 R5, R6, R7,
    R4`` with ``c`` in ``R5`` and zero in ``R4``, and the Newton step ``r + umulhi(r, m)``
    of the division sequence with ``r`` in the high register of the pair. Only a register
    pair (or ``RZ``) is read this way; any other addend leaves the result opaque."""
    if "X" in instr.modifiers or any(p not in ("PT", "UPT") for p in preds):
        return opaque_instruction(lifter, instr)
    addend = plain(c)
    if not (is_zero(c) or type(addend) is Register and addend.name[:1] in ("R", "U")):
        return opaque_instruction(lifter, instr)
    signed = "U32" not in instr.modifiers
    x, y = src32(lifter, a), src32(lifter, b)
    product = lifter.tmp("b64")
    lifter.emit("mul", ("wide", "s32" if signed else "u32"), (product, x, y), guard=False)
    total = product
    if not is_zero(c):
        total = lifter.tmp("b64")
        lifter.emit("add", ("s64",), (total, product, pair64(lifter, addend)), guard=False)
    # The high word of the 64-bit sum: an arithmetic or a logical shift give the same low
    # 32 bits of the result.
    high = lifter.tmp("b64")
    lifter.emit("shr", ("u64",), (high, total, Immediate(32)), guard=False)
    write32(lifter, dest.name, lambda r: lifter.emit("cvt", ("u32", "u64"), (r, high)))


def _iadd3(lifter, instr):
    dest, preds, rest = _split_predicates(instr.operands)
    if type(dest) is not Register or len(rest) < 2:
        return opaque_instruction(lifter, instr)
    if "X" in instr.modifiers:
        return carry_high(lifter, instr, dest, rest[:3], rest[3:])
    chained = any(p not in ("PT", "UPT") for p in preds)
    if not chained and len(rest) >= 3:
        # IADD3 hi, hi, m, RZ: the high word of a 64-bit value times a constant, as
        # IMAD.IADD hi, hi, 0x1, m completes it (_completes_scaled_sum).
        words = [o for o in rest[:3] if not is_zero(o)]
        if len(words) == 2 and _completes_scaled_sum(lifter, dest.name, words[0],
                                                     Immediate(1), words[1]):
            return None
    snaps = [snap(lifter, o) if chained else None for o in rest[:3]]
    values = [snap_value(lifter, s) if s is not None else src32(lifter, o)
              for s, o in zip(snaps, rest[:3], strict=True)]

    def emit(r):
        if len(values) == 2:
            lifter.emit("add", ("s32",), (r, values[0], values[1]))
            return
        partial = lifter.tmp("b32")
        lifter.emit("add", ("s32",), (partial, values[0], values[1]), guard=False)
        lifter.emit("add", ("s32",), (r, partial, values[2]))

    write32(lifter, dest.name, emit)
    start_chain(lifter, preds, ("add", tuple(snaps), dest.name))


def _shf(lifter, instr):
    mods = instr.modifiers
    dest = _dest(instr)
    if dest is None or len(instr.operands) < 4:
        return opaque_instruction(lifter, instr)
    a, s, b = instr.operands[1:4]
    shift = plain(s)
    left = "L" in mods
    hi = "HI" in mods
    if "W" not in mods and type(shift) in (Register, ConstantRef) and (
            "U32" in mods or "S32" in mods):
        # A shift amount in a register: without .W the funnel shift clamps it to 32, as
        # PTX shl/shr clamp theirs (ISA §9.7.8.7-8), so the 32-bit shifts PTX lowers to
        # SHF (low word of a left shift, high word of a right shift) are PTX shl and shr.
        if left and not hi and is_zero(b):
            x, amount = src32(lifter, a), src32(lifter, s)
            write32(lifter, dest, lambda r: lifter.emit("shl", ("b32",), (r, x, amount)))
            return
        if not left and hi and is_zero(a):
            x, amount = src32(lifter, b), src32(lifter, s)
            kind = "s32" if "S32" in mods else "u32"
            write32(lifter, dest, lambda r: lifter.emit("shr", (kind,), (r, x, amount)))
            return
    if type(shift) is not Immediate or shift.kind != "int" or not 0 <= shift.value < 32:
        return opaque_instruction(lifter, instr)
    n = shift.value
    if left and not hi and is_zero(b) and ("U32" in mods or "S32" in mods):
        x = src32(lifter, a)
        write32(lifter, dest, lambda r: lifter.emit("shl", ("b32",), (r, x, Immediate(n))))
        if lifter.guard is None and type(plain(a)) is Register:
            _shift_fact(lifter, dest, plain(a).name, n)
        return
    if left and hi and "U64" in mods:
        # SHF.L.U64.HI d, a, s, b: the high word of (b:a) << s.
        wide = build64(lifter, a, b)
        shifted = lifter.tmp("b64")
        lifter.emit("shl", ("b64",), (shifted, wide, Immediate(n)), guard=False)
        upper = lifter.tmp("b64")
        lifter.emit("shr", ("u64",), (upper, shifted, Immediate(32)), guard=False)
        write32(lifter, dest, lambda r: lifter.emit("cvt", ("u32", "u64"), (r, upper)))
        if lifter.guard is None and type(plain(a)) is Register:
            tags = lifter.state.tags
            tags[dest] = ("v", shifted.name, "hi")
            lifter.state.shl_source[shifted.name] = (plain(a).name, n)
            for name, fact in list(tags.items()):
                if fact == ("shl", plain(a).name, n):
                    tags[name] = ("v", shifted.name, "lo")
        return
    if not left and not hi and ("U64" in mods or "S64" in mods) and n > 0 and is_zero(a):
        # SHF.R.S64 d, RZ, n, b (or .U64): the low word of (b:0) >> n, which is
        # b << (32 - n) whatever the signedness (n < 32 bits come down from b). ptxas's
        # `SHF.R.S64 R6, RZ, 0x1e, R0` is the low word of sext(R0) << 2, a scaled signed
        # index whose high word LEA.HI.X.SX32 adds.
        x = src32(lifter, b)
        write32(lifter, dest, lambda r: lifter.emit("shl", ("b32",),
                                                    (r, x, Immediate(32 - n))))
        if lifter.guard is None and type(plain(b)) is Register:
            _shift_fact(lifter, dest, plain(b).name, 32 - n)
        return
    if not left and hi and is_zero(a) and ("U32" in mods or "S32" in mods):
        signed = "S32" in mods
        x = src32(lifter, b)
        write32(lifter, dest, lambda r: lifter.emit(
            "shr", ("s32" if signed else "u32",), (r, x, Immediate(n))))
        if signed and n == 31 and lifter.guard is None and type(plain(b)) is Register:
            lifter.state.tags[dest] = ("sx", plain(b).name)
        return
    return opaque_instruction(lifter, instr)


def _shift_fact(lifter, dest: str, source: str, n: int) -> None:
    """``dest`` holds ``source << n``: the low word of a 64-bit shift whose high word
    ``SHF.L.U64.HI`` made (or will make) from the same ``source`` and ``n``."""
    state = lifter.state
    state.tags[dest] = ("shl", source, n)
    for fact in state.tags.values():
        if fact[0] == "v" and fact[2] == "hi" and state.shl_source.get(fact[1]) == (
                source, n):
            state.tags[dest] = ("v", fact[1], "lo")
            return


def _sel(lifter, instr):
    dest = _dest(instr)
    if dest is None or len(instr.operands) < 4:
        return opaque_instruction(lifter, instr)
    pred = src_pred(lifter, instr.operands[3])
    a, b = instr.operands[1], instr.operands[2]
    if pred is True or pred is False:
        chosen = src32(lifter, a if pred else b)
        return write32(lifter, dest, lambda r: lifter.emit("mov", ("b32",), (r, chosen)))
    if pred is None:
        return opaque_instruction(lifter, instr)
    if type(pred) is NegatedPredicate:
        pred, a, b = pred.register, b, a
    x, y = src32(lifter, a), src32(lifter, b)
    write32(lifter, dest, lambda r: lifter.emit("selp", ("b32",), (r, x, y, pred)))


def _minmax(lifter, instr):
    mods = instr.modifiers
    dest = _dest(instr)
    operands = instr.operands
    add_first = instr.opcode == "VIADDMNMX"
    need = 5 if add_first else 4
    if dest is None or len(operands) < need:
        return opaque_instruction(lifter, instr)
    pred = src_pred(lifter, operands[need - 1])
    if pred is not True and pred is not False:
        return opaque_instruction(lifter, instr)
    kind = "u32" if "U32" in mods else "s32"
    if add_first:
        first = lifter.tmp("b32")
        lifter.emit("add", ("s32",), (first, src32(lifter, operands[1]),
                                      src32(lifter, operands[2])), guard=False)
        second = src32(lifter, operands[3])
    else:
        first, second = src32(lifter, operands[1]), src32(lifter, operands[2])
    op = "min" if pred else "max"
    write32(lifter, dest, lambda r: lifter.emit(op, (kind,), (r, first, second)))


def _viadd(lifter, instr):
    dest = _dest(instr)
    if dest is None or len(instr.operands) != 3 or instr.modifiers:
        return opaque_instruction(lifter, instr)
    x, y = src32(lifter, instr.operands[1]), src32(lifter, instr.operands[2])
    write32(lifter, dest, lambda r: lifter.emit("add", ("s32",), (r, x, y)))


def _hfma2(lifter, instr):
    """``HFMA2[.MMA] d, -RZ, RZ, hi, lo`` is how compilers materialise a 32-bit constant:
    ``-0 * 0 + c`` is ``c`` in each half, so ``d`` holds the half-precision bits of ``hi``
    and ``lo``. Every other form is opaque."""
    operands = instr.operands
    dest = _dest(instr)
    if dest is None or len(operands) != 5 or not (is_zero(operands[1]) or _is_neg_zero(
            operands[1])) or not is_zero(operands[2]):
        return opaque_instruction(lifter, instr)
    halves = [_half_bits(operands[3]), _half_bits(operands[4])]
    if None in halves:
        return opaque_instruction(lifter, instr)
    value = Immediate((halves[0] << 16) | halves[1])
    write32(lifter, dest, lambda r: lifter.emit("mov", ("b32",), (r, value)))


def _is_neg_zero(operand) -> bool:
    from kernelcheck.ir.nodes import ModifiedOperand

    return type(operand) is ModifiedOperand and operand.negate and not operand.absolute \
        and not operand.invert and is_zero(operand.operand)


def _half_bits(operand) -> int | None:
    """The binary16 bits of an immediate that binary16 represents exactly, else None."""
    import struct

    operand = plain(operand)
    if type(operand) is not Immediate:
        return None
    if operand.kind == "int":
        return 0 if operand.value == 0 else None
    if operand.kind != "float":
        return None
    try:
        bits = struct.unpack("<H", struct.pack("<e", operand.value))[0]
    except (OverflowError, struct.error):
        return None
    if struct.unpack("<e", struct.pack("<H", bits))[0] != operand.value:
        return None
    return bits


# ---------------------------------------------------------------------------- predicates


def _isetp(lifter, instr):
    mods = instr.modifiers
    operands = instr.operands
    if len(operands) < 5:
        return opaque_instruction(lifter, instr)
    first, second, a, b, pc = operands[:5]
    cmp = next((_CMP[m] for m in mods if m in _CMP), None)
    combine = next((m.lower() for m in mods if m in ("AND", "OR", "XOR")), "and")
    unsigned = "U32" in mods
    targets = [o.name for o in (first, second) if type(o) is Register]
    extra = src_pred(lifter, pc)
    if cmp is None or extra is None or combine == "xor":
        return _opaque_preds(lifter, targets)
    if "EX" in mods:
        chain = operands[5] if len(operands) > 5 else None
        found = lifter.state.pending.get(chain.name) if type(chain) is Register else None
        if found is None or found[0] != "cmp" or found[1] != cmp or lifter.guard is not None:
            return _opaque_preds(lifter, targets)
        # The low words as the low compare read them (a register rewritten since, as by
        # `SHF.L.U64.HI R3, R16, 0x2, R17` after `ISETP ... R3, R0`, still pairs).
        low_a, low_b = found[2], found[3]
        x = build64(lifter, low_a.value, a, low_a.fact, low_a.name, low_a.unchanged(lifter))
        y = build64(lifter, low_b.value, b, low_b.fact, low_b.name, low_b.unchanged(lifter))
        kind = "u64" if unsigned else "s64"
    else:
        x, y = src32(lifter, a), src32(lifter, b)
        kind = "u32" if unsigned else "s32"
    for position, target in enumerate((first, second)):
        if type(target) is not Register or target.name in ("PT", "UPT"):
            continue
        this = cmp if position == 0 else _INVERSE[cmp]
        dest = lifter.reg(target.name)
        if extra is True and combine == "and" or extra is False and combine == "or":
            lifter.emit("setp", (this, kind), (dest, x, y))
        elif extra is True:
            const_pred(lifter, dest, True)
        elif extra is False:
            const_pred(lifter, dest, False)
        else:
            lifter.emit("setp", (this, kind, combine), (dest, x, y, extra))
        lifter.state.kill(target.name)
    if "EX" not in mods and type(first) is Register and unsigned and extra is True and (
            combine == "and") and lifter.guard is None and first.name not in ("PT", "UPT"):
        low_a, low_b = snap(lifter, a), snap(lifter, b)
        if low_a.modifier is None and low_b.modifier is None:
            # Until the predicate is rewritten: the `.EX` half reads the low words as they
            # were here, whatever their registers hold by then.
            lifter.state.pending[first.name] = ("cmp", cmp, low_a, low_b, ())


def _plop3(lifter, instr):
    operands = instr.operands
    if len(operands) < 6 or type(operands[5]) is not Immediate:
        targets = [o.name for o in operands[:2] if type(o) is Register]
        return _opaque_preds(lifter, targets)
    first, second = operands[0], operands[1]
    inputs = [src_pred(lifter, o) for o in operands[2:5]]
    lut = operands[5].value & 0xFF
    targets = [o.name for o in (first, second) if type(o) is Register]
    if type(second) is Register and second.name not in ("PT", "UPT") or any(
            i is None for i in inputs):
        return _opaque_preds(lifter, targets)
    variables = [k for k, i in enumerate(inputs) if i is not True and i is not False]
    if type(first) is not Register or first.name in ("PT", "UPT"):
        return
    dest = lifter.reg(first.name)
    values = []
    for combo in range(1 << len(variables)):
        bits = [int(i) if i is True or i is False else 0 for i in inputs]
        for j, k in enumerate(variables):
            bits[k] = (combo >> (len(variables) - 1 - j)) & 1
        values.append((lut >> ((bits[0] << 2) | (bits[1] << 1) | bits[2])) & 1)
    values = tuple(values)
    ins = [inputs[k] for k in variables]
    if len(set(values)) == 1:
        const_pred(lifter, dest, bool(values[0]))
    elif len(variables) == 1 and values == (0, 1):
        lifter.emit("mov", ("pred",), (dest, ins[0]))
    elif len(variables) == 1:
        lifter.emit("not", ("pred",), (dest, ins[0]))
    elif len(variables) == 2 and values == (0, 0, 0, 1):
        lifter.emit("and", ("pred",), (dest, ins[0], ins[1]))
    elif len(variables) == 2 and values == (0, 1, 1, 1):
        lifter.emit("or", ("pred",), (dest, ins[0], ins[1]))
    elif values.count(1) == 1 or values.count(0) == 1:
        # One true (or one false) row of the table: a conjunction of the inputs or their
        # negations (or a disjunction), as `PLOP3.LUT P0, PT, P0, P1, P2, 0x1, 0x0` is
        # !P0 && !P1 && !P2.
        conjunction = values.count(1) == 1
        row = values.index(1 if conjunction else 0)
        literals = []
        for j, value in enumerate(ins):
            bit = (row >> (len(ins) - 1 - j)) & 1
            literals.append(value if bit == conjunction else _negated(value))
        op = "and" if conjunction else "or"
        acc = literals[0]
        for literal in literals[1:-1]:
            partial = lifter.tmp("pred")
            lifter.emit(op, ("pred",), (partial, acc, literal))
            acc = partial
        lifter.emit(op, ("pred",), (dest, acc, literals[-1]))
    else:
        opaque_pred(lifter, dest)
    lifter.state.kill(first.name)


def _negated(value):
    return value.register if type(value) is NegatedPredicate else NegatedPredicate(value)


# ---------------------------------------------------------------------------- control


def _bra(lifter, instr):
    label = next((lifter.label_of(o) for o in instr.operands if lifter.label_of(o)), None)
    if label is None:
        return lifter.unknown("branch to an address that is not an instruction")
    preds = [o for o in instr.operands if type(o) is not Symbol]
    guard = lifter.guard
    if "ANY" in instr.modifiers or "ALL" in instr.modifiers:
        # BRA.U.ANY / .ALL: the warp branches when any (all) of its threads' guards hold, so
        # a thread may take the branch with its own guard false: an opaque choice.
        choice = lifter.tmp("pred")
        opaque_pred(lifter, choice)
        return lifter.emit("bra", (), (Symbol(label),), guard=Guard(choice.name))
    if preds or "DIV" in instr.modifiers:
        pred = src_pred(lifter, preds[0]) if len(preds) == 1 else None
        if pred is False:
            return
        if pred is True and "DIV" not in instr.modifiers:
            pass
        elif guard is None and pred is not None and pred is not True:
            if type(pred) is NegatedPredicate:
                guard = Guard(pred.register.name, True)
            else:
                guard = Guard(pred.name)
        elif pred is not None and pred is not True and "DIV" not in instr.modifiers:
            # ``@P0 BRA P1, L`` (``@!P0 BRA P1``): taken when both hold.
            negated = type(pred) is NegatedPredicate
            guard = _and_guard(lifter, _positive(lifter, pred.register if negated else pred,
                                                 negated))
        else:
            choice = lifter.tmp("pred")
            opaque_pred(lifter, choice)
            guard = Guard(choice.name)
    lifter.emit("bra", (), (Symbol(label),), guard=guard)


def _brx(lifter, instr):
    """``BRX R, base``: one of the targets EIATTR_INDIRECT_BRANCH_TARGETS lists, chosen by
    a value the analysis does not follow (each but the last behind an opaque predicate)."""
    known = branch_targets(lifter.sass, instr)
    labels = [label_for_offset(t) for t in known or ()]
    if not labels or any(lifter.block_of_label(label) is None for label in labels):
        return lifter.unknown()
    for label in dict.fromkeys(labels[:-1]):
        choice = lifter.tmp("pred")
        opaque_pred(lifter, choice)
        lifter.emit("bra", (), (Symbol(label),), guard=_and_guard(lifter, choice))
    lifter.emit("bra", (), (Symbol(labels[-1]),))


def _and_guard(lifter, choice: Register):
    """``choice`` and the SASS guard of the current instruction, as one guard."""
    guard = lifter.guard
    if guard is None:
        return Guard(choice.name)
    both = lifter.tmp("pred")
    lifter.emit("and", ("pred",), (both, _positive(lifter, Register(guard.register),
                                                   guard.negated), choice), guard=False)
    return Guard(both.name)


def _positive(lifter, register: Register, negated: bool) -> Register:
    """``register``, or a temporary holding its negation."""
    if not negated:
        return register
    flipped = lifter.tmp("pred")
    lifter.emit("not", ("pred",), (flipped, register), guard=False)
    return flipped


def _exit(lifter, instr):
    lifter.emit("exit")


def _ret(lifter, instr):
    lifter.emit("ret")


def _bpt(lifter, instr):
    """``BPT.TRAP`` is PTX's ``trap``: the launch aborts, so no run that reaches it is
    resumed or re-executed; an unconditional one ends the thread's path here. Other
    breakpoint forms (``BPT.DRAIN``, ``BPT.PAUSE``) do nothing the analysis models."""
    if "TRAP" in instr.modifiers:
        lifter.emit("trap")
        lifter.stopped = lifter.guard is None


_RULES = {
    "MOV": _mov, "UMOV": _mov, "MOV32I": _mov, "R2UR": _mov, "IMAD": _imad, "UIMAD": _imad,
    "IADD3": _iadd3, "UIADD3": _iadd3, "LEA": lea, "ULEA": lea, "SHF": _shf,
    "USHF": _shf, "LOP3": lop3, "ULOP3": lop3, "SEL": _sel, "USEL": _sel,
    "IMNMX": _minmax, "VIMNMX": _minmax, "UIMNMX": _minmax, "VIADDMNMX": _minmax,
    "VIADD": _viadd, "ISETP": _isetp, "UISETP": _isetp, "PLOP3": _plop3, "UPLOP3": _plop3,
    "HFMA2": _hfma2, "S2R": _s2r, "S2UR": _s2r, "CS2R": _cs2r, "LDC": _ldc, "ULDC": _ldc,
    "BRA": _bra, "JMP": _bra, "BRX": _brx, "JMX": _brx, "EXIT": _exit, "KILL": _exit,
    "RET": _ret, "CALL": call, "BPT": _bpt,
}
#: Opcodes the operand tables do not list: indirect branches through a uniform register,
#: and sm_100's constant load into a uniform register (``LDCU UR4, c[0x0][0x380]``, as
#: ``ULDC``).
_UNIFORM_BRANCHES = {"BRXU": _brx, "JMXU": _brx, "LDCU": _ldc}
#: Rules that read a ``.64`` modifier themselves (a 64-bit move or constant load).
_READS_64 = frozenset({"MOV", "UMOV", "MOV32I", "LDC", "ULDC", "CS2R"})
#: Every opcode a rule translates; any other becomes opaque values or an unmodelled
#: instruction (:func:`~kernelcheck.sass.lift_memory.opaque_instruction`).
TRANSLATED_OPCODES = frozenset(_RULES) | frozenset(MODERN_RULES) | frozenset(
    _UNIFORM_BRANCHES) | frozenset(MEMORY_RULES)

_ = (SpecialRegister,)
