"""Metamorphic transforms of PTX: rewrites that keep the meaning of every kernel.

A verdict of the analysis, and the memory an emulated run leaves, must not change when a
kernel is rewritten in a way that keeps its meaning. Each transform takes PTX text and gives
PTX text (through the IR and :mod:`kernelcheck.ptx.printer`), so the rewritten kernel goes
through the whole front end again, as a user's file would:

``rename``
    Every register of every function gets another name, drawn at random: ``%r5`` may
    become the bare ``q17`` and a bare ``p`` the ``%q3`` (PTX ISA §4.4: both are
    identifiers). Parameterized declarations (``%r<9>``) become name lists.
``blocks``
    Runs of instructions inside one basic block are wrapped in ``{ }`` blocks that declare
    registers shadowing names of the enclosing function (§5.4, §11.1.1 scoping): registers
    the run defines before any use and that are dead after it (their inner copies then
    carry every value the run needs), decoy registers the run never names, and a decoy
    label that shadows an outer label no branch of the run targets. Two rounds, so blocks
    nest.
``outline``
    Straight-line runs of a kernel (arithmetic and global memory accesses, no branch,
    barrier, call, parameter or symbol operand, no predicate or carry flowing in or out)
    move into new ``.func`` functions called with the ``.param`` ABI nvcc uses (§7):
    the registers live into the run are passed as parameters, those it defines and that
    are live after it come back in one byte-array return parameter.

The liveness of :mod:`kernelcheck.ir.dataflow` decides which registers may be shadowed or
must cross a call. The soundness harness (:func:`kernelcheck.emu.soundness.check_metamorphic`,
``bench/soundness.py --metamorphic``) compares kernel classes, instance verdicts and
emulated memory before and after each transform.
"""

from __future__ import annotations

import random
from dataclasses import replace

from kernelcheck.ir.cfg import instruction_blocks
from kernelcheck.ir.dataflow import liveness
from kernelcheck.ir.nodes import (
    Address,
    BracketList,
    Function,
    Guard,
    Instruction,
    Label,
    Module,
    NegatedPredicate,
    Param,
    ParenList,
    PredicatePair,
    Register,
    RegisterDecl,
    ScopeClose,
    ScopeOpen,
    Symbol,
    VariableDecl,
    VectorOperand,
    type_size,
)
from kernelcheck.ir.operands import CARRY_FLAG, defs, memory_spaces, uses
from kernelcheck.ptx.parser import parse_ptx
from kernelcheck.ptx.printer import print_ptx

__all__ = ["TRANSFORMS", "transform_module", "transform_ptx", "rename_registers",
           "wrap_in_blocks", "outline_spans"]


def transform_ptx(text: str, name: str, seed: int = 0, filename: str | None = None) -> str:
    """The PTX text of ``text`` rewritten by the transform ``name`` (see :data:`TRANSFORMS`).

    Examples
    --------
    >>> src = (".version 8.0\\n.target sm_80\\n.address_size 64\\n.visible .entry k("
    ...        ".param .u64 p) { .reg .b64 %rd<3>; ld.param.u64 %rd1, [p];"
    ...        " cvta.to.global.u64 %rd2, %rd1; st.global.u32 [%rd2], 7; ret; }")
    >>> "%rd1" in transform_ptx(src, "rename", seed=1)
    False
    """
    return print_ptx(transform_module(parse_ptx(text, filename), name, seed))


def transform_module(module: Module, name: str, seed: int = 0) -> Module:
    """``module`` rewritten by the transform ``name``, printed and parsed again."""
    try:
        transform = TRANSFORMS[name]
    except KeyError:
        raise ValueError(f"no transform {name!r} (known: {', '.join(TRANSFORMS)})") from None
    rewritten = transform(module, random.Random(seed))
    return parse_ptx(print_ptx(rewritten), module.filename)


# ---------------------------------------------------------------- operand rewriting


def _map_operand(operand, rename):
    """``operand`` with every register name passed through ``rename``."""
    kind = type(operand)
    if kind is Register:
        return Register(rename(operand.name))
    if kind is Address and type(operand.base) is Register:
        return Address(Register(rename(operand.base.name)), operand.offset)
    if kind is VectorOperand or kind is ParenList or kind is BracketList:
        return kind(tuple(_map_operand(e, rename) for e in operand.elements))
    if kind is NegatedPredicate:
        return NegatedPredicate(Register(rename(operand.register.name)))
    if kind is PredicatePair:
        return PredicatePair(_map_operand(operand.first, rename),
                             _map_operand(operand.second, rename))
    return operand


