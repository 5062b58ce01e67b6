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
    CallTargets,
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
from kernelcheck.ptx import constexpr
from kernelcheck.ptx.declarations import check_module_names, complete_array
from kernelcheck.ptx.located import LocatedError, PendingArrayElement, PendingExpression
from kernelcheck.ptx.opcodes import KNOWN_OPCODES, is_special_register
from kernelcheck.ptx.scopes import resolve_function

_ADDRESS = re.compile(r"\[\s*([^\s+\-\]]+)\s*(?:([+-])\s*(-?)\s*(\S+?)\s*)?\]")
_SCOPE_OPEN = ScopeOpen()
_SCOPE_CLOSE = ScopeClose()
_SINK = Sink()
_WARP_SZ = Immediate(constexpr.WARP_SIZE)
# Statements that declare a name in their block.
_DECLARATIONS = frozenset({RegisterDecl, VariableDecl, Label, CallPrototype, BranchTargets,
                           CallTargets})


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


class _Repeat(list):
    """The items of a repetition, built by the table driver (see PtxTransformer.repeat);
    ``children`` is itself, as for the lark tree the reference engine builds."""

    __slots__ = ()

    @property
    def children(self) -> _Repeat:
        return self


def _items(children: list) -> list:
    """The values among unfiltered ``children``: punctuation dropped, repetitions inlined."""
    out = []
    for child in children:
        kind = type(child)
        if kind is _Repeat:
            out.extend(child)
        elif kind is not str:
            out.append(child)
    return out


