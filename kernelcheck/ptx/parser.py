"""Parse PTX text into the Kernel IR.

One LALR parser with the contextual lexer is built per thread from ``grammars/ptx.lark``
(its analysis cached on disk by lark) and reused for every parse; the IR is built during the
parse by :class:`~kernelcheck.ptx.transformer.PtxTransformer`, so no parse tree exists.
Every lark error is turned into :class:`~kernelcheck.errors.PtxSyntaxError` naming the file,
line, column and the expected tokens.
"""

from __future__ import annotations

import gc
import os
import re
import threading
from pathlib import Path

from lark import Lark
from lark.exceptions import (
    LarkError,
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from kernelcheck.errors import KernelcheckError, PtxSyntaxError, UnsupportedFeature
from kernelcheck.ir.nodes import Module
from kernelcheck.ptx.lalr_driver import DriverSyntaxError, FusedStatement, LalrDriver
from kernelcheck.ptx.located import LocatedError
from kernelcheck.ptx.transformer import PtxTransformer

__all__ = ["parse_ptx", "parse_ptx_file", "grammar_path", "raw_callbacks", "fused_rules",
           "fused_statements"]

_state = threading.local()

# Named terminals as a reader of the ISA knows them, for "expected ..." in error messages;
# string-literal terminals are shown as the literal itself.
_TERMINAL_WORDS = {
    "OPCODE": "an opcode", "OPERANDS": "operands", "REGISTER": "a register",
    "REGISTER_RANGE": "a register range", "NAME": "a name", "INT": "an integer",
    "INTEGERS": "integers", "INIT_INTEGERS": "integers", "TYPE": "a type",
    "LABEL_DEF": "a label", "ADDRESS": "an address", "GUARD": "a guard predicate",
    "STATE_SPACE": "a state space", "STRING": "a string", "FUNCTION_KIND": ".entry/.func",
    "LINKAGE": ".visible/.extern/.weak", "VERSION_NUMBER": "a version number",
    "TARGET_NAME": "a target name", "LOC": ".loc", "PERF_DIRECTIVE": "a performance directive",
    "SECTION_NAME": "a section name", "FLOAT_HEX": "a hex float", "DECIMAL_FLOAT": "a float",
    "VECTOR": ".v2/.v4/.v8", "ATTRIBUTE": ".attribute(...)", "GENERIC_EXPR": "generic(...)",
    "ELEMENT": "a vector element", "EXPRESSION": "an expression",
    "MASK_EXPR": "0xFF(address)",
    "$END": "end of input",
}
_literals: dict[str, str] = {}


def grammar_path() -> Path:
    """The PTX grammar file shipped with the package."""
    return Path(__file__).resolve().parent.parent / "grammars" / "ptx.lark"


def _cache_file() -> str | None:
    from kernelcheck.cache.private import private_cache_file

    return private_cache_file("ptx-grammar.lark-cache")


def _parser() -> tuple[Lark, PtxTransformer, LalrDriver]:
    pair = getattr(_state, "pair", None)
    if pair is None:
        transformer = PtxTransformer()
        text = grammar_path().read_text()
        # lark's own engine filters punctuation before calling `instruction`; the table
        # driver calls it unfiltered (see PtxTransformer.instruction), which it accepts too.
        options = dict(
            parser="lalr",
            lexer="contextual",
            transformer=transformer,
            maybe_placeholders=False,
            propagate_positions=False,
        )
        cache = _cache_file()
        try:
            lark = Lark(text, cache=cache, **options) if cache else Lark(text, **options)
        except (OSError, EOFError, ValueError):
            lark = Lark(text, **options)
        transformer.set_operand_terminals(
            {t.name: t.pattern.to_regexp() for t in lark.terminals}
        )
        driver = LalrDriver(lark, raw_callbacks=raw_callbacks(lark, transformer),
                            fused_rules=fused_rules(transformer),
                            fused_statements=fused_statements(transformer))
        pair = (lark, transformer, driver)
        for terminal in lark.terminals:
            if type(terminal.pattern).__name__ == "PatternStr":
                _literals[terminal.name] = repr(terminal.pattern.value)
        _state.pair = pair
    return pair


def raw_callbacks(lark: Lark, transformer: PtxTransformer) -> dict:
    """The rules the table driver calls with their children unfiltered."""
    # The repetitions of statements in a body or block and of operands in an instruction
    # accumulate into one list (no lark tree per item); the rules that read them take it
    # unfiltered.
    raw = {"instruction": transformer.instruction, "body": transformer.body_raw,
           "scope": transformer.scope_raw, "vector_operand": transformer.vector_raw,
           "bracket_list": transformer.bracket_raw, "paren_list": transformer.paren_raw,
           "loc": transformer.loc_raw, "param": transformer.param_raw,
           "param_list": transformer.param_list_raw,
           "return_params": transformer.return_params_raw,
           "_decl_name": transformer.decl_name_raw}
    # Rules of one token: lark's child filter has nothing to remove.
    for name in ("register", "symbol", "element", "expression_operand", "address",
                 "int_immediate", "hex_float_immediate", "decimal_float_immediate", "label"):
        raw[name] = getattr(transformer, name)
    for rule in lark.rules:
        name = str(rule.origin.name)
        if name.startswith(("__function_end_star_", "__scope_star_", "__instruction_star_",
                            "__operand_star_", "__loc_star_", "__return_params_star_",
                            "__param_star_")):
            raw[name] = transformer.repeat
    return raw


def fused_rules(transformer: PtxTransformer) -> dict:
    """The rules the table driver lexes whole: an instruction statement with at most one
    run of simple operands (most of them), ``@%p1 bra $L;``, a label and a ``.loc``."""
    return {"instruction": transformer.instruction_run, "loc": transformer.loc_run,
            "label": transformer.label_run}


# A declaration as nvcc writes it: `.param .u64 p`, `.local .align 8 .b8 depot[16]`.
_DECLARATION = ('STATE_SPACE', '".align"?', 'INT?', 'TYPE', 'NAME', '"["?', 'INT?', '"]"?')


def fused_statements(transformer: PtxTransformer) -> list[FusedStatement]:
    """The spellings of declarations and ``.loc`` the table driver lexes whole, though
    their rules have nonterminals: nvcc's register ranges, parameters, local and shared
    arrays, and the ``.loc`` of an inlined call."""
    return [
        FusedStatement("variable_decl", ("STATE_SPACE", "TYPE", "REGISTER_RANGE"),
                       transformer.register_range_decl_run),
        FusedStatement("variable_decl", _DECLARATION, transformer.variable_decl_run),
        FusedStatement("variable_decl", tuple(t.replace("NAME", "REGISTER")
                                              for t in _DECLARATION),
                       transformer.variable_decl_run),
        FusedStatement("param", _DECLARATION, transformer.param_run),
        FusedStatement("loc", ("LOC", '","', '"function_name"', "NAME", '"+"?', "INT?",
                               '","?', '"inlined_at"?', "INT?", "INT?", "INT?"),
                       transformer.loc_attributes_run),
    ]


def parse_ptx(text: str | bytes, filename: str | None = None, *, engine: str = "fast") -> Module:
    """Parse PTX text into a :class:`~kernelcheck.ir.nodes.Module`.

    Parameters
    ----------
    text : str or bytes
        The PTX source. Bytes are decoded as UTF-8 (PTX is ASCII).
    filename : str, optional
        Used in error messages and kept on the module.
    engine : {"fast", "lark"}
        ``"fast"`` runs lark's LALR tables with kernelcheck's lean driver
        (:mod:`kernelcheck.ptx.lalr_driver`); ``"lark"`` runs lark's own parser. Both use
        the same grammar and callbacks and give equal results; the second is the reference
        the first is tested against.

    Returns
    -------
    Module

    Raises
    ------
    PtxSyntaxError
        When the text is not PTX; the error names the line, column and expected tokens
        (or what is wrong: an undeclared register, a duplicate declaration).
    UnsupportedFeature
        For valid PTX kernelcheck does not model, at ``file:line:column``.

    Examples
    --------
    >>> m = parse_ptx(".version 8.0\\n.target sm_80\\n.address_size 64\\n"
    ...               ".visible .entry k() { ret; }")
    >>> [k.name for k in m.kernels], m.kernels[0].instructions[0].opcode
    (['k'], 'ret')
    """
    if isinstance(text, bytes | bytearray | memoryview):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as error:
            line = bytes(text)[: error.start].count(b"\n") + 1
            raise PtxSyntaxError(
                f"not PTX text: byte 0x{bytes(text)[error.start]:02x} is not UTF-8",
                filename=filename,
                line=line,
                column=error.start - bytes(text).rfind(b"\n", 0, error.start),
            ) from None
    if "\x00" in text:
        offset = text.index("\x00")
        line = text.count("\n", 0, offset) + 1
        raise PtxSyntaxError(
            "not PTX text: it contains a NUL byte (is this a binary file?)",
            filename=filename,
            line=line,
            column=offset - text.rfind("\n", 0, offset),
        )
    if not text.strip():
        raise PtxSyntaxError("empty input: no PTX statements", filename=filename, line=1,
                             column=1)
    lark, transformer, driver = _parser()
    transformer.reset(filename, text)
    # The parse allocates millions of small acyclic objects; pausing the cyclic collector
    # while it runs saves its repeated scans of them (about a fifth of the time).
    collecting = gc.isenabled()
    gc.disable()
    try:
        if engine == "lark":
            return lark.parse(text)
        return driver.parse(text)
    except DriverSyntaxError as error:
        raise _driver_error(error, text, filename) from None
    except LocatedError as error:
        raise _located_error(error, text, filename) from None
    except UnexpectedInput as error:
        raise _syntax_error(error, text, filename) from None
    except VisitError as error:
        if isinstance(error.orig_exc, LocatedError):
            raise _located_error(error.orig_exc, text, filename) from None
        raise PtxSyntaxError(
            f"malformed construct: {error.orig_exc}", filename=filename, line=0, column=0
        ) from error
    except LarkError as error:  # pragma: no cover - other lark failures are our bugs
        raise KernelcheckError(f"{filename or '<input>'}: PTX parser failure: {error}") from error
    finally:
        if collecting:
            gc.enable()
        transformer.reset(None)


def parse_ptx_file(path: str | os.PathLike) -> Module:
    """Read and parse a PTX file; errors name the file."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise KernelcheckError(f"{path}: cannot read: {error.strerror}") from error
    return parse_ptx(data, filename=path)


def _syntax_error(error: UnexpectedInput, text: str, filename: str | None) -> PtxSyntaxError:
    line = getattr(error, "line", 0) or 0
    column = getattr(error, "column", 0) or 0
    if isinstance(error, UnexpectedEOF) or line <= 0:
        line = text.count("\n") + (0 if text.endswith("\n") else 1)
        column = len(text.rsplit("\n", 1)[-1]) + 1 if not text.endswith("\n") else 1
        message = "unexpected end of input (truncated PTX?)"
        expected = _describe(getattr(error, "expected", ()) or ())
    elif isinstance(error, UnexpectedToken):
        token = error.token
        if token.type == "$END":
            message = "unexpected end of input (truncated PTX?)"
        else:
            message = f"unexpected {_shorten(str(token))!r}"
        expected = _describe(error.accepts or error.expected)
    elif isinstance(error, UnexpectedCharacters):
        char = text[error.pos_in_stream] if error.pos_in_stream < len(text) else ""
        message = f"unexpected character {char!r}"
        expected = _describe(error.allowed or ())
    else:  # pragma: no cover
        message = str(error).splitlines()[0]
        expected = ()
    lines = text.splitlines()
    text_line = lines[line - 1] if 0 < line <= len(lines) else None
    return PtxSyntaxError(message, filename=filename, line=line, column=column,
                          text_line=text_line, expected=expected)


def _driver_error(error: DriverSyntaxError, text: str, filename: str | None) -> PtxSyntaxError:
    expected = _describe(error.expected)
    if error.offset >= len(text) or error.found is None:
        line = text.count("\n") + (0 if text.endswith("\n") else 1)
        last = text.rsplit("\n", 1)[-1] if not text.endswith("\n") else ""
        lines = text.splitlines()
        return PtxSyntaxError("unexpected end of input (truncated PTX?)", filename=filename,
                              line=line, column=len(last) + 1,
                              text_line=lines[-1] if lines else None, expected=expected)
    line = text.count("\n", 0, error.offset) + 1
    column = error.offset - (text.rfind("\n", 0, error.offset) + 1) + 1
    found = str(error.found)
    if len(found) == 1 and not found.isalnum():
        message = f"unexpected character {found!r}"
    else:
        message = f"unexpected {_shorten(found)!r}"
    line_start = text.rfind("\n", 0, error.offset) + 1
    line_end = text.find("\n", error.offset)
    text_line = text[line_start : line_end if line_end >= 0 else len(text)]
    return PtxSyntaxError(message, filename=filename, line=line, column=column,
                          text_line=text_line, expected=expected)


def _located_error(error: LocatedError, text: str,
                   filename: str | None) -> PtxSyntaxError | UnsupportedFeature:
    """A front-end error at a source position, as a one-line error naming it."""
    if error.offset is not None:
        offset = min(error.offset, len(text))
    elif error.pos is not None:
        line, column = error.pos
        start = 0
        for _ in range(line - 1):
            start = text.find("\n", start) + 1
        offset = start + column - 1
    else:
        offset = 0
    if error.search:
        # The identifier the error is about, on its statement: from after the previous
        # ';', '{' or '}' (a guard stands before the opcode) to the next ';'.
        start = max(text.rfind(c, 0, offset) for c in ";{}") + 1
        end = text.find(";", offset)
        pattern = re.compile(r"(?<![\w$%.])" + re.escape(error.search) + r"(?![\w$])")
        match = pattern.search(text, start, end if end >= 0 else len(text))
        if match is not None:
            offset = match.start()
    line = text.count("\n", 0, offset) + 1
    line_start = text.rfind("\n", 0, offset) + 1
    column = offset - line_start + 1
    if error.unsupported:
        return UnsupportedFeature(error.message, f"{filename or '<input>'}:{line}:{column}")
    line_end = text.find("\n", offset)
    return PtxSyntaxError(error.message, filename=filename, line=line, column=column,
                          text_line=text[line_start: line_end if line_end >= 0 else len(text)])


def _describe(names) -> tuple[str, ...]:
    words = set()
    for name in names:
        words.add(_TERMINAL_WORDS.get(name) or _literals.get(name) or name)
    return tuple(sorted(words))


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