def _map_instruction(instr: Instruction, rename) -> Instruction:
    guard = instr.guard
    if guard is not None:
        guard = Guard(rename(guard.register), guard.negated)
    operands = tuple(_map_operand(o, rename) for o in instr.operands)
    return Instruction(instr.opcode, instr.modifiers, operands, guard, instr.loc, instr.index,
                       instr.known, instr.pos)


def _vector_bases(function: Function) -> dict[str, tuple[str, str]]:
    """Vector register base name -> (type, vector width) of its declaration."""
    bases = {}
    for decl in function.register_decls:
        if decl.vector:
            for name in decl.iter_base_names():
                bases[name] = (decl.type, decl.vector)
    for param in function.params + function.return_params:
        if param.space == "reg" and param.vector:
            bases[param.name] = (param.type, param.vector)
    return bases


def _module_names(module: Module) -> set[str]:
    names = {f.name for f in module.functions} | {v.name for v in module.variables}
    for function in module.functions:
        names |= {p.name for p in function.params + function.return_params}
        for statement in function.body or ():
            if type(statement) in (Label, VariableDecl):
                names.add(statement.name)
            elif type(statement) is RegisterDecl:
                names.update(statement.iter_base_names())
    return names


# ---------------------------------------------------------------- rename


def rename_registers(module: Module, rng: random.Random) -> Module:
    """Every register of every function renamed at random (``%``-names and bare names
    swapped freely); ranges become name lists."""
    taken = _module_names(module)
    items = []
    for item in module.items:
        if type(item) is not Function or item.body is None:
            items.append(item)
            continue
        items.append(_rename_function(item, rng, taken))
    return replace(module, items=tuple(items))


def _rename_function(function: Function, rng: random.Random, taken: set[str]) -> Function:
    bases = []
    for decl in function.register_decls:
        bases.extend(decl.iter_base_names())
    reg_params = [p.name for p in function.params + function.return_params if p.space == "reg"]
    bases.extend(reg_params)
    fresh = []
    k = 0
    while len(fresh) < len(bases):
        k += 1
        candidate = rng.choice(("%q", "q", "%v_", "r$")) + str(k)
        if candidate not in taken:
            fresh.append(candidate)
    rng.shuffle(fresh)
    mapping = dict(zip(bases, fresh, strict=True))

    def rename(name: str) -> str:
        if name in mapping:
            return mapping[name]
        base, dot, element = name.rpartition(".")
        if dot and base in mapping:
            return f"{mapping[base]}.{element}"
        return name

    body = []
    for statement in function.body:
        kind = type(statement)
        if kind is RegisterDecl:
            names = tuple(mapping[n] for n in statement.iter_base_names())
            body.append(RegisterDecl(statement.type, names, None, statement.vector))
        elif kind is Instruction:
            body.append(_map_instruction(statement, rename))
        else:
            body.append(statement)
    params = tuple(replace(p, name=mapping[p.name]) if p.space == "reg" else p
                   for p in function.params)
    returns = tuple(replace(p, name=mapping[p.name]) if p.space == "reg" else p
                    for p in function.return_params)
    return replace(function, body=tuple(body), params=params, return_params=returns)


# ---------------------------------------------------------------- blocks


def wrap_in_blocks(module: Module, rng: random.Random) -> Module:
    """Runs of instructions wrapped in ``{ }`` blocks with shadowing declarations, twice."""
    for _ in range(2):
        items = []
        for item in module.items:
            if type(item) is Function and item.body is not None:
                item = _wrap_function(item, rng)
            items.append(item)
        # Parse again between rounds: the second round sees the first round's renames.
        module = parse_ptx(print_ptx(replace(module, items=tuple(items))), module.filename)
    return module


def _runs(function: Function) -> list[tuple[int, int]]:
    """Maximal ``[start, end)`` ranges of the body holding only instructions of one block."""
    owner = instruction_blocks(function)
    runs = []
    start = None
    block = None
    for k, statement in enumerate(function.body):
        if type(statement) is Instruction and start is not None and owner[
                statement.index] == block:
            continue
        if start is not None:
            runs.append((start, k))
            start = None
        if type(statement) is Instruction:
            start, block = k, owner[statement.index]
    if start is not None:
        runs.append((start, len(function.body)))
    return runs


def _live_after(function: Function, live, owner, last: int) -> frozenset[str]:
    following = last + 1
    if following < len(function.instructions) and owner.get(following) == owner[last]:
        return live.live_at(following)
    return live.block_out(owner[last])


