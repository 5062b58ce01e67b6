"""Builds the Kernel IR from PTX during the LALR parse (no parse tree is materialised).

Each method is called by lark when the rule of the same name in ``grammars/ptx.lark`` is
reduced, with the rule's children (IR values and tokens) as one list. The transformer keeps
the little state a one-pass build needs: the current ``.loc`` (it applies to every following
instruction until the next ``.loc``), the instruction counter of the function being read,
and intern tables so that repeated registers, opcodes and addresses share one object.
"""

from __future__ import annotations

import re

from lark import Token, Transformer

from kernelcheck.ir.nodes import (
    Address,
    BracketList,
    BranchTargets,
    CallPrototype,
    Expression,
    FileDirective,
    Function,
    Guard,
    Immediate,
    Instruction,
    Label,
    Module,
    NegatedPredicate,
    Param,
    ParenList,
    Pragma,
    PredicatePair,
    Register,
    RegisterDecl,
    ScopeClose,
    ScopeOpen,
    SectionDirective,
    Sink,
    SourceLoc,
    SourcePos,
    SpecialRegister,
    Symbol,
    VariableDecl,
    VectorOperand,
    type_size,
)
from kernelcheck.ptx.opcodes import KNOWN_OPCODES, is_special_register

_ADDRESS = re.compile(r"\[\s*([^\s+\-\]]+)\s*(?:([+-])\s*(-?)\s*(\S+?)\s*)?\]")
_SCOPE_OPEN = ScopeOpen()
_SCOPE_CLOSE = ScopeClose()
_SINK = Sink()


def parse_int(text: str) -> int:
    """A PTX integer literal: decimal, ``0x`` hex, ``0b`` binary or leading-zero octal."""
    if text.endswith("U"):
        text = text[:-1]
    if text[:2] in ("0x", "0X"):
        return int(text[2:], 16)
    if text[:2] in ("0b", "0B"):
        return int(text[2:], 2)
    if len(text) > 1 and text[0] == "0":
        return int(text, 8)
    return int(text)


class _Tagged(tuple):
    """A (tag, value) pair passed up from helper rules."""

    __slots__ = ()


def _tag(tag: str, value: object) -> _Tagged:
    return _Tagged((tag, value))