def _repeated(children: list) -> list:
    """The items of the one :class:`_Repeat` among ``children`` (none: an empty body)."""
    for child in children:
        if type(child) is _Repeat:
            return child
    return []


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
        self._locs: dict[str, SourceLoc] = {}
        self._runs: dict[str, tuple] = {}
        self._operand_pattern: re.Pattern | None = None
        self.text: str | None = None
        self._begin()

    def _begin(self) -> None:
        # Per function: the identifiers seen in operands (as `%` names and as bare names)
        # and whether an operand waits for the function's scopes (see kernelcheck/ptx/
        # scopes.py); per module: variables declared so far, names left for the module.
        self._used_regs: set[str] = set()
        self._used_syms: set[str] = set()
        self._pending = False
        self._decls: list = []
        self._nested = False
        self._module_vars: dict[str, VariableDecl] = {}
        self._unresolved: list[tuple[Function, set[str]]] = []

    def set_operand_terminals(self, patterns: dict[str, str]) -> None:
        """Give the regular expressions of the one-terminal operand kinds (from the grammar).

        ``OPERANDS`` tokens are split with them, so a run of operands means exactly what the
        same operands mean when the grammar's operand rules read them one by one.
        """
        order = ("ADDRESS", "FLOAT_HEX", "REGISTER", "ELEMENT", "NAME", "INT")
        alternatives = "|".join(
            f"(?P<{name}>{'-?' if name == 'INT' else ''}(?:{patterns[name]}))" for name in order
        )
        self._operand_pattern = re.compile(alternatives)

    def reset(self, filename: str | None, text: str | None = None) -> None:
        """Forget the state of the previous parse; intern tables are kept (they are pure)."""
        self.filename = filename
        self.text = text
        self._loc = None
        self._counter = 0
        self._begin()
        if len(self._runs) > 200_000:
            for table in (self._registers, self._opcodes, self._addresses, self._guards,
                          self._runs, self._locs):
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
        if self._unresolved:
            check_module_names(items, self._unresolved)
        return Module(version, target, address_size, tuple(items), filename=self.filename)

    def version(self, c: list) -> _Tagged:
        return _tag("version", str(c[0]))

    def target(self, c: list) -> _Tagged:
        return _tag("target", tuple(str(t) for t in c))

    def address_size(self, c: list) -> _Tagged:
        size = parse_int(c[0])
        if size not in (32, 64):
            raise LocatedError(f".address_size must be 32 or 64, not {size}",
                               offset=c[0].start_pos)
        return _tag("address_size", size)

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
                elif item.type in ("NAME", "REGISTER"):
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
        unresolved: dict = {}
        if body is not None:
            body, unresolved = resolve_function(
                body, returns + params, self._decls, self._nested, self._used_regs,
                self._used_syms, self._pending, self._module_vars)
        self._decls = []
        self._nested = False
        self._used_regs = set()
        self._used_syms = set()
        self._pending = False
        function = Function(
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
        if unresolved:
            self._unresolved.append((function, unresolved))
        return function

    def body(self, c: list) -> _Tagged:
        return _tag("body", tuple(_flatten(c)))

    def body_raw(self, c: list) -> _Tagged:
        """:meth:`body` for the table driver: the statements come as one :class:`_Repeat`."""
        return self.body(_repeated(c))

    def scope_raw(self, c: list) -> list:
        """:meth:`scope` for the table driver."""
        return self.scope(_repeated(c))

    def vector_raw(self, c: list) -> VectorOperand:
        return self.vector_operand(_items(c))

    def bracket_raw(self, c: list):
        return self.bracket_list(_items(c))

    def paren_raw(self, c: list):
        return self.paren_list(_items(c))

    def repeat(self, c: list) -> _Repeat:
        """A repetition rule (``x*``) for the table driver: one growing list, punctuation
        (plain strings) and ``.loc`` results (``None``) left out."""
        first = c[0]
        if type(first) is _Repeat:
            for item in c[1:]:
                if item is not None and type(item) is not str:
                    first.append(item)
            return first
        return _Repeat(item for item in c if item is not None and type(item) is not str)

    def no_body(self, c: list) -> _Tagged:
        return _tag("nobody", None)

    def linkage(self, c: list) -> _Tagged:
        return _tag("linkage", str(c[0]))

    def return_params(self, c: list) -> _Tagged:
        return _tag("returns", _layout(c))

    def param_list(self, c: list) -> _Tagged:
        return _tag("params", _layout(c))

    def param_list_raw(self, c: list) -> _Tagged:
        """:meth:`param_list` for the table driver."""
        return self.param_list(_items(c))

    def return_params_raw(self, c: list) -> _Tagged:
        """:meth:`return_params` for the table driver."""
        return self.return_params(_items(c))

    def param_raw(self, c: list) -> Param:
        """:meth:`param` for the table driver: attributes and the name come as
        :class:`_Repeat` lists."""
        return self.param(_items(c))

    def decl_name_raw(self, c: list) -> _Repeat:
        """``_decl_name`` (inlined in its rule) for the table driver: a one-item repetition,
        which lark's child filter inlines like its own tree."""
        return _Repeat(c)

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

    def param_run(self, texts: tuple, position) -> Param:
        """:meth:`param` for ``.param .u64 p`` or ``.param .align 8 .b8 p[16]`` lexed whole
        (the texts of ``STATE_SPACE .align INT TYPE NAME [ INT ]``, ``None`` where absent)."""
        space, _, align, type_, name, bracket, dim, _ = texts
        return Param(
            name=name,
            type=type_[1:],
            offset=0,
            align=None if align is None else parse_int(align),
            array=() if bracket is None else (None if dim is None else parse_int(dim),),
            attributes=(),
            space=space[1:],
            vector=None,
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
            pos = declarators[0][1][4]
            if len(declarators) == 1 and declarators[0][1][3] is not None:
                # .reg .b32 %r<N>; stays one range (looked up on use, not per register).
                name, count = declarators[0][1][0], declarators[0][1][3]
                decl = RegisterDecl(fields["type"], (name,), count, fields["vector"], pos)
                self._decls.append(decl)
                return decl
            for _, (name, _array, _init, count, _pos) in declarators:
                # A list may mix ranges and plain names (.reg .b32 %r<4>, %x;): every name
                # in it is declared (ISA 5.1.1, 10.1).
                names.extend([name] if count is None else
                             (f"{name}{k}" for k in range(count)))
            decl = RegisterDecl(fields["type"], tuple(names), None, fields["vector"], pos)
            self._decls.append(decl)
            return decl
        attributes = tuple(linkage) + fields["attributes"]
        decls = []
        for _, (name, array, init, _count, pos) in declarators:
            count = None
            if init is not None:
                init, count = init
            if None in array:
                array = complete_array(name, array, count, init, attributes, pos)
            decl = VariableDecl(
                space=space,
                name=name,
                type=fields["type"],
                align=fields["align"],
                array=array,
                initializer=init,
                attributes=attributes,
                vector=fields["vector"],
                pos=pos,
            )
            decls.append(decl)
        self._decls.extend(decls)
        return decls[0] if len(decls) == 1 else decls

    def variable_decl_run(self, texts: tuple, position):
        """:meth:`variable_decl` for one name declared the way nvcc does, lexed whole: the
        texts of ``STATE_SPACE .align INT TYPE NAME [ INT ]`` (``None`` where absent)."""
        space, _, align, type_, name, bracket, dim, _ = texts
        space = space[1:]
        pos = SourcePos(*position(4))
        if space == "reg":
            decl = RegisterDecl(type_[1:], (name,), None, None, pos)
        else:
            array = () if bracket is None else (None if dim is None else parse_int(dim),)
            if None in array:
                array = complete_array(name, array, None, None, (), pos)
            decl = VariableDecl(
                space=space,
                name=name,
                type=type_[1:],
                align=None if align is None else parse_int(align),
                array=array,
                initializer=None,
                attributes=(),
                vector=None,
                pos=pos,
            )
        self._decls.append(decl)
        return decl

    def register_range_decl_run(self, texts: tuple, position):
        """:meth:`variable_decl` for ``.reg .b32 %r<100>`` lexed whole."""
        space, type_, declared = texts
        name, _, count = declared.partition("<")
        name = name.rstrip()
        count = int(count.strip(" \t>"))
        pos = SourcePos(*position(2))
        if space == ".reg":
            decl = RegisterDecl(type_[1:], (name,), count, None, pos)
        else:
            decl = VariableDecl(space=space[1:], name=name, type=type_[1:], align=None,
                                array=(), initializer=None, attributes=(), vector=None,
                                pos=pos)
        self._decls.append(decl)
        return decl

    def module_variable(self, c: list):
        """A declaration at module scope: not one of the next function's declarations."""
        if type(c[0]) is RegisterDecl:
            # ptxas: "Module-scoped variables in .reg state space are not allowed with ABI".
            pos = c[0].pos
            raise LocatedError(".reg declarations are not allowed at module scope",
                               pos=(pos.line, pos.column) if pos else None)
        decls = c[0] if type(c[0]) is list else [c[0]]
        del self._decls[-len(decls):]
        for decl in decls:
            self._module_vars[decl.name] = decl
        return c[0]

    def var_declarator(self, c: list) -> _Tagged:
        array: tuple = ()
        init = None
        for item in c[1:]:
            if type(item) is _Tagged:
                if item[0] == "array":
                    array = item[1]
                elif item[0] == "init":
                    init = item[1]
        return _tag("declarator", (str(c[0]), array, init, None, _source_pos(c[0])))

    def _parse_expression(self, token) -> constexpr.Node:
        try:
            return constexpr.parse_expression(str(token))
        except constexpr.ConstExprError as error:
            raise LocatedError(error.message, offset=token.start_pos + error.offset) from None


    def register_range(self, c: list) -> _Tagged:
        if len(c) == 1:
            # One REGISTER_RANGE token, `%r<100>`.
            token = c[0]
            name, _, count = str(token).partition("<")
            return _tag("declarator", (name.rstrip(), (), None, int(count.strip(" \t>")),
                                       _source_pos(token)))
        return _tag("declarator", (str(c[0]), (), None, parse_int(c[1]), _source_pos(c[0])))

    def array_dims(self, c: list) -> _Tagged:
        return _tag("array", tuple(c))

    def array_dim(self, c: list) -> int | None:
        return parse_int(c[0]) if c else None

    def initializer(self, c: list) -> _Tagged:
        value = c[0]
        # Top-level elements of a nested list (`{{1,2},{3,4}}`): the outer dimension.
        nested = type(value) is list and any(type(v) is list for v in value)
        return _tag("init", (tuple(_flatten_init(value)), len(value) if nested else None))

    def init_symbol(self, c: list) -> Symbol:
        return Symbol(str(c[0]))

    def init_expression(self, c: list):
        """A constant expression in an initializer: a number, or ``sym+imm`` (ISA 5.4.4)."""
        token = c[0]
        node = self._parse_expression(token)
        if node.kind == "num":
            return _immediate(node)
        from kernelcheck.ptx.scopes import _name_plus_constant, _symbol_plus
        split = _name_plus_constant(node)
        if split is None:
            raise LocatedError(f"initializer '{token}' is not a constant or an address "
                               "plus a constant", offset=token.start_pos, unsupported=True)
        return _symbol_plus(*split)

    def sampler_init(self, c: list) -> list:
        return list(c)

    def sampler_field(self, c: list) -> Expression:
        return Expression(f"{c[0]}={c[1]}")

    def init_list(self, c: list) -> list:
        items = []
        for item in c:
            if isinstance(item, Token) and item.type == "INIT_INTEGERS":
                items.extend(Immediate(int(v)) for v in item.split(","))
            else:
                items.append(item)
        return items

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
        label = Label(_label_name(token), _source_pos(token))
        self._decls.append(label)
        return label

    def label_run(self, texts: tuple, position) -> Label:
        """:meth:`label` for a label the table driver lexed whole."""
        label = Label(_label_name(texts[0]), SourcePos(*position(0)))
        self._decls.append(label)
        return label

    def scope(self, c: list) -> list:
        statements = _flatten(c)
        if not self._nested:
            for statement in statements:
                if type(statement) in _DECLARATIONS:
                    self._nested = True
                    break
        return [_SCOPE_OPEN, *statements, _SCOPE_CLOSE]

    def callprototype(self, c: list) -> CallPrototype:
        returns = c[1][1] if len(c) > 1 else ()
        params = c[2][1] if len(c) > 2 else ()
        prototype = CallPrototype(_label_name(c[0]), returns[0] if returns else None, params)
        self._decls.append(prototype)
        return prototype

    def proto_ret(self, c: list) -> _Tagged:
        return _tag("returns", _layout(c))

    def proto_args(self, c: list) -> _Tagged:
        return _tag("params", _layout(c))

    def calltargets(self, c: list) -> CallTargets:
        targets = CallTargets(_label_name(c[0]), tuple(str(t) for t in c[1:]))
        self._decls.append(targets)
        return targets

    def branchtargets(self, c: list) -> BranchTargets:
        targets = BranchTargets(_label_name(c[0]), tuple(str(t) for t in c[1:]))
        self._decls.append(targets)
        return targets

    def loc(self, c: list) -> None:
        if len(c) == 1:
            # `.loc 1 42 7` alone, the common form: one SourceLoc per distinct text.
            text = c[0].value if isinstance(c[0], Token) else str(c[0])
            loc = self._locs.get(text)
            if loc is None:
                _, file, line, column = text.split()
                loc = self._locs[text] = SourceLoc(int(file), int(line), int(column))
            self._loc = loc
            return None
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

    def loc_run(self, texts: tuple, position) -> None:
        """:meth:`loc` for a ``.loc`` the table driver lexed whole (no attributes)."""
        return self.loc(texts)

    def loc_attributes_run(self, texts: tuple, position) -> None:
        """:meth:`loc` for the ``.loc`` of an inlined call lexed whole: the texts of
        ``LOC , function_name NAME + INT , inlined_at INT INT INT`` (``None`` where
        absent)."""
        _, file, line, column = texts[0].split()
        name = texts[3] if texts[4] is None else f"{texts[3]}+{parse_int(texts[5])}"
        inlined = None
        if texts[7] is not None:
            inlined = SourceLoc(parse_int(texts[8]), parse_int(texts[9]),
                                parse_int(texts[10]))
        loc = SourceLoc(int(file), int(line), int(column), name, inlined)
        if loc != self._loc:
            self._loc = loc
        return None

    def loc_raw(self, c: list) -> None:
        """:meth:`loc` for the table driver: the attributes come as one :class:`_Repeat`."""
        return self.loc(c if len(c) == 1 else [c[0], *c[1]])

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
                    # Look up by the plain string: a lark Token key would compare through
                    # Token.__eq__, a Python call per lookup.
                    entry = self._runs.get(item.value) or self._split_run(item)
                    operands.extend(entry[0])
                    if entry[1]:
                        self._used_regs.update(entry[1])
                    if entry[2]:
                        self._used_syms.update(entry[2])
                elif token_type == "OPCODE":
                    opcode_token = item
                elif token_type == "GUARD":
                    guard = self._guards.get(item.value)
                    if guard is None:
                        text = str(item)
                        guard = Guard(text[2:], True) if text[1] == "!" else Guard(
                            text[1:], False)
                        self._guards[text] = guard
                    self._used_regs.add(guard.register)
                # other tokens are punctuation kept by the lark engine
            elif hasattr(item, "children"):
                for child in item.children:
                    if isinstance(child, Token) and child.type == "OPERANDS":
                        entry = self._runs.get(child.value) or self._split_run(child)
                        operands.extend(entry[0])
                        if entry[1]:
                            self._used_regs.update(entry[1])
                        if entry[2]:
                            self._used_syms.update(entry[2])
                    elif not isinstance(child, (str, Token)):
                        operands.append(child)
            else:
                operands.append(item)
        split = self._opcodes.get(opcode_token.value)
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

    def instruction_run(self, texts: tuple, position) -> Instruction:
        """:meth:`instruction` for a statement the table driver lexed whole.

        ``texts`` holds the text of the GUARD, OPCODE and OPERANDS terminals (``None`` where
        the statement has none) and the ``;``: ``@%p1 bra $L;``, ``ret;``; ``position(i)``
        is where the ``i``-th of them stands.
        """
        guard_text, opcode, operand_run, _ = texts
        guard = None
        if guard_text is not None:
            guard = self._guards.get(guard_text)
            if guard is None:
                guard = Guard(guard_text[2:], True) if guard_text[1] == "!" else Guard(
                    guard_text[1:], False)
                self._guards[guard_text] = guard
            self._used_regs.add(guard.register)
        operands = ()
        if operand_run is not None:
            entry = self._runs.get(operand_run) or self._split_run(operand_run)
            operands = entry[0]
            if entry[1]:
                self._used_regs.update(entry[1])
            if entry[2]:
                self._used_syms.update(entry[2])
        split = self._opcodes.get(opcode)
        if split is None:
            pieces = opcode.split(".")
            split = (pieces[0], tuple(pieces[1:]), pieces[0] in KNOWN_OPCODES)
            self._opcodes[opcode] = split
        index = self._counter
        self._counter = index + 1
        return Instruction(split[0], split[1], operands, guard, self._loc, index, split[2],
                           SourcePos(*position(1)))

    # ------------------------------------------------------------ operands

    def _split_run(self, token) -> tuple:
        """The operands of an OPERANDS token, with the `%` and bare identifiers among them."""
        run = tuple(self._run_operand(m) for m in self._operand_pattern.finditer(token))
        registers = []
        symbols = []
        for operand in run:
            kind = type(operand)
            if kind is Address:
                operand = operand.base
                kind = type(operand)
            if kind is Register:
                registers.append(operand.name)
            elif kind is Symbol:
                symbols.append(operand.name)
        entry = (run, tuple(registers), tuple(symbols))
        self._runs[str(token)] = entry
        return entry

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
        if kind == "ELEMENT":
            return Register(text)
        return self.symbol([text])

    def register(self, c: list) -> Register | SpecialRegister:
        name = c[0]
        found = self._registers.get(name.value if isinstance(name, Token) else name)
        if found is None:
            text = str(name)
            found = SpecialRegister(text) if is_special_register(text) else Register(text)
            self._registers[text] = found
        if type(found) is Register:
            self._used_regs.add(found.name)
        return found

    def element(self, c: list) -> Register:
        """``v.x`` of a vector register with a bare name (ISA 6.4.3)."""
        name = str(c[0])
        self._used_regs.add(name)
        return Register(name)

    def selected_operand(self, c: list):
        """``%r1.b0`` (a video instruction's byte or half-word selector): not modelled."""
        token = c[0]
        raise LocatedError(f"operand selector {token} (byte or half-word selectors of video "
                           f"instructions)", offset=token.start_pos, unsupported=True)

    def expression_operand(self, c: list):
        """An operand with operators: folded when constant; ``!p`` and ``p|q`` built at
        once; anything else with names waits for the function's scopes."""
        token = c[0]
        node = self._parse_expression(token)
        if node.kind == "num":
            return _immediate(node)
        children = node.children
        if node.kind == "unary" and node.op == "!" and children[0].kind == "name":
            name = children[0].value
            self._used_regs.add(name)
            return NegatedPredicate(Register(name))
        if node.kind == "binary" and node.op == "|" and children[0].kind == "name" and (
                children[1].kind == "name"):
            first, second = children[0].value, children[1].value
            self._used_regs.add(first)
            if second == "_":
                return PredicatePair(Register(first), _SINK)
            self._used_regs.add(second)
            return PredicatePair(Register(first), Register(second))
        self._pending = True
        return PendingExpression(node, str(token), token.start_pos)

    def array_element(self, c: list) -> PendingArrayElement:
        self._pending = True
        return PendingArrayElement(str(c[0]), c[1], c[0].start_pos)

    def address(self, c: list) -> Address:
        text = c[0]
        found = self._addresses.get(text.value if isinstance(text, Token) else text)
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
        base = found.base
        if type(base) is Register:
            self._used_regs.add(base.name)
        elif type(base) is Symbol:
            self._used_syms.add(base.name)
        return found

    def bracket_list(self, c: list):
        if len(c) == 1 and type(c[0]) in (Register, Symbol):
            return Address(c[0], 0)
        if len(c) == 1 and type(c[0]) is Immediate and c[0].kind == "int":
            return Address(None, c[0].value)
        return BracketList(tuple(c))

    def vector_operand(self, c: list) -> VectorOperand:
        return VectorOperand(tuple(c))

    def paren_list(self, c: list):
        # `(1<<4)` and `(%r1+1)` are a parenthesised expression, not a call's list.
        if len(c) == 1 and type(c[0]) in (Immediate, PendingExpression):
            return c[0]
        return ParenList(tuple(c))

    def symbol(self, c: list):
        text = str(c[0])
        if text == "_":
            return _SINK
        if text == "WARP_SZ":
            return _WARP_SZ
        self._used_syms.add(text)
        return Symbol(text)

    def section_symbol(self, c: list) -> Symbol:
        return Symbol(str(c[0]))

    def symbol_plus(self, c: list) -> Expression:
        return Expression(f"{c[0]}+{parse_int(c[1])}")

    def int_immediate(self, c: list) -> Immediate:
        return Immediate(parse_int(c[0]))

    def hex_float_immediate(self, c: list) -> Immediate:
        text = str(c[0])
        return Immediate(int(text[2:], 16), "f32" if text[1] in "fF" else "f64")

    def decimal_float_immediate(self, c: list) -> Immediate:
        return Immediate(float(c[0]), "float")


# ---------------------------------------------------------------- helpers


def _source_pos(token) -> SourcePos | None:
    if not isinstance(token, Token):
        return None
    if hasattr(token, "position"):
        return SourcePos(*token.position())
    return SourcePos(token.line, token.column)


def _immediate(node: constexpr.Node) -> Immediate:
    if node.type == "f64":
        return Immediate(node.value, "float")
    return Immediate(node.value)


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