def _wrap_function(function: Function, rng: random.Random) -> Function:
    runs = _runs(function)
    if not runs:
        return function
    live = liveness(function)
    owner = instruction_blocks(function)
    types = function.register_types
    scalar_names = sorted(n for n in types if "." not in n)
    labels = sorted({s.name for s in function.body if type(s) is Label})
    wraps: dict[int, tuple[int, list]] = {}
    for start, end in runs:
        if rng.random() < 0.4:
            continue
        a = rng.randrange(start, end)
        b = rng.randrange(a, end) + 1
        span = function.body[a:b]
        first, last = span[0].index, span[-1].index
        named = set()
        targets = set()
        for instr in span:
            named.update(defs(instr))
            named.update(uses(instr))
            targets.update(o.name for o in instr.operands if type(o) is Symbol)
        outside = live.live_at(first) | _live_after(function, live, owner, last)
        shadows = sorted(n for n in named if n in types and "." not in n and n not in outside)
        chosen = [n for n in shadows if rng.random() < 0.7]
        decoys = [n for n in rng.sample(scalar_names, min(2, len(scalar_names)))
                  if n not in named]
        declarations: list = [RegisterDecl(types[n], (n,)) for n in chosen + decoys]
        free_labels = [n for n in labels if n not in targets]
        if free_labels and rng.random() < 0.5:
            declarations.append(Label(rng.choice(free_labels)))
        wraps[a] = (b, declarations)
    body = []
    k = 0
    statements = function.body
    while k < len(statements):
        if k in wraps:
            end, declarations = wraps[k]
            body.append(ScopeOpen())
            body.extend(declarations)
            body.extend(statements[k:end])
            body.append(ScopeClose())
            k = end
        else:
            body.append(statements[k])
            k += 1
    return replace(function, body=tuple(body))


# ---------------------------------------------------------------- outline

# Opcodes that may move into an outlined function: arithmetic, logic, moves, conversions,
# comparisons into registers, and global memory accesses.
_OUTLINE_OPCODES = frozenset({
    "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg", "min",
    "max", "popc", "clz", "bfind", "brev", "bfe", "bfi", "and", "or", "xor", "not", "cnot",
    "shl", "shr", "shf", "lop3", "prmt", "mov", "cvt", "selp", "setp", "fma", "rcp", "sqrt",
    "rsqrt", "sin", "cos", "lg2", "ex2", "copysign", "testp", "ld", "st", "atom", "red",
    "cvta",
})


def outline_spans(module: Module, rng: random.Random) -> Module:
    """Straight-line runs of every kernel moved into ``.func`` functions (see the module
    docstring); the new functions are placed before the kernel that calls them."""
    items = []
    taken = _module_names(module)
    for item in module.items:
        if type(item) is Function and item.body is not None and item.is_kernel:
            kernel, functions = _outline_kernel(item, rng, taken)
            items.extend(functions)
            items.append(kernel)
        else:
            items.append(item)
    return replace(module, items=tuple(items))


def _outlinable(instr: Instruction, types: dict[str, str]) -> bool:
    if instr.opcode not in _OUTLINE_OPCODES or not instr.known:
        return False
    if instr.opcode == "cvta" and "to" not in instr.modifiers:
        return False
    if any(m.startswith(("shared", "local", "param", "const")) for m in instr.modifiers) or (
            "cc" in instr.modifiers or instr.opcode in ("addc", "subc", "madc")):
        return False
    spaces = memory_spaces(instr)
    if spaces and any(s != "global" for s in spaces):
        return False
    for operand in instr.operands:
        if type(operand) is Symbol or type(operand).__name__ == "Expression":
            return False
        if type(operand) is Address and type(operand.base) is not Register:
            return False
    names = set(defs(instr)) | set(uses(instr))
    return all(n in types and type_size(types[n]) in (2, 4, 8) or (
        n in types and types[n] == "pred") for n in names)