class PtxTransformer(Transformer):
    """Lark callbacks, one per grammar rule alias, that build :mod:`kernelcheck.ir.nodes`."""

    def __init__(self, filename: str | None = None) -> None:
        super().__init__(visit_tokens=False)
        self.filename = filename
        self._loc: SourceLoc | None = None
        self._counter = 0
        self._registers: dict[str, Register | SpecialRegister] = {}
        self._opcodes: dict[str, tuple[str, tuple[str, ...], bool]] = {}
        self._addresses: dict[str, Address] = {}
        self._guards: dict[str, Guard] = {}
        self._runs: dict[str, tuple] = {}
        self._operand_pattern: re.Pattern | None = None

    def set_operand_terminals(self, patterns: dict[str, str]) -> None:
        """Give the regular expressions of the one-terminal operand kinds (from the grammar).

        ``OPERANDS`` tokens are split with them, so a run of operands means exactly what the
        same operands mean when the grammar's operand rules read them one by one.
        """
        order = ("ADDRESS", "FLOAT_HEX", "REGISTER", "NAME", "INT")
        alternatives = "|".join(
            f"(?P<{name}>{'-?' if name == 'INT' else ''}(?:{patterns[name]}))" for name in order
        )
        self._operand_pattern = re.compile(alternatives)

    def reset(self, filename: str | None) -> None:
        """Forget the state of the previous parse; intern tables are kept (they are pure)."""
        self.filename = filename
        self._loc = None
        self._counter = 0
        if len(self._runs) > 200_000:
            for table in (self._registers, self._opcodes, self._addresses, self._guards,
                          self._runs):
                table.clear()

    # ------------------------------------------------------------ module

    def start(self, c: list) -> Module:
        version = address_size = None
        target: tuple[str, ...] = ()
        items = []
        for item in c:
            if type(item) is _Tagged:
                tag, value = item
                if tag == "version":
                    version = value
                elif tag == "target":
                    target = value
                elif tag == "address_size":
                    address_size = value
            elif type(item) is list:
                items.extend(item)
            else:
                items.append(item)
        return Module(version, target, address_size, tuple(items), filename=self.filename)

    def version(self, c: list) -> _Tagged:
        return _tag("version", str(c[0]))

    def target(self, c: list) -> _Tagged:
        return _tag("target", tuple(str(t) for t in c))

    def address_size(self, c: list) -> _Tagged:
        return _tag("address_size", parse_int(c[0]))

    def file(self, c: list) -> FileDirective:
        extra = [parse_int(t) for t in c[2:]]
        return FileDirective(
            parse_int(c[0]),
            _unquote(c[1]),
            extra[0] if len(extra) > 0 else None,
            extra[1] if len(extra) > 1 else None,
        )

    def pragma(self, c: list) -> Pragma:
        return Pragma(tuple(_unquote(t) for t in c))

    def alias(self, c: list) -> Pragma:
        return Pragma((".alias", str(c[0]), str(c[1])))

    def section(self, c: list) -> SectionDirective:
        return SectionDirective(str(c[0]), tuple(c[1:]))

    def section_entry(self, c: list) -> tuple[str, tuple]:
        values = []
        for item in c[1:]:
            if isinstance(item, Token):
                values.extend(Immediate(int(v)) for v in item.split(","))
            else:
                values.append(item)
        return (str(c[0])[1:], tuple(values))

    def section_label(self, c: list) -> tuple[str, tuple]:
        return ("label", (Symbol(_label_name(c[0])),))

    def symbol_difference(self, c: list) -> Expression:
        return Expression(f"{c[0]}-{c[1]}")

    # ------------------------------------------------------------ functions

    def function(self, c: list) -> Function:
        attributes = []
        kind = name = None
        params: tuple[Param, ...] = ()
        returns: tuple[Param, ...] = ()
        directives = []
        body = None
        noreturn = False
        pos = None
        for item in c:
            if isinstance(item, Token):
                if item.type == "FUNCTION_KIND":
                    kind = str(item)[1:]
                    pos = SourcePos(item.line, item.column)
                elif item.type == "NAME":
                    name = str(item)
            elif type(item) is _Tagged:
                tag, value = item
                if tag == "linkage":
                    attributes.append(value)
                elif tag == "returns":
                    returns = value
                elif tag == "params":
                    params = value
                elif tag == "directive":
                    if value[0] == ".noreturn":
                        noreturn = True
                    directives.append(value)
                elif tag == "body":
                    body = value
        self._counter = 0
        self._loc = None
        return Function(
            name=name,
            kind=kind,
            params=params,
            return_params=returns,
            attributes=tuple(attributes),
            directives=tuple(directives),
            body=body,
            noreturn=noreturn,
            pos=pos,
        )

    def body(self, c: list) -> _Tagged:
        return _tag("body", tuple(_flatten(c)))

    def no_body(self, c: list) -> _Tagged:
        return _tag("nobody", None)

    def linkage(self, c: list) -> _Tagged:
        return _tag("linkage", str(c[0]))

    def return_params(self, c: list) -> _Tagged:
        return _tag("returns", _layout(c))

    def param_list(self, c: list) -> _Tagged:
        return _tag("params", _layout(c))

    def param(self, c: list) -> Param:
        space = str(c[0])[1:]
        fields = _declaration_fields(c[1:])
        return Param(
            name=fields["name"],
            type=fields["type"],
            offset=0,
            align=fields["align"],
            array=fields["array"],
            attributes=fields["attributes"],
            space=space,
            vector=fields["vector"],
        )

    def perf_directive(self, c: list) -> _Tagged:
        return _tag("directive", (str(c[0]), tuple(parse_int(t) for t in c[1:])))

    def perf_pragma(self, c: list) -> _Tagged:
        return _tag("directive", (".pragma", tuple(_unquote(t) for t in c)))

    # ------------------------------------------------------------ declarations

    def variable_decl(self, c: list):
        linkage = []
        index = 0
        while type(c[index]) is _Tagged and c[index][0] == "linkage":
            linkage.append(c[index][1])
            index += 1
        space = str(c[index])[1:]
        rest = c[index + 1 :]
        declarators = [d for d in rest if type(d) is _Tagged and d[0] == "declarator"]
        heads = [d for d in rest if not (type(d) is _Tagged and d[0] == "declarator")]
        fields = _declaration_fields(heads)
        if space == "reg":
            names = []
            for _, (name, _array, _init, count) in declarators:
                if count is not None:
                    return RegisterDecl(fields["type"], (name,), count, fields["vector"])
                names.append(name)
            return RegisterDecl(fields["type"], tuple(names), None, fields["vector"])
        decls = [
            VariableDecl(
                space=space,
                name=name,
                type=fields["type"],
                align=fields["align"],
                array=array,
                initializer=init,
                attributes=tuple(linkage) + fields["attributes"],
                vector=fields["vector"],
            )
            for _, (name, array, init, count) in declarators
        ]
        return decls[0] if len(decls) == 1 else decls

    def var_declarator(self, c: list) -> _Tagged:
        array: tuple = ()
        init = None
        for item in c[1:]:
            if type(item) is _Tagged:
                if item[0] == "array":
                    array = item[1]
                elif item[0] == "init":
                    init = item[1]
        return _tag("declarator", (str(c[0]), array, init, None))

    def register_range(self, c: list) -> _Tagged:
        return _tag("declarator", (str(c[0]), (), None, parse_int(c[1])))

    def array_dims(self, c: list) -> _Tagged:
        # Each "[" INT? "]" leaves its INT (or nothing); rebuild from the token positions.
        return _tag("array", tuple(parse_int(t) for t in c) if c else (None,))

    def initializer(self, c: list) -> _Tagged:
        return _tag("init", tuple(_flatten_init(c[0])))

    def init_list(self, c: list) -> list:
        return list(c)

    def align(self, c: list) -> _Tagged:
        return _tag("align", parse_int(c[0]))

    def vector(self, c: list) -> _Tagged:
        return _tag("vector", str(c[0])[1:])

    def ptr(self, c: list) -> _Tagged:
        return _tag("attribute", ".ptr")

    def ptr_space(self, c: list) -> _Tagged:
        return _tag("attribute", str(c[0]))

    def attribute(self, c: list) -> _Tagged:
        return _tag("attribute", str(c[0]))

    def expression(self, c: list) -> Expression:
        return Expression(str(c[0]))

    # ------------------------------------------------------------ statements

    def label(self, c: list) -> Label:
        token = c[0]
        return Label(_label_name(token), SourcePos(token.line, token.column))

    def scope(self, c: list) -> list:
        return [_SCOPE_OPEN, *_flatten(c), _SCOPE_CLOSE]

    def callprototype(self, c: list) -> CallPrototype:
        returns = c[1][1] if len(c) > 1 else ()
        params = c[2][1] if len(c) > 2 else ()
        return CallPrototype(_label_name(c[0]), returns[0] if returns else None, params)

    def proto_ret(self, c: list) -> _Tagged:
        return _tag("returns", _layout(c))

    def proto_args(self, c: list) -> _Tagged:
        return _tag("params", _layout(c))

    def branchtargets(self, c: list) -> BranchTargets:
        return BranchTargets(_label_name(c[0]), tuple(str(t) for t in c[1:]))

    def loc(self, c: list) -> None:
        function_name = None
        inlined = None
        for item in c[1:]:
            if item[0] == "function_name":
                function_name = item[1]
            else:
                inlined = item[1]
        _, file, line, column = c[0].split()
        loc = SourceLoc(int(file), int(line), int(column), function_name, inlined)
        if loc != self._loc:
            self._loc = loc
        return None

    def loc_function_name(self, c: list) -> _Tagged:
        name = str(c[0]) if len(c) == 1 else f"{c[0]}+{parse_int(c[1])}"
        return _tag("function_name", name)

    def loc_inlined_at(self, c: list) -> _Tagged:
        return _tag("inlined_at", SourceLoc(parse_int(c[0]), parse_int(c[1]), parse_int(c[2])))

    def instruction(self, c: list) -> Instruction:
        """Build an instruction from the rule's unfiltered children.

        Registered as a raw callback with the table driver: ``c`` holds the tokens, the
        operands, punctuation as plain strings and the ``("," operand)*`` repetition as a
        lark expansion tree (anything with ``children``).
        """
        guard = None
        opcode_token = None
        operands = []
        for item in c:
            kind = type(item)
            if kind is str:
                continue
            if isinstance(item, Token):
                token_type = item.type
                if token_type == "OPERANDS":
                    run = self._runs.get(item)
                    if run is None:
                        run = self._split_run(item)
                    operands.extend(run)
                elif token_type == "OPCODE":
                    opcode_token = item
                elif token_type == "GUARD":
                    guard = self._guards.get(item)
                    if guard is None:
                        text = str(item)
                        guard = Guard(text[2:], True) if text[1] == "!" else Guard(
                            text[1:], False)
                        self._guards[text] = guard
                # other tokens are punctuation kept by the lark engine
            elif hasattr(item, "children"):
                for child in item.children:
                    if isinstance(child, Token) and child.type == "OPERANDS":
                        operands.extend(self._runs.get(child) or self._split_run(child))
                    elif not isinstance(child, (str, Token)):
                        operands.append(child)
            else:
                operands.append(item)
        split = self._opcodes.get(opcode_token)
        if split is None:
            parts = str(opcode_token).split(".")
            split = (parts[0], tuple(parts[1:]), parts[0] in KNOWN_OPCODES)
            self._opcodes[str(opcode_token)] = split
        index = self._counter
        self._counter = index + 1
        if type(opcode_token) is Token:
            pos = SourcePos(opcode_token.line, opcode_token.column)
        else:
            pos = SourcePos(*opcode_token.position())
        return Instruction(
            split[0], split[1], tuple(operands), guard, self._loc, index, split[2], pos
        )

    # ------------------------------------------------------------ operands

    def _split_run(self, token) -> tuple:
        run = tuple(self._run_operand(m) for m in self._operand_pattern.finditer(token))
        self._runs[str(token)] = run
        return run

    def _run_operand(self, match: re.Match):
        kind = match.lastgroup
        text = match.group(kind)
        if kind == "REGISTER":
            return self.register([text])
        if kind == "ADDRESS":
            return self.address([text])
        if kind == "INT":
            return Immediate(-parse_int(text[1:])) if text[0] == "-" else Immediate(
                parse_int(text))
        if kind == "FLOAT_HEX":
            return self.hex_float_immediate([text])
        return self.symbol([text])

    def register(self, c: list) -> Register | SpecialRegister:
        name = c[0]
        found = self._registers.get(name)
        if found is None:
            text = str(name)
            found = SpecialRegister(text) if is_special_register(text) else Register(text)
            self._registers[text] = found
        return found

    def predicate_pair(self, c: list) -> PredicatePair:
        second = self.register(c[1:]) if str(c[1]).startswith("%") else self.symbol(c[1:])
        return PredicatePair(self.register(c[:1]), second)

    def negated_predicate(self, c: list) -> NegatedPredicate:
        return NegatedPredicate(self.register(c))

    def address(self, c: list) -> Address:
        text = c[0]
        found = self._addresses.get(text)
        if found is None:
            match = _ADDRESS.fullmatch(str(text))
            base_text, sign, negative, number = match.groups()
            if base_text[0] == "%":
                base = self.register([base_text])
            elif base_text[0].isdigit():
                base = None
                number = base_text
                sign = "+"
                negative = ""
            else:
                base = Symbol(base_text)
            offset = 0
            if number:
                offset = parse_int(number)
                if (sign == "-") != (negative == "-"):
                    offset = -offset
            found = Address(base, offset)
            self._addresses[str(text)] = found
        return found

    def bracket_list(self, c: list):
        if len(c) == 1 and type(c[0]) in (Register, Symbol):
            return Address(c[0], 0)
        if len(c) == 1 and type(c[0]) is Immediate:
            return Address(None, c[0].value)
        return BracketList(tuple(c))

    def vector_operand(self, c: list) -> VectorOperand:
        return VectorOperand(tuple(c))

    def paren_list(self, c: list) -> ParenList:
        return ParenList(tuple(c))

    def symbol(self, c: list):
        text = str(c[0])
        if text == "_":
            return _SINK
        return Symbol(text)

    def symbol_plus(self, c: list) -> Expression:
        return Expression(f"{c[0]}+{parse_int(c[1])}")

    def int_immediate(self, c: list) -> Immediate:
        return Immediate(parse_int(c[0]))

    def negative_int_immediate(self, c: list) -> Immediate:
        return Immediate(-parse_int(c[0]))

    def hex_float_immediate(self, c: list) -> Immediate:
        text = str(c[0])
        return Immediate(int(text[2:], 16), "f32" if text[1] in "fF" else "f64")

    def decimal_float_immediate(self, c: list) -> Immediate:
        return Immediate(float(c[0]), "float")

    def negative_float_immediate(self, c: list) -> Immediate:
        return Immediate(-float(c[0]), "float")


