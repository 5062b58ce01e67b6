"""Compile PTX functions of the Kernel IR into per-instruction closures, once per module.

Each instruction becomes an :class:`Op`: its kind (plain, branch, call, exit, ...), a closure
``fn(st, fr, mask)`` that executes it for the lanes in ``mask`` (``None`` means every lane),
the decoded guard, and its destination registers (for fault injection). Types, modifiers and
operand kinds are decoded here, so executing an instruction is one Python call plus numpy work
over the lanes.

``st`` is the launch batch state (:class:`kernelcheck.emu.executor.Batch`), ``fr`` the frame
of the function being run (:class:`kernelcheck.emu.executor.Frame`: its register list and the
per-lane ``.param`` areas of a device function).

Device-side assertions: ``assert`` compiles to ``call __assertfail, (message, file, line,
function, char_size)`` on an ``.extern .func`` without body, reached only when the assertion
fails. On hardware that call aborts the launch (``cudaErrorAssert``, a sticky error), so a call
of :data:`ASSERT_FAIL` the module gives no body is compiled as a ``TRAP``-kind op whose ``fn``
(:func:`assertion_details`) decodes the strings the call passes, for the error the executor
raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kernelcheck.emu.dispatch import OPS, check, declare, form
from kernelcheck.emu.values import (
    NP_TYPE,
    UINT_OF_SIZE,
    from_type,
    immediate_value,
    storage_dtype,
    to_type,
)
from kernelcheck.errors import UnsupportedFeature
from kernelcheck.ir.nodes import (
    Address,
    Expression,
    Function,
    Immediate,
    Instruction,
    Label,
    NegatedPredicate,
    PredicatePair,
    Register,
    ScopeClose,
    ScopeOpen,
    Sink,
    SpecialRegister,
    Symbol,
    VariableDecl,
    VectorOperand,
    type_size,
)

__all__ = ["Op", "CompiledFunction", "CompileContext", "PLAIN", "BRANCH", "EXIT", "RET",
           "CALL", "BRX", "TRAP", "BARRIER", "OPS", "ASSERT_FAIL", "INTERNAL_ERRORS", "where",
           "function_where", "instruction_type", "assertion_details"]

PLAIN, BRANCH, EXIT, RET, CALL, BRX, TRAP, BARRIER = range(8)

#: The CUDA runtime function a failed device-side ``assert`` calls.
ASSERT_FAIL = "__assertfail"
#: Longest assertion string decoded (bytes).
_STRING_LIMIT = 512

# Control flow and barriers are compiled here, not by a factory (PTX ISA 9.7.12
# "Control Flow Instructions", 9.7.13.1 bar/barrier).
declare("bra", form("", "uni"))
declare("brx", form("", "idx uni", required=["idx"]))
declare("exit", form(""))
declare("ret", form("", "uni"))
declare("trap", form(""))
declare("call", form("", "uni"))
declare("bar", form("", "sync cta aligned"), form("", "warp sync", required=["warp"]))
declare("barrier", form("", "sync cta aligned"))

_TYPES = frozenset(NP_TYPE)


#: Python errors an op factory or closure raises on IR it cannot run (operands of a shape it
#: does not take, a value it cannot represent): each becomes UnsupportedFeature at the
#: instruction, never a crash.
INTERNAL_ERRORS = (KeyError, IndexError, ValueError, TypeError, ArithmeticError, AttributeError,
                   StopIteration, NotImplementedError)


def function_where(function: Function) -> str:
    """Human position of a function: its name and, when known, its PTX line."""
    if function.pos is not None:
        return f"{function.name} (PTX line {function.pos.line})"
    return function.name


def where(instr: Instruction, function: Function) -> str:
    """Human position of an instruction: kernel, index, source line and text."""
    text = f"{function.name}: instruction {instr.index} '{instr.full_opcode}'"
    if instr.pos is not None:
        text += f" (PTX line {instr.pos.line})"
    if instr.loc is not None:
        text += f" (source line {instr.loc.line})"
    return text


def instruction_type(instr: Instruction) -> str | None:
    """The last modifier that is a PTX type (``ld.global.v4.f32`` -> ``f32``)."""
    for mod in reversed(instr.modifiers):
        if mod in _TYPES:
            return mod
    return None


@dataclass(slots=True)
class Op:
    """One compiled instruction."""

    kind: int
    fn: object
    instr: Instruction
    guard: int = -1
    guard_negated: bool = False
    target: int = -1
    targets: tuple[int, ...] = ()
    dests: tuple[tuple[int, str], ...] = ()
    callee: str = ""
    #: A name per argument (return value); a tuple of element registers for a vector one.
    call_args: tuple = ()
    call_rets: tuple = ()


@dataclass(slots=True)
class CompiledFunction:
    """A function ready to run: ops, register layout, local and ``.param`` areas."""

    function: Function
    ops: list[Op]
    reg_index: dict[str, int]
    reg_storage: list[np.dtype]
    local_size: int
    param_sizes: dict[str, int] = field(default_factory=dict)
    taint: frozenset = frozenset()
    used_registers: frozenset = frozenset()


class CompileContext:
    """What the op factories need to decode an instruction of one function.

    ``symbols`` maps module and function variables to ``(space, address)``; ``kernel_params``
    maps kernel parameter names to offsets in the launch parameter buffer; ``frame_params``
    names the ``.param`` variables that live per lane in the frame (device function
    parameters and return values, call-scope parameters).
    """

    def __init__(self, function: Function, reg_index: dict[str, int],
                 reg_storage: list[np.dtype], symbols: dict[str, tuple[str, int]],
                 kernel_params: dict[str, int], frame_params: dict[str, int],
                 module) -> None:
        self.function = function
        self.reg_index = reg_index
        self.reg_storage = reg_storage
        self.symbols = symbols
        self.kernel_params = kernel_params
        self.frame_params = frame_params
        self.module = module
        self.instr: Instruction | None = None
        self.tainted: frozenset[str] = frozenset()
        self.used_registers: frozenset[str] = frozenset()

    # ------------------------------------------------------------------ errors
    def unsupported(self, what: str | None = None) -> UnsupportedFeature:
        instr = self.instr
        return UnsupportedFeature(what or f"instruction '{instr.full_opcode}'",
                                  where(instr, self.function))

    # ------------------------------------------------------------------ registers
    def reg(self, name: str) -> int:
        try:
            return self.reg_index[name]
        except KeyError:
            raise self.unsupported(f"undeclared register {name}") from None

    def src(self, operand, ptype: str):
        """A getter ``g(st, fr)`` returning the operand's value as ``ptype``."""
        kind = type(operand)
        if kind is Register:
            i = self.reg(operand.name)
            have = self.reg_storage[i]
            want = NP_TYPE[ptype]
            if have == want:
                return lambda st, fr: fr.regs[i]
            if have.itemsize == want.itemsize and want != np.bool_ and have != np.bool_:
                return lambda st, fr: fr.regs[i].view(want)
            return lambda st, fr: to_type(fr.regs[i], ptype)
        if kind is NegatedPredicate:
            i = self.reg(operand.register.name)
            return lambda st, fr: ~fr.regs[i]
        if kind is Immediate:
            value = immediate_value(operand.value, operand.kind, ptype)
            return lambda st, fr: value
        if kind is SpecialRegister:
            name = operand.name
            from kernelcheck.emu.executor import special_register_runs
            if not special_register_runs(name):
                raise self.unsupported(f"special register {name} in "
                                       f"'{self.instr.full_opcode}'")
            if name in ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo",
                        "%globaltimer_hi"):
                return lambda st, fr: to_type(st.clock(name), ptype)
            return lambda st, fr: to_type(st.special(name), ptype)
        if kind is Symbol or kind is Expression:
            name, offset = _symbol_offset(operand)
            space, addr = self.symbol(name)
            if space in ("param", "label"):
                # The address of a device function's parameter lives in the .param state
                # space (ISA 5.1.6), which the emulator does not address through registers.
                # A kernel parameter's address is its offset in the parameter buffer, which
                # ld.param through a register reads (memops).
                what = {"label": "label"}.get(space, "parameter")
                raise self.unsupported(f"the address of {what} {name} as a value")
            value = immediate_value(addr + offset, "int", ptype)
            return lambda st, fr: value
        if kind is Address and type(operand.base) is Symbol:
            # mov.u64 %rd, sym+8 written with brackets by some front ends.
            space, addr = self.symbol(operand.base.name)
            value = immediate_value(addr + operand.offset, "int", ptype)
            return lambda st, fr: value
        raise self.unsupported(f"operand {operand!r} of '{self.instr.full_opcode}'")

    def symbol(self, name: str) -> tuple[str, int]:
        if name in self.symbols:
            return self.symbols[name]
        raise self.unsupported(f"unknown symbol {name}")

    def dst(self, operand, ptype: str):
        """A setter ``s(st, fr, value, mask)`` writing a ``ptype`` value to the operand."""
        kind = type(operand)
        if kind is Sink:
            return lambda st, fr, value, mask: None
        if kind is PredicatePair:
            return self.dst(operand.first, ptype)
        if kind is not Register:
            raise self.unsupported(f"destination {operand!r} of '{self.instr.full_opcode}'")
        i = self.reg(operand.name)
        storage = self.reg_storage[i]

        def setter(st, fr, value, mask):
            v = from_type(value, ptype, storage, st.L)
            if mask is None:
                fr.regs[i] = v
            else:
                fr.regs[i] = np.where(mask, v, fr.regs[i])

        return setter

    def dest_regs(self, instr: Instruction) -> tuple[tuple[int, str], ...]:
        """Destination registers (index, name) of ``instr`` for fault injection."""
        if not instr.operands or instr.opcode in ("st", "red", "bra", "call", "bar", "ret",
                                                  "exit", "barrier", "prefetch", "trap"):
            return ()
        first = instr.operands[0]
        names = []
        if type(first) is Register:
            names = [first.name]
        elif type(first) is VectorOperand:
            names = [e.name for e in first.elements if type(e) is Register]
        elif type(first) is PredicatePair:
            names = [first.first.name]
        return tuple((self.reg_index[n], n) for n in names if n in self.reg_index)


