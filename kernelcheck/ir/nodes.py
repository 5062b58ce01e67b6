"""The Kernel IR: plain, frozen dataclasses that PTX and SASS front ends both produce.

A :class:`Module` holds module-scope items in source order; each :class:`Function` holds its
body as a flat tuple of statements in source order (instructions, labels, declarations and
scope braces), from which the basic blocks are derived. Everything downstream (graphs,
analyses, the emulator, the printer) reads these values and never changes them.

Source positions (:class:`SourcePos`) are carried by every instruction but are left out of
equality, so that ``parse(print(parse(x))) == parse(x)`` holds although the printed text lays
the statements out differently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

__all__ = [
    "SourcePos",
    "SourceLoc",
    "Register",
    "SpecialRegister",
    "Immediate",
    "Symbol",
    "Address",
    "VectorOperand",
    "ParenList",
    "BracketList",
    "Expression",
    "Sink",
    "NegatedPredicate",
    "PredicatePair",
    "ConstantRef",
    "MemoryRef",
    "DescriptorRef",
    "ModifiedOperand",
    "Operand",
    "Guard",
    "Instruction",
    "Label",
    "ScopeOpen",
    "ScopeClose",
    "RegisterDecl",
    "VariableDecl",
    "Pragma",
    "CallPrototype",
    "BranchTargets",
    "CallTargets",
    "Statement",
    "Param",
    "BasicBlock",
    "Function",
    "FileDirective",
    "SectionDirective",
    "UnknownDirective",
    "Module",
    "TERMINATOR_OPCODES",
    "VECTOR_ELEMENTS",
    "type_size",
]


@dataclass(frozen=True, slots=True)
class SourcePos:
    """Where a construct stands in the text it was parsed from (1-based line and column)."""

    line: int
    column: int


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A ``.loc`` debug location: file index, line and column in the CUDA source.

    ``inlined_at`` is the location of the call site when the instruction comes from an
    inlined function (``.loc ... , inlined_at F L C``), and ``function_name`` the label of
    the string naming that function.
    """

    file: int
    line: int
    column: int
    function_name: str | None = None
    inlined_at: SourceLoc | None = None


# --------------------------------------------------------------------------- operands


@dataclass(frozen=True, slots=True)
class Register:
    """A register operand, e.g. ``%r1``, ``%rd4``, ``%p2`` (PTX) or ``R4`` (SASS)."""

    name: str


@dataclass(frozen=True, slots=True)
class SpecialRegister:
    """A read-only special register, e.g. ``%tid.x``, ``%ctaid.y``, ``%laneid``, ``%clock64``."""

    name: str

    @property
    def base(self) -> str:
        """The register without its component: ``%tid`` for ``%tid.x``."""
        return self.name.split(".", 1)[0]

    @property
    def component(self) -> str | None:
        """The vector component (``x``, ``y``, ``z``) or ``None``."""
        parts = self.name.split(".", 1)
        return parts[1] if len(parts) == 2 else None


@dataclass(frozen=True, slots=True)
class Immediate:
    """A constant operand.

    ``kind`` is ``"int"`` for integers, ``"f32"`` / ``"f64"`` for the exact hexadecimal float
    forms ``0fXXXXXXXX`` / ``0dXXXXXXXXXXXXXXXX`` (``value`` then holds the bit pattern), and
    ``"float"`` for a decimal floating-point literal (``value`` is a Python float).
    """

    value: int | float
    kind: str = "int"


@dataclass(frozen=True, slots=True)
class Symbol:
    """A name used as an operand: a label, a variable, a function or a ``.param`` name."""

    name: str


@dataclass(frozen=True, slots=True)
class Address:
    """A memory operand ``[base+offset]``; ``base`` is a register, a symbol or ``None``."""

    base: Register | Symbol | None
    offset: int = 0


@dataclass(frozen=True, slots=True)
class VectorOperand:
    """A brace-enclosed vector of operands, e.g. ``{%f1, %f2, %f3, %f4}``."""

    elements: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class ParenList:
    """A parenthesised operand list, as in ``call (retval0), f, (param0, param1)``."""

    elements: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class BracketList:
    """A bracketed list that is not a plain address, e.g. ``[tex, {%r1, %r2}]``."""

    elements: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class Sink:
    """The bit bucket ``_``: a destination whose value is discarded."""