# ---------------------------------------------------------------- helpers


def _unquote(token) -> str:
    text = str(token)
    return text[1:-1] if text[:1] == '"' else text


def _label_name(token) -> str:
    return str(token).rstrip().rstrip(":").rstrip()


def _flatten(items: list) -> list:
    flat = []
    for item in items:
        if item is None or type(item) is _Tagged:
            continue
        if type(item) is list:
            flat.extend(item)
        else:
            flat.append(item)
    return flat


def _flatten_init(value) -> list:
    if type(value) is list:
        out = []
        for item in value:
            out.extend(_flatten_init(item))
        return out
    return [value]


def _declaration_fields(items: list) -> dict:
    fields = {"align": None, "vector": None, "attributes": (), "type": None, "name": None,
              "array": ()}
    attributes = []
    pointer = False
    for item in items:
        if type(item) is _Tagged:
            tag, value = item
            if tag == "align" and pointer:
                # `.ptr .global .align N`: the alignment of the memory pointed to (PTX ISA
                # 5.1.6.1, kernel parameter attributes), not of the parameter itself.
                attributes.append(f".align {value}")
            elif tag in ("align", "vector", "array"):
                fields[tag] = value
            elif tag == "attribute":
                attributes.append(value)
                pointer = pointer or value == ".ptr"
        elif isinstance(item, Token):
            if item.type == "TYPE":
                fields["type"] = str(item)[1:]
            else:
                fields["name"] = str(item)
    fields["attributes"] = tuple(attributes)
    return fields


def _layout(params: list) -> tuple[Param, ...]:
    """Assign byte offsets in the parameter buffer: each parameter at its alignment."""
    laid = []
    offset = 0
    for param in params:
        if type(param) is not Param:
            continue
        alignment = max(1, param.align or type_size(param.type) or 1)
        offset = (offset + alignment - 1) // alignment * alignment
        laid.append(
            Param(param.name, param.type, offset, param.align, param.array, param.attributes,
                  param.space, param.vector)
        )
        offset += param.size
    return tuple(laid)