def compile_function(function: Function, symbols: dict[str, tuple[str, int]],
                     module, local_base: int) -> CompiledFunction:
    """Compile ``function``; its ``.local`` variables are placed from ``local_base`` on."""
    # Registers: index 0 is the carry flag of add.cc/addc and kin.
    reg_index: dict[str, int] = {"%%carry": 0}
    reg_storage: list[np.dtype] = [np.dtype(np.uint32)]
    for name, rtype in function.register_types.items():
        if name not in reg_index:
            if rtype not in NP_TYPE:
                raise UnsupportedFeature(f"register {name} of type .{rtype}",
                                         function_where(function))
            reg_index[name] = len(reg_storage)
            reg_storage.append(storage_dtype(rtype))
    symbols = dict(symbols)
    frame_params: dict[str, int] = {}
    local_size = local_base
    labels: dict[str, int] = {}
    count = 0
    for statement in function.body or ():
        kind = type(statement)
        if kind is Label:
            labels[statement.name] = count
        elif kind is Instruction:
            count += 1
        elif kind is VariableDecl:
            size = statement.size or 0
            if statement.space == "local":
                align = statement.align or max(1, type_size(statement.type))
                local_size = (local_size + align - 1) // align * align
                symbols[statement.name] = ("local", local_size)
                local_size += size
            elif statement.space == "param":
                frame_params[statement.name] = max(frame_params.get(statement.name, 0), size)
                symbols[statement.name] = ("param", 0)
            elif statement.space == "shared" and statement.name not in symbols:
                raise UnsupportedFeature(f"function-scope .shared {statement.name} not placed",
                                         function.name)
        elif kind in (ScopeOpen, ScopeClose):
            continue
    kernel_params: dict[str, int] = {}
    if function.is_kernel:
        for p in function.params:
            kernel_params[p.name] = p.offset
            symbols[p.name] = ("kparam", p.offset)
    else:
        for p in function.params + function.return_params:
            if p.space == "reg":
                continue  # a register of the frame (register_types lists it)
            frame_params[p.name] = p.size
            symbols[p.name] = ("param", 0)
    for name, index in labels.items():
        symbols.setdefault(name, ("label", index))
    from kernelcheck.emu.taint import memory_tainted, used_registers
    cx = CompileContext(function, reg_index, reg_storage, symbols, kernel_params,
                        frame_params, module)
    cx.tainted = memory_tainted(function, module)
    cx.used_registers = used_registers(function)
    ops: list[Op] = []
    for instr in function.instructions:
        cx.instr = instr
        ops.append(_compile_instruction(instr, cx, labels))
    return CompiledFunction(function, ops, reg_index, reg_storage, local_size, frame_params,
                            cx.tainted, cx.used_registers)