@dataclass(frozen=True, slots=True)
class NegatedPredicate:
    """A negated predicate source operand, ``!%p1``."""

    register: Register


@dataclass(frozen=True, slots=True)
class PredicatePair:
    """The two predicate destinations of ``setp``/``set``: ``%p1|%p2``."""

    first: Register
    second: Register | Sink


@dataclass(frozen=True, slots=True)
class Expression:
    """A constant expression kept as text, e.g. ``(sym+8)`` or ``generic(var)``."""

    text: str


# SASS operands (added for the SASS front end; PTX never produces them).


@dataclass(frozen=True, slots=True)
class ConstantRef:
    """A constant-bank operand of SASS: ``c[0x0][0x160]``, ``c[0x0][R2+0x10]``,
    ``cx[UR4][0x10]``.

    ``bank`` is the bank number, or the uniform register holding it (``cx[UR4]``);
    ``offset`` the immediate byte offset; ``index`` the register added to it, if any
    (``RZ`` as written in ``c[0x0][RZ]``, which reads offset 0).
    """

    bank: int | Register
    offset: int = 0
    index: Register | None = None

    @property
    def static_offset(self) -> int | None:
        """The byte offset when it does not depend on a register (``RZ`` counts as 0)."""
        if self.index is None or self.index.name in ("RZ", "URZ"):
            return self.offset
        return None


@dataclass(frozen=True, slots=True)
class MemoryRef:
    """A SASS memory operand: ``[R2.64+0x10]``, ``[R4+UR6+0x8]``, ``[R7.X4+0x4]``,
    ``desc[UR4][R2.64+0xc]``.

    ``base`` is the register part (``None`` for ``[0x10]`` or ``[UR4]`` alone, where the
    uniform register is in ``uniform``); ``wide`` is true for a 64-bit base (``R2.64``: the
    pair R2, R3); ``scale`` the ``.X4``/``.X8``/``.X16`` multiplier of the base; ``uniform``
    the uniform register added (``[R4+UR6]``); ``descriptor`` the uniform register pair
    of the global memory descriptor (``desc[UR4]``); ``base_modifiers`` any other
    modifier of the base register (``.U32``), in order.
    """

    base: Register | None
    offset: int = 0
    wide: bool = False
    scale: int = 1
    uniform: Register | None = None
    descriptor: Register | None = None
    base_modifiers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DescriptorRef:
    """A bracketed operand named by a lower-case prefix that is not a memory address by
    itself, e.g. a descriptor ``desc[UR10]``, ``gdesc[UR4]`` or ``tmem[UR8]``."""

    kind: str
    elements: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class ModifiedOperand:
    """A SASS operand with prefix or suffix modifiers: ``-R2``, ``|R2|``, ``-|R2|``, ``~R2``,
    ``R2.reuse``, ``R2.H1``, ``c[0x0][0x178].H0_H0``.

    ``suffixes`` keeps the dotted suffixes in order (``("reuse",)``, ``("H0_H0",)``).
    A negated predicate ``!P0`` is a :class:`NegatedPredicate`, not a modified operand.
    """

    operand: Operand
    negate: bool = False
    absolute: bool = False
    invert: bool = False
    suffixes: tuple[str, ...] = ()


Operand = (
    Register
    | SpecialRegister
    | Immediate
    | Symbol
    | Address
    | VectorOperand
    | ParenList
    | BracketList
    | Sink
    | NegatedPredicate
    | PredicatePair
    | Expression
    | ConstantRef
    | MemoryRef
    | DescriptorRef
    | ModifiedOperand
)


# --------------------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Guard:
    """The guard predicate of an instruction: ``@%p1`` or ``@!%p1``."""

    register: str
    negated: bool = False


