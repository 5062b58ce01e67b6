"""Lexical scopes of a PTX function: every declared identifier gets one IR name.

PTX scopes declarations by block (PTX ISA 9.x §4.4 identifiers, §5.4 variables; §11.1.1
nested ``{ }`` blocks): a register, variable or label declared inside ``{ }`` is visible in
that block only, and may shadow a declaration of an enclosing block. nvcc copies every
inline ``asm("{ .reg .pred p; ... }")`` verbatim into its PTX, so such blocks, with bare
register names (``p``, no ``%``) and shadowing, are common in real libraries. A register is
visible from its declaration on (ptxas rejects a use before it); a label is visible in its
whole block (branches may go forward), and not outside it (ptxas: "Unknown symbol").

The IR never has two things with one name. Walking a body in source order, the first
declaration of a name keeps it; every later declaration of the same name in the function
(a shadowing one, or one in a sibling block) is renamed ``name$k`` with the smallest
``k >= 1`` that no identifier of the function uses (``$`` is a legal identifier character,
so the printed IR is PTX again and parses back to the same names): ``p`` -> ``p$1``,
``%r1`` -> ``%r1$1``, a second ``DONE:`` label -> ``DONE$1``. Every use is rewritten to the
IR name of the declaration it sees.

Also resolved here, because each needs to know what a name is:

* a bare identifier declared with ``.reg`` is a :class:`Register` wherever it appears
  (operand, address base, guard, ``!p``, ``p|q``, ``v.x``);
* a ``%`` identifier that is not a register (a parameter ``%out``, a function ``%1``) is a
  :class:`Symbol`;
* a vector register (``.reg .v4 .u16 v``) is four scalar registers ``v.x v.y v.z v.w``
  (``.r .g .b .a`` read as ``.x .y .z .w``, ISA §6.4.3); a whole-vector use is a
  :class:`VectorOperand` of them;
* expressions with names: ``!p``, ``p|q``, ``reg+imm`` and ``sym+imm`` (ISA §4.5.4); a
  register plus an immediate outside brackets (``add.u32 %r2, %r1+1, 3``, which ptxas
  accepts and computes as ``%r1 + 1`` in the register's width) becomes an ``add`` into a
  fresh register ``$tmpN`` placed before the instruction, so the analyses and the emulator
  need no new operand kind;
* array elements ``a[i]`` with a constant index (ISA §6.4.2): the address ``a + i*size``,
  ``size`` the size of the element type (ptxas scales by the scalar type, also for vector
  arrays); a memory operand in ``ld``/``st``, the address value in ``mov``/``cvta``.

A name no declaration of the function resolves is returned to the caller, which checks it
against the module's functions and variables once the module is read; a use of an undeclared
register is an error there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kernelcheck.ir.nodes import (
    VECTOR_ELEMENTS,
    Address,
    BracketList,
    BranchTargets,
    CallPrototype,
    CallTargets,
    Expression,
    Guard,
    Immediate,
    Instruction,
    Label,
    NegatedPredicate,
    Param,
    ParenList,
    PredicatePair,
    Register,
    RegisterDecl,
    ScopeClose,
    ScopeOpen,
    Sink,
    Symbol,
    VariableDecl,
    VectorOperand,
)
from kernelcheck.ptx import constexpr
from kernelcheck.ptx.located import (
    LocatedError,
    PendingArrayElement,
    PendingExpression,
    position_of,
)
from kernelcheck.ptx.toplevel import quick_check, range_names

__all__ = ["PendingExpression", "PendingArrayElement", "LocatedError", "resolve_function",
           "ELEMENT_ALIASES"]

#: Color names of vector elements (ISA §6.4.3) and the coordinate names they stand for.
ELEMENT_ALIASES = {"x": "x", "y": "y", "z": "z", "w": "w", "r": "x", "g": "y", "b": "z",
                   "a": "w"}

# Opcodes whose array-element or ``sym+imm`` operand is an address value, not memory.
_ADDRESS_VALUE_OPCODES = frozenset({"mov", "cvta"})


@dataclass(frozen=True, slots=True)
class _Binding:
    kind: str  # "reg", "vreg", "var", "label", "param"
    name: str  # the IR name
    type: str = ""
    vector: str | None = None
    decl: object = None


def _param_bindings(params: tuple[Param, ...]) -> list[tuple[str, _Binding]]:
    out = []
    for param in params:
        if param.space == "reg":
            kind = "vreg" if param.vector else "reg"
            out.append((param.name, _Binding(kind, param.name, param.type, param.vector)))
        else:
            out.append((param.name, _Binding("param", param.name, param.type, decl=param)))
    return out


class _Resolver:
    """The scope walk of one function body (see the module docstring)."""

    def __init__(self, body: tuple, params: tuple[Param, ...], module_vars: dict) -> None:
        self.body = body
        self.module_vars = module_vars
        self.visible: dict[str, _Binding] = {}
        self.undo: list[list[tuple[str, _Binding | None]]] = [[]]
        self.here: list[set[str]] = [set()]
        # Names no declaration resolves, with the place of their first use.
        self.unresolved: dict[str, tuple[int, int] | None] = {}
        self.taken: set[str] = set()
        self.counters: dict[str, int] = {}
        self.once: set[str] = set()
        self.labels: list[list] = []  # per block, in order of their `{`: label statements
        self.out: list = []
        self.instr: Instruction | None = None
        self.temporaries = 0
        # Parameterized declarations (`%r<1000>`): every (prefix, count) of the body, and the
        # top-level ones whose names are looked up on use instead of declared one by one.
        self.all_ranges: list[tuple[str, int]] = []
        self.top_ranges: dict[str, tuple[int, str]] = {}
        self.range_bindings: dict[str, _Binding] = {}
        self._collect(params)
        for name, binding in _param_bindings(params):
            self.once.add(name)
            self._declare(name, binding, None)

    # ------------------------------------------------------------ names
    def _collect(self, params) -> None:
        taken = self.taken
        for param in params:
            taken.add(param.name)
        stack = [[]]
        blocks = [stack[0]]
        for statement in self.body:
            kind = type(statement)
            if kind is Instruction:
                continue
            if kind is ScopeOpen:
                stack.append([])
                blocks.append(stack[-1])
            elif kind is ScopeClose:
                stack.pop()
            elif kind is RegisterDecl:
                if statement.count is None:
                    taken.update(statement.names)
                else:
                    self.all_ranges.append((statement.names[0], statement.count))
            elif kind is VariableDecl:
                taken.add(statement.name)
            elif kind in (Label, CallPrototype, BranchTargets, CallTargets):
                taken.add(statement.name)
                stack[-1].append(statement)
        self.labels = blocks

    def _in_top_range(self, name: str) -> tuple[int, str] | None:
        """``(count, type)`` of the top-level range declaring ``name``, if any."""
        base = name.rstrip("0123456789")
        entry = self.top_ranges.get(base)
        if entry is None:
            return None
        digits = name[len(base):]
        if digits and (digits == "0" or digits[0] != "0") and int(digits) < entry[0]:
            return entry
        return None

    def _in_any_range(self, name: str) -> bool:
        for prefix, count in self.all_ranges:
            digits = name[len(prefix):]
            if name.startswith(prefix) and digits.isdigit() and (
                    digits == "0" or digits[0] != "0") and int(digits) < count:
                return True
        return False

    def _ir_name(self, name: str) -> str:
        if name not in self.once and not (self.top_ranges and self._in_top_range(name)):
            self.once.add(name)
            return name
        k = self.counters.get(name, 0) + 1
        while f"{name}${k}" in self.taken or (self.all_ranges and self._in_any_range(
                f"{name}${k}")):
            k += 1
        self.counters[name] = k
        fresh = f"{name}${k}"
        self.taken.add(fresh)
        return fresh

    def _declare(self, name: str, binding: _Binding, where) -> None:
        if name in self.here[-1] or (len(self.here) == 1 and self.top_ranges and
                                     self._in_top_range(name)):
            raise LocatedError(f"duplicate declaration of {name}", pos=position_of(where),
                               search=name)
        self.here[-1].add(name)
        self.undo[-1].append((name, self.visible.get(name)))
        self.visible[name] = binding

    def _open(self, block: int) -> None:
        self.undo.append([])
        self.here.append(set())
        self._declare_labels(block)

    def _declare_labels(self, block: int) -> None:
        for statement in self.labels[block]:
            self._declare(statement.name, _Binding("label", self._ir_name(statement.name)),
                          statement)

    def _close(self) -> None:
        for name, old in reversed(self.undo.pop()):
            if old is None:
                del self.visible[name]
            else:
                self.visible[name] = old
        self.here.pop()

    # ------------------------------------------------------------ walk
    def run(self) -> tuple:
        self._declare_labels(0)
        block = 0
        out = self.out
        for statement in self.body:
            kind = type(statement)
            if kind is Instruction:
                self._instruction(statement)
            elif kind is ScopeOpen:
                block += 1
                self._open(block)
                out.append(statement)
            elif kind is ScopeClose:
                self._close()
                out.append(statement)
            elif kind is RegisterDecl:
                out.append(self._register_decl(statement))
            elif kind is VariableDecl:
                name = self._ir_name(statement.name)
                self._declare(statement.name, _Binding("var", name, statement.type,
                                                       decl=statement), statement)
                out.append(statement if name == statement.name else
                           replace(statement, name=name))
            elif kind is Label:
                name = self.visible[statement.name].name
                out.append(statement if name == statement.name else Label(name, statement.pos))
            elif kind is CallPrototype or kind is CallTargets:
                name = self.visible[statement.name].name
                out.append(statement if name == statement.name else
                           replace(statement, name=name))
            elif kind is BranchTargets:
                labels = tuple(self._label(n, statement) for n in statement.labels)
                out.append(BranchTargets(self.visible[statement.name].name, labels))
            else:
                out.append(statement)
        return tuple(out)

    def _label(self, name: str, where) -> str:
        binding = self.visible.get(name)
        if binding is None or binding.kind != "label":
            raise LocatedError(f"{name} is not a label of this block", pos=position_of(where),
                               search=name)
        return binding.name

    def _register_decl(self, decl: RegisterDecl) -> RegisterDecl:
        if decl.vector is not None:
            if decl.vector not in VECTOR_ELEMENTS:
                raise LocatedError(f"vector registers are .v2 or .v4, not .{decl.vector}",
                                   pos=position_of(decl))
            if decl.type == "pred":
                raise LocatedError("predicate vector register declaration",
                                   pos=position_of(decl), unsupported=True)
        kind = "vreg" if decl.vector else "reg"
        if decl.count is not None and decl.vector is None and len(self.here) == 1:
            prefix = decl.names[0]
            names = range_names(prefix, decl.count)
            if not prefix[-1:].isdigit() and prefix not in self.top_ranges and \
                    self.once.isdisjoint(names) and self.here[0].isdisjoint(names):
                # Looked up on use (_lookup): no binding per register.
                self.top_ranges[prefix] = (decl.count, decl.type)
                return decl
        names = decl.iter_base_names()
        renamed = []
        for name in names:
            ir = self._ir_name(name)
            self._declare(name, _Binding(kind, ir, decl.type, decl.vector), decl)
            renamed.append(ir)
        if tuple(renamed) == names:
            return decl
        return RegisterDecl(decl.type, tuple(renamed), None, decl.vector, decl.pos)

    # ------------------------------------------------------------ instructions
    def _instruction(self, instr: Instruction) -> None:
        self.instr = instr
        guard = instr.guard
        if guard is not None:
            binding = self._lookup(guard.register)
            if binding is None or binding.kind != "reg":
                what = "undeclared" if binding is None else f"not a register ({binding.kind})"
                raise LocatedError(f"guard predicate {guard.register} is {what}",
                                   pos=position_of(instr), search=guard.register)
            if binding.name != guard.register:
                guard = Guard(binding.name, guard.negated)
        changed = guard is not instr.guard
        operands = []
        for k, operand in enumerate(instr.operands):
            resolved = self._operand(operand, k)
            changed = changed or resolved is not operand
            operands.append(resolved)
        if not changed:
            self.out.append(instr)
            return
        self.out.append(Instruction(instr.opcode, instr.modifiers, tuple(operands), guard,
                                    instr.loc, instr.index, instr.known, instr.pos))

    def _lookup(self, name: str) -> _Binding | None:
        binding = self.visible.get(name)
        if binding is not None:
            return binding
        if self.top_ranges:
            binding = self.range_bindings.get(name)
            if binding is not None:
                return binding
            entry = self._in_top_range(name)
            if entry is not None:
                binding = self.range_bindings[name] = _Binding("reg", name, entry[1])
                return binding
        if "." in name:
            base, component = name.rsplit(".", 1)
            vector = self.visible.get(base)
            if vector is None:
                return None
            element = ELEMENT_ALIASES.get(component)
            if vector.kind != "vreg":
                raise LocatedError(f"{name}: {base} is not a vector register",
                                   pos=position_of(self.instr), search=name)
            if element not in VECTOR_ELEMENTS[vector.vector]:
                raise LocatedError(f"{name}: a .{vector.vector} register has no element "
                                   f".{component}", pos=position_of(self.instr), search=name)
            return _Binding("reg", f"{vector.name}.{element}", vector.type)
        return None

    def _name(self, name: str):
        """The operand a bare or ``%`` identifier stands for."""
        binding = self._lookup(name)
        if binding is None:
            self.unresolved.setdefault(name, position_of(self.instr))
            return Symbol(name)
        if binding.kind == "reg":
            return Register(binding.name)
        if binding.kind == "vreg":
            return VectorOperand(tuple(Register(f"{binding.name}.{e}")
                                       for e in VECTOR_ELEMENTS[binding.vector]))
        return Symbol(binding.name)

    def _register(self, name: str, what: str) -> Register:
        binding = self._lookup(name)
        if binding is None or binding.kind != "reg":
            state = "undeclared" if binding is None else "not a scalar register"
            raise LocatedError(f"{what} {name} is {state}", pos=position_of(self.instr),
                               search=name)
        return Register(binding.name)

    def _operand(self, operand, position: int, in_address: bool = False):
        kind = type(operand)
        if kind is Register:
            # The common case first: a register seen under its own IR name.
            binding = self._lookup(operand.name)
            if binding is not None and binding.kind == "reg" and binding.name == operand.name:
                return operand
        if kind is Register or kind is Symbol:
            resolved = self._name(operand.name)
            if resolved == operand:
                return operand
            if in_address and type(resolved) is VectorOperand:
                raise LocatedError(f"vector register {operand.name} used as an address",
                                   pos=position_of(self.instr), search=operand.name)
            return resolved
        if kind is Address:
            base = operand.base
            if base is None:
                return operand
            resolved = self._operand(base, position, True)
            if resolved is base:
                return operand
            return Address(resolved, operand.offset)
        if kind is VectorOperand or kind is ParenList or kind is BracketList:
            elements = []
            for element in operand.elements:
                resolved = self._operand(element, position, kind is BracketList)
                if type(resolved) is VectorOperand and kind is VectorOperand:
                    raise LocatedError("a vector register inside a vector operand",
                                       pos=position_of(self.instr))
                elements.append(resolved)
            if kind is BracketList and len(elements) == 1:
                return _as_address(elements[0], self.instr)
            if all(a is b for a, b in zip(elements, operand.elements, strict=True)):
                return operand
            return kind(tuple(elements))
        if kind is NegatedPredicate:
            register = self._register(operand.register.name, "negated predicate")
            return operand if register == operand.register else NegatedPredicate(register)
        if kind is PredicatePair:
            first = self._register(operand.first.name, "predicate")
            second = operand.second
            if type(second) is not Sink:
                second = self._register(second.name, "predicate")
            if first == operand.first and second == operand.second:
                return operand
            return PredicatePair(first, second)
        if kind is PendingExpression:
            return self._expression(operand, position, in_address)
        if kind is PendingArrayElement:
            return self._array_element(operand)
        return operand

    # ------------------------------------------------------------ expressions
    def _expression(self, pending: PendingExpression, position: int, in_address: bool):
        node = pending.node
        if node.kind == "unary" and node.op == "!" and node.children[0].kind == "name":
            return NegatedPredicate(self._register(node.children[0].value, "negated predicate"))
        if node.kind == "binary" and node.op == "|" and all(
                c.kind == "name" for c in node.children):
            first = self._register(node.children[0].value, "predicate")
            name = node.children[1].value
            return PredicatePair(first, Sink() if name == "_" else self._register(
                name, "predicate"))
        split = _name_plus_constant(node)
        if split is None:
            names = ", ".join(n.value for n in constexpr.names_in(node))
            raise LocatedError(f"expression '{pending.text}' over {names} (only reg+imm, "
                               f"sym+imm, !p and p|q have names)", offset=pending.offset,
                               unsupported=True)
        name, offset = split
        base = self._name(name)
        if type(base) is VectorOperand:
            raise LocatedError(f"vector register {name} in an expression",
                               offset=pending.offset)
        if in_address:
            return Address(base, offset)
        if type(base) is Symbol:
            return _symbol_plus(base.name, offset)
        if position == 0:
            raise LocatedError(f"'{pending.text}': a register plus an immediate cannot be "
                               "a destination", offset=pending.offset)
        return self._register_plus(base, offset, pending)

    def _register_plus(self, register: Register, offset: int, pending) -> Register:
        rtype = self._type_of(register.name)
        if rtype is None or rtype[0] not in "bus" or rtype[1:] not in ("16", "32", "64"):
            raise LocatedError(f"'{pending.text}': register plus immediate on a .{rtype} "
                               "register", offset=pending.offset, unsupported=True)
        add_type = ("s" if rtype[0] == "s" else "u") + rtype[1:]
        self.temporaries += 1
        name = self._fresh_temporary()
        self.out.append(RegisterDecl(rtype, (name,), pos=self.instr.pos))
        self.out.append(Instruction("add", (add_type,),
                                    (Register(name), register, Immediate(offset)),
                                    None, self.instr.loc, self.instr.index, True,
                                    self.instr.pos))
        return Register(name)

    def _fresh_temporary(self) -> str:
        k = self.counters.get("$tmp", 0) + 1
        while f"$tmp{k}" in self.taken:
            k += 1
        self.counters["$tmp"] = k
        self.taken.add(f"$tmp{k}")
        return f"$tmp{k}"

    def _type_of(self, ir_name: str) -> str | None:
        binding = self._lookup(ir_name)
        if binding is not None and binding.kind == "reg" and binding.name == ir_name:
            return binding.type
        for binding in self.visible.values():
            if binding.kind == "reg" and binding.name == ir_name:
                return binding.type
            if binding.kind == "vreg" and ir_name.startswith(binding.name + "."):
                return binding.type
        return None

    def _array_element(self, element: PendingArrayElement):
        binding = self._lookup(element.name)
        if binding is not None and binding.kind in ("reg", "vreg", "label"):
            raise LocatedError(f"{element.name}[...]: {element.name} is not an array",
                               offset=element.offset)
        decl = binding.decl if binding is not None else self.module_vars.get(element.name)
        name = binding.name if binding is not None else element.name
        if decl is None:
            raise LocatedError(f"{element.name}[...]: undeclared array {element.name}",
                               offset=element.offset)
        index = element.index
        if type(index) is PendingExpression or type(index) is not Immediate or (
                index.kind != "int"):
            raise LocatedError(f"array element {element.name}[...] with an index that is "
                               "not an integer constant", offset=element.offset,
                               unsupported=True)
        from kernelcheck.ir.nodes import type_size
        offset = index.value * type_size(decl.type)
        if self.instr.opcode in _ADDRESS_VALUE_OPCODES:
            return _symbol_plus(name, offset)
        return Address(Symbol(name), offset)


def _symbol_plus(name: str, offset: int):
    if offset == 0:
        return Symbol(name)
    return Expression(f"{name}+{offset}" if offset > 0 else f"{name}-{-offset}")


def _as_address(element, instr):
    kind = type(element)
    if kind is Address:
        return element
    if kind is Register or kind is Symbol:
        return Address(element, 0)
    if kind is Immediate and element.kind == "int":
        return Address(None, element.value)
    return BracketList((element,))


def _name_plus_constant(node: constexpr.Node) -> tuple[str, int] | None:
    """``(name, c)`` when ``node`` is ``name + c``, ``c + name`` or ``name - c``."""
    if node.kind == "name":
        return node.value, 0
    if node.kind != "binary" or node.op not in "+-":
        return None
    left, right = node.children
    if left.kind == "name" and right.kind == "num" and right.type != "f64":
        return left.value, right.value if node.op == "+" else -right.value
    if node.op == "+" and right.kind == "name" and left.kind == "num" and left.type != "f64":
        return right.value, left.value
    inner = _name_plus_constant(left)
    if inner is not None and right.kind == "num" and right.type != "f64":
        return inner[0], inner[1] + (right.value if node.op == "+" else -right.value)
    return None


def resolve_function(body: tuple, params: tuple[Param, ...], decls: list, nested: bool,
                     used_registers: set[str], used_symbols: set[str], pending: bool,
                     module_vars: dict[str, VariableDecl]) -> tuple[tuple, dict]:
    """Resolve the names of one function body.

    Parameters
    ----------
    body : tuple
        The statements in source order, with :class:`ScopeOpen`/:class:`ScopeClose`.
    params : tuple of Param
        Return parameters and parameters (declared in the body's outermost block).
    decls : list
        The declaring statements of the body (registers, variables, labels, prototypes,
        branch target lists), as the parser reduced them.
    nested : bool
        Whether a ``{ }`` block of the body declares anything.
    used_registers, used_symbols : set of str
        The names the parser saw in register positions (``%`` identifiers, guards, ``!p``,
        ``p|q``, ``v.x``) and as other bare identifiers in operands.
    pending : bool
        Whether the body holds :class:`PendingExpression` or :class:`PendingArrayElement`
        operands.
    module_vars : dict
        The module-scope variables declared so far (element types of arrays).

    Returns
    -------
    (body, unresolved)
        The body with IR names (the same tuple when nothing changes) and the names no
        declaration of the function resolves (module-scope names, or undeclared ones),
        each with the ``(line, column)`` of its first use when known.

    Raises
    ------
    LocatedError
        A duplicate declaration, a misused name or an unsupported construct.
    """
    if not (nested or pending):
        # The common case (compiler output without inline-asm blocks): one block, every
        # register written with its declared name; nothing to rename or rewrite.
        unresolved = quick_check(decls, params, used_registers, used_symbols)
        if unresolved is not None:
            # Nothing is renamed here, so the first instruction naming one is its first use.
            return body, dict.fromkeys(unresolved)
    resolver = _Resolver(body, params, module_vars)
    new_body = resolver.run()
    if new_body != body:
        body = _renumber(new_body)
    return body, resolver.unresolved


def _renumber(body: tuple) -> tuple:
    out = []
    index = 0
    for statement in body:
        if type(statement) is Instruction:
            if statement.index != index:
                statement = replace(statement, index=index)
            index += 1
        out.append(statement)
    return tuple(out)