def _symbol_offset(operand) -> tuple[str, int]:
    """``(name, offset)`` of a symbol or of ``sym+imm`` / ``sym-imm`` (ISA 6.4.1)."""
    if type(operand) is Symbol:
        return operand.name, 0
    text = operand.text
    for sign in ("+", "-"):
        name, _, number = text.rpartition(sign)
        if name and number.isdigit() and "(" not in name:
            return name, int(number) if sign == "+" else -int(number)
    raise UnsupportedFeature(f"operand expression {text!r}")


def _compile_instruction(instr: Instruction, cx: CompileContext, labels: dict[str, int]) -> Op:
    check(instr, where(instr, cx.function))
    try:
        return _compile_checked(instr, cx, labels)
    except INTERNAL_ERRORS as err:
        # Operands of a shape the op does not take (too few, a vector where a register
        # belongs, ...): the instruction is not run, never crashed on.
        raise cx.unsupported(f"instruction '{instr.full_opcode}' with operands "
                             f"{', '.join(map(str, instr.operands))} ({type(err).__name__}: "
                             f"{err})") from None


def _compile_checked(instr: Instruction, cx: CompileContext, labels: dict[str, int]) -> Op:
    guard = -1
    negated = False
    if instr.guard is not None:
        guard = cx.reg(instr.guard.register)
        negated = instr.guard.negated
        if cx.reg_storage[guard] != np.bool_:
            # "@{!}p": the guard is a predicate register (PTX ISA 9.3 "Predicated Execution")
            raise cx.unsupported(f"guard {instr.guard.register} of '{instr.full_opcode}' "
                                 f"is not a .pred register")
    op = instr.opcode
    if op == "bra":
        target = instr.operands[0]
        if type(target) is not Symbol or target.name not in labels:
            raise cx.unsupported(f"branch target {target!r}")
        return Op(BRANCH, None, instr, guard, negated, target=labels[target.name])
    if op == "brx":
        return _compile_brx(instr, cx, labels, guard, negated)
    if op == "exit":
        return Op(EXIT, None, instr, guard, negated)
    if op == "ret":
        return Op(RET, None, instr, guard, negated)
    if op == "trap":
        return Op(TRAP, None, instr, guard, negated)
    if op == "call":
        return _compile_call(instr, cx, guard, negated)
    if op == "cvta" and cx.module is not None and cx.module.address_size == 32 and any(
            m.startswith(("shared", "local", "param")) for m in instr.modifiers):
        # The emulator's generic windows of shared and local memory lie above 2**32.
        raise cx.unsupported("cvta of shared, local or param memory with 32-bit addresses")
    if op in ("bar", "barrier") and "red" not in instr.modifiers:
        # bar{.cta}.sync / barrier{.cta}.sync{.aligned} a{, b}; bar.warp.sync membermask:
        # the minimum-PC schedule runs a barrier only once every lane of the block (warp)
        # that will reach it is there (see kernelcheck.emu.executor), so it is a rendezvous
        # with nothing left to do.
        return Op(BARRIER, None, instr, guard, negated)
    factory = OPS.get(op)
    if factory is None:
        raise cx.unsupported()
    fn = _guarded(factory(instr, cx), instr, cx.function)
    return Op(PLAIN, fn, instr, guard, negated, dests=cx.dest_regs(instr))