#: Opcodes after which control does not fall through to the next statement (unless guarded).
TERMINATOR_OPCODES = frozenset({"bra", "brx", "ret", "exit", "trap", "BRA", "BRX", "JMP",
                                "RET", "EXIT", "JMX", "BREAK", "KILL", "BRXU", "JMXU"})


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instruction.

    ``modifiers`` keeps every dotted modifier in source order (``ld.global.nc.v4.f32`` has
    opcode ``ld`` and modifiers ``("global", "nc", "v4", "f32")``). ``operands`` are in
    source order, destinations first as the ISA writes them. ``index`` is the position of
    the instruction in its function (0-based), the id graphs and analyses refer to.
    ``known`` is ``False`` for opcodes kernelcheck has no semantics for; such instructions
    are kept whole and treated conservatively downstream.
    """

    opcode: str
    modifiers: tuple[str, ...] = ()
    operands: tuple[Operand, ...] = ()
    guard: Guard | None = None
    loc: SourceLoc | None = None
    index: int = -1
    known: bool = True
    pos: SourcePos | None = field(default=None, compare=False, repr=False)

    @property
    def full_opcode(self) -> str:
        """The opcode with its modifiers, as written: ``ld.global.f32``."""
        if not self.modifiers:
            return self.opcode
        return self.opcode + "." + ".".join(self.modifiers)

    def has_modifier(self, name: str) -> bool:
        """Whether ``name`` is one of the modifiers."""
        return name in self.modifiers

    @property
    def is_terminator(self) -> bool:
        """Whether control may leave the block here (branch, return, exit, trap)."""
        return self.opcode in TERMINATOR_OPCODES


@dataclass(frozen=True, slots=True)
class Label:
    """A label definition ``name:``."""

    name: str
    pos: SourcePos | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ScopeOpen:
    """An opening brace of a nested scope inside a function body."""


@dataclass(frozen=True, slots=True)
class ScopeClose:
    """A closing brace of a nested scope inside a function body."""


#: The element names of a vector register, by vector width (PTX ISA 6.4.3: ``.x .y .z .w``;
#: the color names ``.r .g .b .a`` are read as these).
VECTOR_ELEMENTS = {"v2": ("x", "y"), "v4": ("x", "y", "z", "w")}


@dataclass(frozen=True, slots=True)
class RegisterDecl:
    """``.reg .b32 %r<5>;`` (``count=5``) or ``.reg .pred p, q;`` (``names``).

    A vector declaration (``.reg .v4 .u16 v;``, ``vector="v4"``) declares one scalar register
    per element, named ``v.x``, ``v.y``, ``v.z``, ``v.w``: the IR has no vector registers, and
    a whole-vector operand is a :class:`VectorOperand` of those scalars.
    """

    type: str
    names: tuple[str, ...]
    count: int | None = None
    vector: str | None = None
    pos: SourcePos | None = field(default=None, compare=False, repr=False)

    def iter_base_names(self) -> tuple[str, ...]:
        """The names as declared, with ``%r<3>`` expanded to ``%r0, %r1, %r2``."""
        if self.count is None:
            return self.names
        return tuple(f"{self.names[0]}{k}" for k in range(self.count))

    def iter_register_names(self) -> tuple[str, ...]:
        """Every scalar register declared: ranges expanded, vectors as their elements."""
        names = self.iter_base_names()
        if self.vector is None:
            return names
        elements = VECTOR_ELEMENTS.get(self.vector, ())
        return tuple(f"{name}.{e}" for name in names for e in elements)


@dataclass(frozen=True, slots=True)
class VariableDecl:
    """A variable in a state space: ``.global``, ``.const``, ``.shared``, ``.local``, ``.param``.

    ``array`` holds the dimensions (``None`` for ``[]`` with no size), ``initializer`` the
    flattened initial values (numbers, symbols or expressions), and ``attributes`` the other
    directives in order (``.extern``, ``.visible``, ``.weak``, ``.ptr``, ...).
    """

    space: str
    name: str
    type: str
    align: int | None = None
    array: tuple[int | None, ...] = ()
    initializer: tuple[Operand, ...] | None = None
    attributes: tuple[str, ...] = ()
    vector: str | None = None
    pos: SourcePos | None = field(default=None, compare=False, repr=False)

    @property
    def element_size(self) -> int:
        """Bytes per element of the declared type (vectors included)."""
        size = type_size(self.type)
        if self.vector:
            size *= int(self.vector[1:])
        return size

    @property
    def size(self) -> int | None:
        """Total size in bytes, or ``None`` when an array dimension is open (``[]``)."""
        total = self.element_size
        for dim in self.array:
            if dim is None:
                return None
            total *= dim
        return total


@dataclass(frozen=True, slots=True)
class Pragma:
    """``.pragma "nounroll";`` and other pragmas, as their string arguments."""

    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CallPrototype:
    """``proto: .callprototype (.param .b32 _) _ (.param .b64 _);`` for indirect calls."""

    name: str
    return_param: Param | None
    params: tuple[Param, ...]


@dataclass(frozen=True, slots=True)
class BranchTargets:
    """``targets: .branchtargets L0, L1, L2;``, the label list of a ``brx.idx``."""

    name: str
    labels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CallTargets:
    """``Ftgt: .calltargets f, g;``, the functions an indirect ``call`` may reach."""

    name: str
    functions: tuple[str, ...]


Statement = (
    Instruction
    | Label
    | ScopeOpen
    | ScopeClose
    | RegisterDecl
    | VariableDecl
    | Pragma
    | CallPrototype
    | BranchTargets
    | CallTargets
)


# --------------------------------------------------------------------------- functions


@dataclass(frozen=True, slots=True)
class Param:
    """A kernel or function parameter, with its byte offset in the parameter buffer."""

    name: str
    type: str
    offset: int
    align: int | None = None
    array: tuple[int | None, ...] = ()
    attributes: tuple[str, ...] = ()
    space: str = "param"
    vector: str | None = None

    @property
    def size(self) -> int:
        """Size in bytes (arrays and vectors included)."""
        size = type_size(self.type)
        if self.vector:
            size *= int(self.vector[1:])
        for dim in self.array:
            size *= dim or 0
        return size

    @property
    def alignment(self) -> int:
        """The effective alignment: ``.align`` when given, else the element size."""
        return self.align or max(1, type_size(self.type))


@dataclass(frozen=True, slots=True)
class BasicBlock:
    """A maximal straight-line run of instructions.

    ``labels`` are the labels that name the block's first instruction; ``name`` is the first
    of them, or a synthetic ``$bb<k>`` for blocks entered only by fall-through.
    """

    index: int
    name: str
    labels: tuple[str, ...]
    instructions: tuple[Instruction, ...]

    @property
    def first(self) -> Instruction | None:
        return self.instructions[0] if self.instructions else None

    @property
    def last(self) -> Instruction | None:
        return self.instructions[-1] if self.instructions else None


@dataclass(frozen=True)
class Function:
    """A ``.entry`` (kernel) or ``.func`` (device function).

    ``body`` is ``None`` for a declaration without a body (``.extern .func f(...);``).
    ``directives`` are the performance directives in order, e.g. ``(".maxntid", (256, 1, 1))``.
    """

    name: str
    kind: str
    params: tuple[Param, ...] = ()
    return_params: tuple[Param, ...] = ()
    attributes: tuple[str, ...] = ()
    directives: tuple[tuple[str, tuple[int, ...]], ...] = ()
    body: tuple[Statement, ...] | None = None
    noreturn: bool = False
    pos: SourcePos | None = field(default=None, compare=False, repr=False)

    @property
    def is_kernel(self) -> bool:
        return self.kind == "entry"

    @cached_property
    def instructions(self) -> tuple[Instruction, ...]:
        """Every instruction of the body in order; ``instructions[k].index == k``."""
        if self.body is None:
            return ()
        return tuple(s for s in self.body if type(s) is Instruction)

    @cached_property
    def blocks(self) -> tuple[BasicBlock, ...]:
        """The basic blocks, in source order: a label starts a block, a terminator ends one."""
        return _split_blocks(self.body or ())

    @cached_property
    def register_decls(self) -> tuple[RegisterDecl, ...]:
        return tuple(s for s in self.body or () if type(s) is RegisterDecl)

    @cached_property
    def local_variables(self) -> tuple[VariableDecl, ...]:
        """Variables declared in the body (``.local``, ``.shared``, call-scope ``.param``)."""
        return tuple(s for s in self.body or () if type(s) is VariableDecl)

    @cached_property
    def register_types(self) -> dict[str, str]:
        """Declared type of every register name (``%r<3>`` expanded, vector registers as
        their elements, ``.reg`` parameters included)."""
        types: dict[str, str] = {}
        for param in self.return_params + self.params:
            if param.space == "reg":
                if param.vector:
                    for e in VECTOR_ELEMENTS.get(param.vector, ()):
                        types[f"{param.name}.{e}"] = param.type
                else:
                    types[param.name] = param.type
        for decl in self.register_decls:
            for name in decl.iter_register_names():
                types[name] = decl.type
        return types

    def get_param(self, name: str) -> Param | None:
        for param in self.params:
            if param.name == name:
                return param
        return None

    @property
    def param_size(self) -> int:
        """Size in bytes of the parameter buffer (end of the last parameter)."""
        if not self.params:
            return 0
        last = self.params[-1]
        return last.offset + last.size

    def __hash__(self) -> int:
        return hash((self.name, self.kind, self.params))


@dataclass(frozen=True, slots=True)
class FileDirective:
    """``.file 1 "/path/k.cu"`` with its optional timestamp and size."""

    index: int
    path: str
    timestamp: int | None = None
    size: int | None = None


@dataclass(frozen=True, slots=True)
class SectionDirective:
    """A ``.section`` block (debug sections): its name and the data lines as (type, values)."""

    name: str
    entries: tuple[tuple[str, tuple[Operand, ...]], ...]


@dataclass(frozen=True, slots=True)
class UnknownDirective:
    """A module-scope directive kernelcheck does not know, kept as its tokens."""

    name: str
    arguments: tuple[str, ...]


ModuleItem = (
    Function
    | VariableDecl
    | FileDirective
    | SectionDirective
    | Pragma
    | UnknownDirective
)


@dataclass(frozen=True)
class Module:
    """A PTX module (or the functions of one SASS image): header and items in source order."""

    version: str | None = None
    target: tuple[str, ...] = ()
    address_size: int | None = None
    items: tuple[ModuleItem, ...] = ()
    filename: str | None = field(default=None, compare=False)

    @cached_property
    def functions(self) -> tuple[Function, ...]:
        return tuple(i for i in self.items if type(i) is Function)

    @cached_property
    def kernels(self) -> tuple[Function, ...]:
        """The ``.entry`` functions that have a body."""
        return tuple(f for f in self.functions if f.is_kernel and f.body is not None)

    @cached_property
    def variables(self) -> tuple[VariableDecl, ...]:
        """Module-scope variables (``.global``, ``.const``, ``.shared``)."""
        return tuple(i for i in self.items if type(i) is VariableDecl)

    @cached_property
    def files(self) -> dict[int, str]:
        return {i.index: i.path for i in self.items if type(i) is FileDirective}

    @property
    def arch(self) -> str | None:
        """The ``sm_XX`` target, if the module names one."""
        for entry in self.target:
            if entry.startswith(("sm_", "compute_")):
                return entry
        return None

    def num_functions(self) -> int:
        return len(self.functions)

    def get_function(self, name: str) -> Function:
        """The function (kernel or device function) with a body named ``name``.

        A declaration without a body is returned only when no definition exists.
        Raises ``KeyError`` when there is none.
        """
        found = None
        for function in self.functions:
            if function.name == name:
                if function.body is not None:
                    return function
                found = function
        if found is None:
            raise KeyError(name)
        return found

    def iter_functions(self):
        return iter(self.functions)

    def __hash__(self) -> int:
        return hash((self.version, self.target, self.address_size, len(self.items)))


# --------------------------------------------------------------------------- helpers

_TYPE_SIZES = {
    "pred": 1,
    "b8": 1, "s8": 1, "u8": 1,
    "b16": 2, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "e4m3": 1, "e5m2": 1,
    "e4m3x2": 2, "e5m2x2": 2, "e2m3x2": 2, "e3m2x2": 2, "e2m1x2": 1, "ue8m0x2": 2,
    "b32": 4, "s32": 4, "u32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
    "b64": 8, "s64": 8, "u64": 8, "f64": 8,
    "b128": 16,
    "texref": 8, "samplerref": 8, "surfref": 8,
}


def type_size(ptx_type: str) -> int:
    """Size in bytes of a PTX fundamental type name (``"u32"`` or ``".u32"``); 0 if unknown."""
    return _TYPE_SIZES.get(ptx_type.lstrip("."), 0)


def _split_blocks(body: tuple[Statement, ...]) -> tuple[BasicBlock, ...]:
    blocks: list[BasicBlock] = []
    labels: list[str] = []
    current: list[Instruction] = []

    def close() -> None:
        if not current and not labels:
            return
        index = len(blocks)
        name = labels[0] if labels else f"$bb{index}"
        blocks.append(BasicBlock(index, name, tuple(labels), tuple(current)))
        labels.clear()
        current.clear()

    for statement in body:
        kind = type(statement)
        if kind is Label:
            if current:
                close()
            labels.append(statement.name)
        elif kind is Instruction:
            current.append(statement)
            if statement.opcode in TERMINATOR_OPCODES:
                close()
    close()
    return tuple(blocks)
