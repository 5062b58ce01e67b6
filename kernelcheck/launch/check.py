"""The LaunchCheck: a kernel's per-launch idempotency predicate, and its serialized forms.

A :class:`LaunchCheck` is computed once per kernel by :mod:`kernelcheck.analysis` and
evaluated at every launch (:mod:`kernelcheck.launch.evaluate`) from the raw parameter buffer
and the grid and block dimensions. It holds:

* ``program``: a flat SSA program of interval operations. Record ``k`` computes slot ``k``
  from earlier slots (``OP_*`` below); each slot evaluates to a set of integers (a union of
  closed ranges, possibly empty) or "invalid" (the affine model does not hold for the
  instance, e.g. an index may wrap around).
* ``accesses``: one record per global access: kind, width, the slot of its byte address, the
  parameter its base pointer comes from (set only where the allocation of that pointer may
  bound the access, :mod:`kernelcheck.analysis.bases`), whether it is indirect (1: depends
  on memory contents; 2: lies in a module variable, :data:`IN_MODULE`), its affine form (a
  constant slot plus up to four (coefficient, atom) slot pairs) for the exact lattice test,
  the slot of its *guard* (the path conditions under which it runs, each a ``CMP`` record:
  ``[(0, 0)]`` once they are false for the instance, when the access cannot run) and the
  *residue bits* ``m``: the address is congruent to its affine form modulo ``2**m`` whatever
  wraps occur (0: no such claim). A base may come with a *rebase* slot: the part of the
  offset that holds other pointer-wide parameters, which must keep the base inside its
  allocation for that allocation to bound the access (``rebase_slot``, format version 5).
  An access may also name an *expansion*: the slot of a ``TVAR`` record of ``%ctaid.x``,
  ``.y`` or ``.z`` (``expand_slot``). Its byte set is then computed once per block index
  along that dimension, with that slot held at the one index, and the union of those sets
  is its byte set (see :mod:`kernelcheck.launch.evaluate`): an access through a pointer the
  block reads from a table in the parameter buffer (``PARAMX``) is one range per block.
* ``pairs``: (write, read) access indices whose byte sets may overlap.
* ``not_proven``: when non-empty, every instance is ``not_proven`` for that reason.

Binary layout (little-endian, no pointers, fixed-size records), read by the C shim::

    header   8s  magic b"KCLCHK\\0\\5"          (format version 5 in the last byte)
             u32 n_program  u32 n_accesses  u32 n_pairs  u32 flags (bit 0: not_proven)
    program  n_program  x 5 x i64: op, a, b, c, d
    accesses n_accesses x 20 x i64: kind, width, addr_slot, base_offset, base_size,
             indirect, const_slot, n_atoms, coef0, atom0, coef1, atom1, coef2, atom2,
             coef3, atom3, guard_slot, residue_bits, expand_slot, rebase_slot
             (unused pairs and slots are -1)
    pairs    n_pairs    x 2 x i32: write_index, read_index

All slot references point to earlier records; -1 means "none".

Version history:

* 1: first layout.
* 2: new op ``NEQ`` (20): ``a`` = value slot, ``b`` = slot of a launch constant the value is
  known to differ from (a ``!=`` guard); its set is ``a``'s with that one point removed.
  ``TRIPMAX``'s ``d`` gains the loop-test mode in bits 9-10 (``d = bits | signed << 8 |
  mode << 9``; mode 0 ``lt``, 1 ``gt``, 2 ``ne``, see :mod:`kernelcheck.launch.evaluate`);
  version-1 readers took ``d >> 8`` as the signedness and must now take ``(d >> 8) & 1``.
  The record sizes are unchanged.
* 3: access records grow to 18 fields: ``guard_slot`` (the conjunction of the access's
  path conditions, or -1) and ``residue_bits``. New ops ``CMP`` (21: ``a``, ``b`` slots,
  ``c`` the comparison, an index into :data:`CMP_NAMES`; ``[(0, 0)]`` when no value of ``a``
  and ``b`` satisfies it, ``[(1, 1)]`` when every pair does, else ``[(0, 1)]``), ``POW2``
  (22: ``2**min(a, b)`` for the slot ``a`` of an unsigned shift amount and the width ``b``)
  and ``SHRV`` (23: ``floor(a / 2**min(b, c))``, ``a`` and ``b`` slots, ``c`` the width: a
  right shift by a register amount, which the ISA clamps to the width) and ``GATE`` (24:
  ``a``'s set, or the empty set when the guard slot ``b`` is false: a value ``selp``
  picks only under a condition). ``base_offset`` is now -1 for an access whose allocation
  may not bound it; ``indirect`` is 2 for an access inside a module variable.
* 4: access records grow to 19 fields: ``expand_slot`` (the ``TVAR`` slot of a block index
  the access is expanded over, or -1). New op ``PARAMX`` (25: ``a`` the slot of a byte
  offset into the parameter buffer, ``b`` the size, 1 to 8 bytes: the unsigned values
  stored at every offset ``a`` may take; invalid when one of them lies outside the
  buffer). Readers of version 3 refuse version 4 rows by the magic, and version 4 readers
  refuse version 3 rows (an instance of such a row is ``not_proven``).
* 5: access records grow to 20 fields: ``rebase_slot`` (or -1), for an access with a base
  (``base_offset``) whose offset also holds other pointer-wide parameters as indices
  (:func:`kernelcheck.analysis.bases.rebased_base`): the slot of that part ``T`` of the
  offset. The base's allocation bounds the access only when ``base + t`` lies inside it
  (its end included) for every value ``t`` of the slot; otherwise its bytes are unknown
  where the allocation would have bounded them. Version 4 and 5 readers refuse each
  other's rows by the magic.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field

__all__ = [
    "FORMAT_VERSION", "LaunchCheck", "AccessRecord", "OPS", "READ", "WRITE", "ATOMIC_OK",
    "ATOMIC_BAD", "DIM_NAMES", "TVAR_NAMES", "MAX_ATOMS", "TRIP_MODES", "CMP_NAMES",
    "IN_MODULE", "EXPAND_TVARS", "slot_refs", "bitwise_point", "and_clearing_low_bits",
]

FORMAT_VERSION = 5
_MAGIC = b"KCLCHK\x00\x05"
#: Loop-test modes of ``TRIPMAX`` records (bits 9-10 of ``d``).
TRIP_MODES = ("lt", "gt", "ne")

#: Operation codes of program records (op, a, b, c, d).
OPS = {
    "CONST": 0,    # c = value
    "PARAM": 1,    # a = byte offset, b = size: unsigned little-endian integer
    "DIM": 2,      # a = index into DIM_NAMES
    "TVAR": 3,     # a = index into TVAR_NAMES: [0, dim - 1] (laneid: [0, 31])
    "OPAQUE": 4,   # a = bits: [0, 2**bits - 1]
    "ADD": 5, "MUL": 6,
    "WRAP": 7,     # a = slot, b = bits, c = signed
    "MIN": 8, "MAX": 9, "JOIN": 10, "DIV": 11, "REM": 12,
    "SHR": 13,     # a = slot, b = shift
    "AND": 14, "OR": 15, "XOR": 16,
    "BOUND": 17,   # a = slot, b = lower-bound slot or -1, c = upper-bound slot or -1
    "ITER": 18,    # a = TRIPMAX slot or -1 (unbounded)
    "TRIPMAX": 19,  # a = x0 slot, b = step slot, c = bound slot,
                    # d = bits | signed << 8 | mode << 9 (TRIP_MODES)
    "NEQ": 20,     # a = slot, b = slot of a value it differs from
    "CMP": 21,     # a, b = slots, c = index into CMP_NAMES: 0 false, 1 true, [0, 1] either
    "POW2": 22,    # a = slot of a shift amount, b = width: 2**min(a, b)
    "SHRV": 23,    # a = value slot, b = amount slot, c = width: floor(a / 2**min(b, c))
    "GATE": 24,    # a = value slot, b = guard slot: a's set, or empty once b is false
    "PARAMX": 25,  # a = slot of a byte offset, b = size: the buffer's values at a
}
#: Comparisons of ``CMP`` records (``c``), over already wrapped operands.
CMP_NAMES = ("lt", "le", "gt", "ge", "eq", "ne")
DIM_NAMES = ("%ntid.x", "%ntid.y", "%ntid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z")
TVAR_NAMES = ("%tid.x", "%tid.y", "%tid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z", "%laneid")

READ, WRITE, ATOMIC_OK, ATOMIC_BAD = 0, 1, 2, 3
#: Dimensions an access may be expanded over: the ``TVAR`` indices of ``%ctaid.x/y/z``.
EXPAND_TVARS = (3, 4, 5)
#: ``AccessRecord.indirect`` of an access inside a module-scope ``.global`` variable: its
#: bytes are unknown, but outside every allocation of the allocation table.
IN_MODULE = 2

#: (coefficient, atom) pairs an access record can hold in the binary form.
MAX_ATOMS = 4
_KIND_NAMES = ("read", "write", "atomic_idempotent", "atomic_non_idempotent")


_REFS = {5: "ab", 6: "ab", 7: "a", 8: "ab", 9: "ab", 10: "ab", 11: "ab", 12: "ab", 13: "a",
         14: "ab", 15: "ab", 16: "ab", 17: "abc", 18: "a", 19: "abc", 20: "ab", 21: "ab",
         22: "a", 23: "ab", 24: "ab", 25: "a"}


def slot_refs(record) -> tuple[int, ...]:
    """The slots a program record reads (``-1``, "none", left out).

    >>> slot_refs((OPS["ADD"], 3, 4, 0, 0))
    (3, 4)
    """
    op, a, b, c, _ = record
    fields = {"a": a, "b": b, "c": c}
    return tuple(fields[f] for f in _REFS.get(op, "") if fields[f] >= 0)


@dataclass(frozen=True, slots=True)
class AccessRecord:
    """One global access of a :class:`LaunchCheck` (see the module documentation)."""

    kind: int
    width: int
    addr_slot: int
    base_offset: int = -1
    base_size: int = 0
    indirect: int = 0
    const_slot: int = -1
    atoms: tuple[tuple[int, int], ...] = ()
    label: str = ""
    guard_slot: int = -1
    residue_bits: int = 0
    expand_slot: int = -1
    rebase_slot: int = -1

    def to_json(self) -> dict:
        return {"kind": _KIND_NAMES[self.kind], "width": self.width, "addr": self.addr_slot,
                "base_offset": self.base_offset, "base_size": self.base_size,
                "indirect": self.indirect, "const": self.const_slot,
                "atoms": [list(a) for a in self.atoms], "label": self.label,
                "guard": self.guard_slot, "residue_bits": self.residue_bits,
                "expand": self.expand_slot, "rebase": self.rebase_slot}

    @classmethod
    def from_json(cls, data: dict) -> AccessRecord:
        return cls(_KIND_NAMES.index(data["kind"]), data["width"], data["addr"],
                   data["base_offset"], data["base_size"], data["indirect"], data["const"],
                   tuple(tuple(a) for a in data["atoms"]), data.get("label", ""),
                   data["guard"], data["residue_bits"], data["expand"], data["rebase"])


@dataclass(frozen=True, slots=True)
class LaunchCheck:
    """The launch-time idempotency predicate of one kernel (see the module documentation)."""

    kernel: str
    param_size: int
    program: tuple[tuple[int, int, int, int, int], ...]
    accesses: tuple[AccessRecord, ...]
    pairs: tuple[tuple[int, int], ...]
    not_proven: str = ""
    #: The compiled verdict function (:mod:`kernelcheck.launch.compiled`), built on first use.
    #: Not an init field, so ``dataclasses.replace`` never carries it over to a changed check.
    compiled: object = field(default=None, init=False, compare=False, hash=False, repr=False)

    def to_json(self) -> dict:
        """A JSON-ready dict with the format version."""
        return {"format_version": FORMAT_VERSION, "kernel": self.kernel,
                "param_size": self.param_size, "program": [list(r) for r in self.program],
                "accesses": [a.to_json() for a in self.accesses],
                "pairs": [list(p) for p in self.pairs], "not_proven": self.not_proven}

    @classmethod
    def from_json(cls, data: dict) -> LaunchCheck:
        if data.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"LaunchCheck format version {data.get('format_version')!r}, "
                             f"expected {FORMAT_VERSION}")
        return cls(data["kernel"], data["param_size"],
                   tuple(tuple(r) for r in data["program"]),
                   tuple(AccessRecord.from_json(a) for a in data["accesses"]),
                   tuple(tuple(p) for p in data["pairs"]), data.get("not_proven", ""))

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)

    def to_bytes(self) -> bytes:
        """The compact binary form (layout in the module documentation)."""
        out = [_MAGIC, struct.pack("<4I", len(self.program), len(self.accesses),
                                   len(self.pairs), 1 if self.not_proven else 0)]
        for record in self.program:
            out.append(struct.pack("<5q", *record))
        for a in self.accesses:
            if len(a.atoms) > MAX_ATOMS:
                raise ValueError(f"access {a.label!r} has {len(a.atoms)} affine atoms; the "
                                 f"binary form holds at most {MAX_ATOMS}")
            atoms = list(a.atoms) + [(-1, -1)] * (MAX_ATOMS - len(a.atoms))
            flat = [x for pair in atoms for x in pair]
            out.append(struct.pack("<20q", a.kind, a.width, a.addr_slot, a.base_offset,
                                   a.base_size, int(a.indirect), a.const_slot, len(a.atoms),
                                   *flat, a.guard_slot, a.residue_bits, a.expand_slot,
                                   a.rebase_slot))
        for w, r in self.pairs:
            out.append(struct.pack("<2i", w, r))
        return b"".join(out)

    @classmethod
    def from_bytes(cls, data: bytes, kernel: str = "", param_size: int = 0,
                   reason: str = "not proven") -> LaunchCheck:
        """Read the binary form (the kernel name and reason text are not part of it)."""
        if data[:8] != _MAGIC:
            raise ValueError("not a LaunchCheck binary (bad magic or version)")
        n_prog, n_acc, n_pairs, flags = struct.unpack_from("<4I", data, 8)
        pos = 24
        program = []
        for _ in range(n_prog):
            program.append(struct.unpack_from("<5q", data, pos))
            pos += 40
        accesses = []
        for _ in range(n_acc):
            f = struct.unpack_from("<20q", data, pos)
            pos += 160
            atoms = tuple((f[8 + 2 * k], f[9 + 2 * k]) for k in range(f[7]))
            accesses.append(AccessRecord(f[0], f[1], f[2], f[3], f[4], f[5], f[6],
                                         atoms, "", f[16], f[17], f[18], f[19]))
        pairs = []
        for _ in range(n_pairs):
            pairs.append(struct.unpack_from("<2i", data, pos))
            pos += 8
        return cls(kernel, param_size, tuple(program), tuple(accesses), tuple(pairs),
                   reason if flags & 1 else "")


def bitwise_point(op: int, x: int, y: int) -> int | None:
    """The exact REM (sign of the dividend), AND, OR or XOR record (``op`` 12, 14, 15, 16)
    of two single values, as every evaluator computes it; None for a remainder by zero."""
    if op == 12:
        if y == 0:
            return None
        r = abs(x) % abs(y)
        return r if x >= 0 else -r
    return x & y if op == 14 else x | y if op == 15 else x ^ y


#: Magnitudes the C evaluator (kernelcheck/shim/check.c, ``KC_INF``) takes as unbounded.
_UNBOUNDED = 1 << 110


def and_clearing_low_bits(lo: int, hi: int, mask: int) -> tuple[int, int] | None:
    """``(lo & mask, hi & mask)``: the exact range of ``x & mask`` over ``lo <= x <= hi``
    when ``lo >= 0`` and, on the bits any such ``x`` has, ``mask`` only clears those below
    its lowest set bit (``x & ~7``, ``x & 0xfffffff8``): the AND then rounds ``x`` down to
    a multiple, which keeps the order. ``None`` otherwise. Every evaluator computes the
    same (an AND record with one single value).

    >>> and_clearing_low_bits(0, 62, 0xfffffff8), and_clearing_low_bits(0, 62, 0xf0)
    ((0, 56), (0, 48))
    >>> and_clearing_low_bits(0, 62, 0x3b) is None  # clears bit 2 only: not a rounding
    True
    """
    if lo < 0 or hi >= _UNBOUNDED or abs(mask) >= _UNBOUNDED:
        return None  # an unbounded range (the C evaluator's infinity): the usual rule
    length = hi.bit_length()
    low = (mask & -mask).bit_length() - 1 if mask else length
    if low < length:
        run = (1 << (length - low)) - 1
        if (mask >> low) & run != run:
            return None
    return lo & mask, hi & mask