def _guarded(fn, instr: Instruction, function: Function):
    """``fn`` turning an internal error while it runs (a value it cannot represent, a NaN
    converted to a format without NaN) into UnsupportedFeature at the instruction: the
    emulator never crashes and never writes a made-up value."""
    def run(st, fr, mask):
        try:
            return fn(st, fr, mask)
        except INTERNAL_ERRORS as err:
            raise UnsupportedFeature(f"instruction '{instr.full_opcode}' could not be run "
                                     f"({type(err).__name__}: {err})",
                                     where(instr, function)) from None
    return run


def _compile_brx(instr, cx, labels, guard, negated) -> Op:
    if "idx" not in instr.modifiers or len(instr.operands) != 2:
        raise cx.unsupported()
    table = instr.operands[1]
    names = None
    for statement in cx.function.body or ():
        if type(statement).__name__ == "BranchTargets" and type(table) is Symbol and \
                statement.name == table.name:
            names = statement.labels
    if names is None:
        raise cx.unsupported(f"brx.idx table {table!r}")
    get = cx.src(instr.operands[0], "u32")
    return Op(BRX, get, instr, guard, negated, targets=tuple(labels[n] for n in names))


def _compile_call(instr, cx, guard, negated) -> Op:
    operands = list(instr.operands)
    rets: tuple = ()
    ret_list = ()
    if operands and type(operands[0]).__name__ == "ParenList":
        ret_list = operands.pop(0).elements
    if not operands or type(operands[0]) is not Symbol:
        raise cx.unsupported("indirect call")
    callee = operands[0].name
    arg_list = ()
    if len(operands) > 2:
        raise cx.unsupported("call with a prototype (indirect call)")
    if len(operands) > 1:
        # A one-element list such as (5) may come from the front end as the expression.
        arg_list = operands[1].elements if type(operands[1]).__name__ == "ParenList" else (
            operands[1],)
    args = tuple(_call_operand(e, cx, "argument") for e in arg_list)
    rets = tuple(_call_operand(e, cx, "return value") for e in ret_list)
    target = _function(cx.module, callee)
    if target is not None:
        for role, formals, actuals, texts in (("argument", target.params, args, arg_list),
                                              ("return value", target.return_params, rets,
                                               ret_list)):
            for param, actual, element in zip(formals, actuals, texts, strict=False):
                _check_binding(cx, callee, role, param, actual, element)
    if callee == ASSERT_FAIL and not _has_body(cx.module, callee):
        return Op(TRAP, assertion_details(args), instr, guard, negated, callee=callee,
                  call_args=args)
    return Op(CALL, None, instr, guard, negated, callee=callee, call_args=args, call_rets=rets)


