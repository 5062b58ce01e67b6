"""The emulator's dispatch table: which instruction forms it runs, declared next to each op.

Every op module registers its factories with :func:`register`, naming the opcode and the
*forms* it accepts: a :class:`Form` is a set of data types and a set of modifiers, and an
instruction is accepted when one form holds its data type and every one of its modifiers.
The compile step (:func:`check`) rejects any other instruction with
:class:`~kernelcheck.errors.UnsupportedFeature` naming the opcode, the data type and the
modifier it does not run, so a form the emulator has no exact semantics for is never run with
a silently wrong value.

How an instruction is described
    ``opcode`` is the opcode of the Kernel IR (the part before the first dot: ``cp`` for
    ``cp.async.ca.shared.global``). The *data type* is every type suffix of the instruction
    (:data:`TYPE_NAMES`) in the order written, joined by dots: ``s32`` for ``add.s32``,
    ``f32.s32`` for ``cvt.rn.f32.s32``, ``f32.f16.f16.f32`` for ``mma.sync...f32.f16.f16.f32``,
    ``""`` when it has none. The *modifiers* are every other dot-suffix (rounding, ``.sat``,
    ``.ftz``, ``.cc``, ``.hi``/``.lo``/``.wide``, state spaces, cache operators, vector
    widths, comparison operators, shapes, ...), in any order.

:func:`dispatch_entries` lists, for every form, the triples ``(opcode, type, modifier)`` for
each of its modifiers and ``(opcode, type, "")``, sorted and without duplicates: an
instruction ``opcode.m1.m2.type`` is described by ``(opcode, type, m1)``,
``(opcode, type, m2)`` and ``(opcode, type, "")``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kernelcheck.errors import UnsupportedFeature

__all__ = ["Form", "form", "register", "OPS", "FORMS", "TYPE_NAMES", "signature", "check",
           "dispatch_entries", "accepts"]

#: Every PTX type suffix (PTX ISA 5.2 "Types", and the packed and narrow float formats of
#: 9.7.9.21 cvt and 9.7.14 mma). A suffix in this set is part of the data type.
TYPE_NAMES = frozenset("""
    pred b1 b8 b16 b32 b64 b128 u8 u16 u32 u64 s8 s16 s32 s64 u4 s4 u2 s2
    f16 f16x2 bf16 bf16x2 tf32 f32 f64 f32x2 u16x2 s16x2
    e4m3 e5m2 e4m3x2 e5m2x2 e4m3x4 e5m2x4 e2m1 e2m1x2 e2m1x4 e3m2 e3m2x2 e3m2x4
    e2m3 e2m3x2 e2m3x4 ue8m0 ue8m0x2
""".split())

#: opcode -> factory(instr, cx) returning fn(st, fr, mask); filled by the op modules.
OPS: dict[str, Callable] = {}
#: opcode -> the forms the compile step accepts.
FORMS: dict[str, tuple[Form, ...]] = {}


@dataclass(frozen=True, slots=True)
class Form:
    """Data types and modifiers accepted together (any subset of ``modifiers`` may be given).

    ``required`` lists groups of modifiers of which at least one must be present (``shfl``
    needs one of ``up``/``down``/``bfly``/``idx``).
    """

    types: frozenset[str]
    modifiers: frozenset[str]
    required: tuple[frozenset[str], ...] = ()


def form(types: str | Iterable[str], modifiers: str | Iterable[str] = (),
         required: Iterable[str | Iterable[str]] = ()) -> Form:
    """A :class:`Form`; strings are split on white space (``form("s32 u32", "sat")``)."""
    if isinstance(types, str):
        types = types.split() or [""]
    if isinstance(modifiers, str):
        modifiers = modifiers.split()
    groups = tuple(frozenset(g.split() if isinstance(g, str) else g) for g in required)
    mods = frozenset(modifiers).union(*groups) if groups else frozenset(modifiers)
    return Form(frozenset(types), mods, groups)


#: (opcode, modifiers) already accepted: modules compile the same few forms many times.
_ACCEPTED: set[tuple[str, tuple[str, ...]]] = set()


def register(opcode: str, *forms: Form):
    """Decorator: ``factory`` compiles ``opcode`` in the given forms (added to earlier ones)."""
    def deco(factory):
        OPS[opcode] = factory
        declare(opcode, *forms)
        return factory
    return deco


def declare(opcode: str, *forms: Form) -> None:
    """Declare forms of an opcode the compile step handles itself (control flow, barriers)."""
    FORMS[opcode] = FORMS.get(opcode, ()) + tuple(forms)
    _ACCEPTED.clear()


def signature(instr) -> tuple[str, tuple[str, ...]]:
    """``(type, modifiers)`` of an instruction as :func:`dispatch_entries` describes it."""
    mods = instr.modifiers
    return (".".join(m for m in mods if m in TYPE_NAMES),
            tuple(m for m in mods if m not in TYPE_NAMES))


def accepts(f: Form, ty: str, mods: tuple[str, ...]) -> bool:
    """Whether form ``f`` holds the data type ``ty`` and every modifier of ``mods``."""
    return ty in f.types and all(m in f.modifiers for m in mods) and all(
        any(m in g for m in mods) for g in f.required)


def check(instr, where: str) -> None:
    """Raise :class:`UnsupportedFeature` unless a declared form accepts ``instr``."""
    opcode = instr.opcode
    key = (opcode, instr.modifiers)
    if key in _ACCEPTED:
        return
    forms = FORMS.get(opcode)
    if not forms:
        raise UnsupportedFeature(f"instruction '{instr.full_opcode}' (opcode {opcode} is not "
                                 f"run by the emulator)", where)
    ty, mods = signature(instr)
    if any(accepts(f, ty, mods) for f in forms):
        _ACCEPTED.add(key)
        return
    typed = [f for f in forms if ty in f.types]
    shown = ty or "(none)"
    if not typed:
        raise UnsupportedFeature(f"instruction '{instr.full_opcode}' (opcode {opcode}, type "
                                 f"{shown} is not run by the emulator)", where)
    allowed = set().union(*(f.modifiers for f in typed))
    bad = next((m for m in mods if m not in allowed), None)
    if bad is not None:
        raise UnsupportedFeature(f"instruction '{instr.full_opcode}' (opcode {opcode}, type "
                                 f"{shown}, modifier .{bad} is not run by the emulator)", where)
    missing = next((g for f in typed for g in f.required if not any(m in g for m in mods)),
                   None)
    if missing is not None:
        raise UnsupportedFeature(
            f"instruction '{instr.full_opcode}' (opcode {opcode}, type {shown}: one of "
            f"{', '.join('.' + m for m in sorted(missing))} is needed)", where)
    raise UnsupportedFeature(f"instruction '{instr.full_opcode}' (opcode {opcode}, type "
                             f"{shown}: the modifiers {'.'.join(mods)} are not run together "
                             f"by the emulator)", where)


def dispatch_entries() -> tuple[tuple[str, str, str], ...]:
    """The sorted, de-duplicated ``(opcode, type, modifier)`` entries the emulator runs.

    Derived from the forms the op modules declare (and the compile step enforces).

    Examples
    --------
    >>> import kernelcheck.emu
    >>> ("add", "s32", "sat") in kernelcheck.emu.dispatch_entries()
    True
    """
    import kernelcheck.emu  # noqa: F401  (the op modules register on import)
    out = set()
    for opcode, forms in FORMS.items():
        for f in forms:
            for ty in f.types:
                out.add((opcode, ty, ""))
                for m in f.modifiers:
                    out.add((opcode, ty, m))
    return tuple(sorted(out))