def _outline_kernel(kernel: Function, rng: random.Random, taken: set[str]):
    types = kernel.register_types
    live = liveness(kernel)
    owner = instruction_blocks(kernel)
    vectors = _vector_bases(kernel)
    calls: dict[int, tuple[int, list]] = {}
    functions = []
    for start, end in _runs(kernel):
        statements = kernel.body
        # The longest stretch of outlinable instructions in the run, then a random part.
        good = [k for k in range(start, end) if _outlinable(statements[k], types)]
        if not good or rng.random() < 0.3:
            continue
        a = rng.choice(good)
        b = a
        while b < end and _outlinable(statements[b], types):
            b += 1
        b = rng.randrange(a, b) + 1
        span = list(statements[a:b])
        first, last = span[0].index, span[-1].index
        named: set[str] = set()
        for instr in span:
            named.update(defs(instr))
            named.update(uses(instr))
            if instr.guard is not None:
                named.add(instr.guard.register)
        inputs = sorted(n for n in named if n in live.live_at(first))
        after = _live_after(kernel, live, owner, last)
        defined = set()
        for instr in span:
            defined.update(defs(instr))
        outputs = sorted(n for n in defined if n in after)
        crossing = inputs + outputs
        if any(n == CARRY_FLAG or types.get(n) == "pred" for n in crossing):
            continue
        k = len(functions)
        name = _fresh(f"{kernel.name}$outlined{k}", taken)
        functions.append(_callee(name, span, named, inputs, outputs, types, vectors))
        calls[a] = (b, _call_block(name, inputs, outputs, types, span[0]))
    if not calls:
        return kernel, []
    body = []
    k = 0
    while k < len(kernel.body):
        if k in calls:
            end, replacement = calls[k]
            body.extend(replacement)
            k = end
        else:
            body.append(kernel.body[k])
            k += 1
    return replace(kernel, body=tuple(body)), functions


def _fresh(name: str, taken: set[str]) -> str:
    candidate = name
    k = 0
    while candidate in taken:
        k += 1
        candidate = f"{name}_{k}"
    taken.add(candidate)
    return candidate


def _layout(names: list[str], types: dict[str, str]) -> tuple[list[int], int]:
    """Offsets of the values in the return array (each at its own size) and its size."""
    offsets = []
    offset = 0
    for n in names:
        size = type_size(types[n])
        offset = (offset + size - 1) // size * size
        offsets.append(offset)
        offset += size
    return offsets, max(8, (offset + 7) // 8 * 8)


def _bits(name: str, types: dict[str, str]) -> str:
    return f"b{8 * type_size(types[name])}"


def _callee(name, span, named, inputs, outputs, types, vectors) -> Function:
    params = []
    offset = 0
    for k, reg in enumerate(inputs):
        size = type_size(types[reg])
        offset = (offset + size - 1) // size * size
        params.append(Param(f"{name}_param_{k}", _bits(reg, types), offset))
        offset += size
    returns: tuple[Param, ...] = ()
    offsets, size = _layout(outputs, types)
    if outputs:
        returns = (Param(f"{name}_retval0", "b8", 0, 8, (size,)),)
    body: list = []
    scalars: dict[str, list[str]] = {}
    declared_vectors = set()
    for reg in sorted(named):
        base, dot, _ = reg.rpartition(".")
        if dot and base in vectors:
            if base not in declared_vectors:
                declared_vectors.add(base)
                vtype, width = vectors[base]
                body.append(RegisterDecl(vtype, (base,), None, width))
        else:
            scalars.setdefault(types[reg], []).append(reg)
    for rtype, regs in sorted(scalars.items()):
        body.append(RegisterDecl(rtype, tuple(regs)))
    for reg, param in zip(inputs, params, strict=True):
        body.append(Instruction("ld", ("param", param.type), (Register(reg),
                                                              Address(Symbol(param.name)))))
    body.extend(span)
    for reg, offset in zip(outputs, offsets, strict=True):
        body.append(Instruction("st", ("param", _bits(reg, types)),
                                (Address(Symbol(returns[0].name), offset), Register(reg))))
    body.append(Instruction("ret"))
    return Function(name, "func", tuple(params), returns, (), (), tuple(body))


def _call_block(name, inputs, outputs, types, at: Instruction) -> list:
    statements: list = [ScopeOpen()]
    args = []
    for k, reg in enumerate(inputs):
        bits = _bits(reg, types)
        statements.append(VariableDecl("param", f"param{k}", bits))
        statements.append(Instruction("st", ("param", bits),
                                      (Address(Symbol(f"param{k}")), Register(reg)),
                                      loc=at.loc))
        args.append(Symbol(f"param{k}"))
    offsets, size = _layout(outputs, types)
    operands: list = []
    if outputs:
        statements.append(VariableDecl("param", "retval0", "b8", 8, (size,)))
        operands.append(ParenList((Symbol("retval0"),)))
    operands.append(Symbol(name))
    operands.append(ParenList(tuple(args)))
    statements.append(Instruction("call", ("uni",), tuple(operands), loc=at.loc))
    for reg, offset in zip(outputs, offsets, strict=True):
        statements.append(Instruction("ld", ("param", _bits(reg, types)),
                                      (Register(reg), Address(Symbol("retval0"), offset)),
                                      loc=at.loc))
    statements.append(ScopeClose())
    return statements


#: The transforms by name: ``transform(module, rng) -> Module``.
TRANSFORMS = {"rename": rename_registers, "blocks": wrap_in_blocks, "outline": outline_spans}