def _call_operand(element, cx, role: str):
    """The caller's side of one call argument or return value: the name of a call-scope
    ``.param`` variable or of a register (for a ``.reg`` parameter, ISA 5.1.6.4), or the
    names of the element registers of a vector register (``.reg .v2 .u32`` parameters: the
    IR's vector registers are their scalar elements, bound one by one)."""
    kind = type(element)
    if kind is Symbol or kind is Register:
        if element.name in cx.frame_params or element.name in cx.reg_index:
            return element.name
    elif kind is VectorOperand and element.elements and all(
            type(e) is Register and e.name in cx.reg_index for e in element.elements):
        return tuple(e.name for e in element.elements)
    from kernelcheck.ir.export import format_operand

    try:
        text = format_operand(element)
    except TypeError:
        text = repr(element)
    raise cx.unsupported(f"call {role} {text} is neither a call-scope .param nor a register")


def _check_binding(cx, callee: str, role: str, param, actual, element) -> None:
    """Reject a call operand whose shape does not fit the callee's parameter."""
    from kernelcheck.ir.export import format_operand
    from kernelcheck.ir.nodes import VECTOR_ELEMENTS

    text = format_operand(element)
    if param.space != "reg":
        if type(actual) is tuple or actual not in cx.frame_params:
            raise cx.unsupported(f"call {role} {text} of {callee} is not a call-scope .param "
                                 f"variable for .param {param.name}")
        return
    count = len(VECTOR_ELEMENTS.get(param.vector, ())) if param.vector else None
    if count is None and type(actual) is tuple:
        raise cx.unsupported(f"call {role} {text} of {callee} is a vector for the scalar "
                             f".reg parameter {param.name}")
    if count is not None and (type(actual) is not tuple or len(actual) != count):
        raise cx.unsupported(f"call {role} {text} of {callee} is not a vector of {count} "
                             f"registers for the .reg .{param.vector} parameter {param.name}")
    if type(actual) is not tuple and actual not in cx.reg_index:
        raise cx.unsupported(f"call {role} {text} of {callee} is not a register for the "
                             f".reg parameter {param.name}")


def _function(module, name: str):
    if module is None:
        return None
    return next((f for f in module.functions if f.name == name), None)


def _has_body(module, name: str) -> bool:
    return module is not None and any(f.name == name and f.body is not None
                                      for f in module.functions)


def assertion_details(args: tuple[str, ...]):
    """A decoder ``fn(st, fr, lane)`` of the arguments of a ``call __assertfail``.

    Parameters
    ----------
    args : tuple of str
        The call-scope ``.param`` variables passed (message, file, line, function,
        char size).

    Returns
    -------
    callable
        ``fn(st, fr, lane) -> (message, file, line, function)`` for one lane of the frame
        ``fr``; each is ``None`` when the call does not pass it or it cannot be read (a
        string pointer outside every allocation).
    """

    def decode(st, fr, lane: int):
        if len(args) < 4:
            return None, None, None, None
        raw = [bytes(fr.params[name][lane]) for name in args[:4]]
        message, file, function = (_c_string(st.mem, int.from_bytes(raw[k][:8], "little"))
                                   for k in (0, 1, 3))
        line = int.from_bytes(raw[2][:4], "little") if len(raw[2]) >= 4 else None
        return message, file, line, function

    return decode


def _c_string(memory, address: int) -> str | None:
    """The NUL-terminated string at a global (or generic global) ``address``, if readable."""
    alloc = memory.find(address)
    if alloc is None:
        return None
    start = address - alloc.base
    data = bytes(alloc.data[start:start + _STRING_LIMIT])
    return data.split(b"\0", 1)[0].decode("utf-8", errors="replace")


def uint_getter(cx: CompileContext, operand, size: int):
    """A getter of the operand's raw bits as an unsigned integer of ``size`` bytes."""
    return cx.src(operand, {1: "u8", 2: "u16", 4: "u32", 8: "u64"}[size])


_ = UINT_OF_SIZE  # re-exported helper width table used by the op modules
