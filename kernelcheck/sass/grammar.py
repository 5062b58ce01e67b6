"""The SASS instruction parser: ``grammars/sass.lark`` and the transformer that turns one
instruction's text into Kernel IR parts, built during the LALR parse.

:func:`parse_instruction_text` is the one entry point; it returns an
:class:`InstructionParts` (guard, opcode, modifiers, operands) and keeps a bounded memo of
recent texts, since a library repeats the same instruction text many times
(``ULDC.64 UR4, c[0x0][0x208]``, ``NOP``, ``EXIT``). A text not in the memo goes through
:mod:`kernelcheck.sass.fast_path` (split at commas, each operand looked up in a memo, an
unseen operand parsed alone by this grammar); only what the fast path cannot split goes to
lark whole. Whatever lark raises is converted into
:class:`~kernelcheck.errors.SassSyntaxError` with the column and the expected tokens.

Operand conventions (nvdisasm, CUDA 12.x/13.x):

* ``R0``..``R255``, ``RZ``, ``UR0``..``UR63``, ``URZ``, ``P0``..``P6``, ``PT``, ``UP0``..``UP6``,
  ``UPT``, ``B0``..``B15`` (convergence barriers) and ``SB0``..``SB5`` (scoreboards) are
  :class:`Register`; ``SR_*`` names are :class:`SpecialRegister`; any other name is a
  :class:`Symbol` (a callee, a label, a texture dimension).
* A signed immediate (``-0x1``, ``-0.5``) is one :class:`Immediate`; ``-`` on anything else,
  ``|x|``, ``~x`` and dotted suffixes (``.reuse``, ``.H1``) make a :class:`ModifiedOperand`.
* ``{5,4,3,2,1,0}`` (``DEPBAR``'s scoreboard set) is a :class:`VectorOperand` of immediates.
* Decimal floats become ``Immediate(value, "float")``; ``+INF``/``-INF``/``QNAN`` too.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from lark import Lark, Transformer, v_args
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

from kernelcheck.errors import SassSyntaxError
from kernelcheck.ir.nodes import (
    ConstantRef,
    DescriptorRef,
    Guard,
    Immediate,
    MemoryRef,
    ModifiedOperand,
    NegatedPredicate,
    Operand,
    Register,
    SpecialRegister,
    Symbol,
    VectorOperand,
)
from kernelcheck.sass.fast_path import FastPath

__all__ = ["InstructionParts", "parse_instruction_text", "parse_with_grammar", "grammar_path",
           "is_register_name"]

_REGISTER = re.compile(r"(?:R\d+|RZ|UR\d+|URZ|P[0-6T]|UP[0-6T]|B\d+|SB\d+|PR|UPR)$")
_SCALE = re.compile(r"X(\d+)$")
_MEMO_LIMIT = 200_000


def is_register_name(name: str) -> bool:
    """Whether ``name`` is a SASS register (general, uniform, predicate, barrier).

    Examples
    --------
    >>> is_register_name("UR4"), is_register_name("SR_TID.X"), is_register_name("PT")
    (True, False, True)
    """
    return _REGISTER.match(name) is not None


@dataclass(frozen=True, slots=True)
class InstructionParts:
    """One parsed instruction, before it gets its index and position in a function."""

    guard: Guard | None
    opcode: str
    modifiers: tuple[str, ...]
    operands: tuple[Operand, ...]


def grammar_path() -> Path:
    """The SASS grammar file shipped with the package."""
    return Path(__file__).resolve().parent.parent / "grammars" / "sass.lark"


def _name_operand(text: str) -> Operand:
    head, _, rest = text.partition(".")
    if head.startswith("SR_") or head == "SRZ":
        return SpecialRegister(text)
    if _REGISTER.match(head):
        if not rest:
            return Register(head)
        return ModifiedOperand(Register(head), suffixes=tuple(rest.split(".")))
    return Symbol(text)


def _unwrap(operand: Operand) -> tuple[Operand, tuple[str, ...]]:
    if type(operand) is ModifiedOperand and not (
        operand.negate or operand.absolute or operand.invert
    ):
        return operand.operand, operand.suffixes
    return operand, ()


@v_args(inline=True)
class _Builder(Transformer):
    """Builds operands and :class:`InstructionParts` bottom-up during the parse."""

    def instruction(self, *items):
        guard = None
        operands: tuple = ()
        opcode_text = ""
        for item in items:
            if type(item) is Guard:
                guard = item
            elif type(item) is tuple:
                operands = item
            else:
                opcode_text = str(item)
        opcode, *modifiers = opcode_text.split(".")
        return InstructionParts(guard, opcode, tuple(modifiers), operands)

    def guard(self, *items):
        negated = len(items) == 2
        return Guard(str(items[-1]), negated)

    def operands(self, *items):
        return items

    def negated_predicate(self, _bang, name):
        return NegatedPredicate(Register(str(name)))

    def negated(self, value):
        if type(value) is Immediate:
            return Immediate(-value.value, value.kind)
        inner, suffixes = _unwrap(value)
        if type(inner) is ModifiedOperand:
            return ModifiedOperand(inner.operand, not inner.negate, inner.absolute,
                                   inner.invert, inner.suffixes + suffixes)
        return ModifiedOperand(inner, negate=True, suffixes=suffixes)

    def inverted(self, value):
        inner, suffixes = _unwrap(value)
        return ModifiedOperand(inner, invert=True, suffixes=suffixes)

    def absolute(self, value, *suffixes):
        inner, inner_suffixes = _unwrap(value)
        return ModifiedOperand(inner, absolute=True,
                               suffixes=inner_suffixes + tuple(s[1:] for s in suffixes))

    def suffixed(self, constant, *suffixes):
        if not suffixes:
            return constant
        return ModifiedOperand(constant, suffixes=tuple(s[1:] for s in suffixes))

    def name(self, token):
        return _name_operand(str(token))

    def hex(self, token):
        return Immediate(int(token, 16))

    def int(self, token):
        return Immediate(int(token))

    def negative_hex(self, token):
        return Immediate(-int(token, 16))

    def negative_int(self, token):
        return Immediate(-int(token))

    def float(self, token):
        return Immediate(float(token), "float")

    def special_float(self, token):
        text = str(token)
        if text.endswith("INF"):
            return Immediate(-math.inf if text.startswith("-") else math.inf, "float")
        return Immediate(math.nan, "float")

    def number_set(self, *numbers):
        return VectorOperand(tuple(numbers))

    def dim(self, token):
        return Symbol(str(token))

    def target(self, token):
        text = str(token)
        if text.startswith("0x"):
            return Immediate(int(text, 16))
        return Symbol(text)

    def address_terms(self, *terms):
        return terms

    def memory(self, terms):
        return _memory(terms, None)

    def bracketed(self, bank_open, first, second=None):
        kind = str(bank_open)[:-1]
        if kind in ("c", "cx") and second is not None:
            return _constant(first, second)
        if kind == "desc" and second is not None:
            if len(first) != 1 or type(first[0]) is not Register:
                raise ValueError("a memory descriptor is one uniform register: desc[URn]")
            return _memory(second, first[0])
        if second is not None:
            raise ValueError(f"unknown bracketed operand {kind}[...][...]")
        return DescriptorRef(kind, tuple(first))


def _constant(bank_terms, terms) -> ConstantRef:
    if len(bank_terms) != 1:
        raise ValueError("a constant bank is one number or register")
    bank = bank_terms[0]
    if type(bank) is Immediate:
        bank = bank.value
    elif type(bank) is not Register:
        raise ValueError(f"unexpected constant bank {bank!r}")
    offset, index = 0, None
    for term in terms:
        if type(term) is Immediate:
            offset += term.value
        elif type(term) is Register and index is None:
            index = term
        else:
            raise ValueError(f"unexpected constant-bank index term {term!r}")
    return ConstantRef(bank, offset, index)


def _memory(terms, descriptor: Register | None) -> MemoryRef:
    """Build a memory operand. With one register term it is the base (``[UR4]`` too);
    with two, the uniform one (``UR``) is added to the other, the base."""
    offset = 0
    registers = []
    for term in terms:
        if type(term) is Immediate:
            offset += term.value
            continue
        register, suffixes = _unwrap(term)
        if type(register) is not Register:
            raise ValueError(f"unexpected address term {term!r}")
        registers.append((register, suffixes))
    uniform = None
    if len(registers) == 2:
        first, second = registers
        if second[0].name.startswith("U") and not first[0].name.startswith("U"):
            registers, uniform = [first], second[0]
        elif first[0].name.startswith("U") and not second[0].name.startswith("U"):
            registers, uniform = [second], first[0]
        else:
            raise ValueError("an address adds two registers of the same kind")
    elif len(registers) > 2:
        raise ValueError("an address adds more than two registers")
    if not registers:
        return MemoryRef(None, offset, uniform=uniform, descriptor=descriptor)
    base, suffixes = registers[0]
    wide, scale, modifiers = False, 1, []
    for suffix in suffixes:
        scaled = _SCALE.match(suffix)
        if suffix == "64":
            wide = True
        elif scaled:
            scale = int(scaled.group(1))
        else:
            modifiers.append(suffix)
    return MemoryRef(base, offset, wide, scale, uniform, descriptor, tuple(modifiers))


_local = threading.local()
_memo: dict[str, InstructionParts] = {}


def _cache_file() -> str | None:
    from kernelcheck.cache.private import private_cache_file

    return private_cache_file("sass-grammar.lark-cache")


def _parser() -> Lark:
    lark = getattr(_local, "lark", None)
    if lark is None:
        options = dict(parser="lalr", lexer="contextual", transformer=_Builder(),
                       start="start", maybe_placeholders=False)
        text = grammar_path().read_text()
        cache = _cache_file()
        try:
            lark = Lark(text, cache=cache, **options) if cache else Lark(text, **options)
        except OSError:
            lark = Lark(text, **options)
        _local.lark = lark
    return lark


def parse_instruction_text(
    text: str, *, filename: str | None = None, line: int = 1
) -> InstructionParts:
    """Parse one SASS instruction (no trailing ``;``) into its parts.

    Parameters
    ----------
    text : str
        The instruction as nvdisasm prints it, e.g. ``"@!P0 LDG.E R2, desc[UR4][R2.64]"``.
    filename : str, optional
        Named in errors.
    line : int
        The line reported in errors (the instruction's line in the caller's text).

    Returns
    -------
    InstructionParts

    Raises
    ------
    SassSyntaxError
        With the line, the 1-based column and the tokens that were expected.

    Examples
    --------
    >>> parts = parse_instruction_text("@!P0 IMAD.WIDE R2, R5, 0x4, c[0x0][0x160]")
    >>> parts.guard, parts.opcode, parts.modifiers
    (Guard(register='P0', negated=True), 'IMAD', ('WIDE',))
    >>> parts.operands[3]
    ConstantRef(bank=0, offset=352, index=None)
    """
    found = _memo.get(text)
    if found is not None:
        return found
    parts = _fast.parse(text)
    if parts is None:
        parts = parse_with_grammar(text, filename=filename, line=line)
    if len(_memo) >= _MEMO_LIMIT:
        _memo.clear()
    _memo[text] = parts
    return parts


def parse_with_grammar(
    text: str, *, filename: str | None = None, line: int = 1
) -> InstructionParts:
    """Parse one instruction with the grammar alone: no memo, no fast path.

    The reference :func:`parse_instruction_text` is tested against, and what it falls back
    to; same parameters, result and errors.

    Examples
    --------
    >>> parse_with_grammar("EXIT") == parse_instruction_text("EXIT")
    True
    """
    parser = _parser()
    try:
        return parser.parse(text)
    except UnexpectedInput_ as error:
        raise _syntax_error(error, text, filename, line, parser) from None
    except (LarkError, ValueError) as error:  # a check in the builder failed
        cause = getattr(error, "orig_exc", error)
        raise SassSyntaxError(str(cause), filename=filename, line=line, column=1,
                              text_line=text) from error


_fast = FastPath(lambda text: parse_with_grammar(text).operands, InstructionParts)


UnexpectedInput_ = (UnexpectedCharacters, UnexpectedToken, UnexpectedEOF)


def _shown_terminals(names, parser: Lark) -> tuple[str, ...]:
    """Terminal names as a reader knows them: ``'-'`` rather than ``MINUS``."""
    literal = {t.name: t.pattern.value for t in parser.terminals
               if t.pattern.type == "str"}
    return tuple(sorted(repr(literal[n]) if n in literal else n for n in names or ()))


def _syntax_error(error, text: str, filename: str | None, line: int,
                  parser: Lark) -> SassSyntaxError:
    if isinstance(error, UnexpectedCharacters):
        column = error.column
        found = repr(text[error.pos_in_stream]) if error.pos_in_stream < len(text) else "end"
        expected = _shown_terminals(error.allowed, parser)
        message = f"unexpected character {found}"
    elif isinstance(error, UnexpectedToken):
        token = error.token
        if token.type == "$END":
            column = len(text) + 1
            message = "unexpected end of instruction"
        else:
            column = token.column or 1
            message = f"unexpected {token.type} {str(token)!r}"
        expected = _shown_terminals(error.expected, parser)
    else:
        column = len(text) + 1
        message = "unexpected end of instruction"
        expected = _shown_terminals(getattr(error, "expected", ()), parser)
    return SassSyntaxError(message, filename=filename, line=line, column=column,
                           text_line=text, expected=expected)
