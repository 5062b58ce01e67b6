"""Which registers of a function may hold a value that differs between runs of one instance,
and which are used.

The dynamic oracle needs two facts about an atomic instruction that cannot be seen from the
values alone: whether its result is used (an atomic whose old value flows on is a read of its
location), and whether its operand may differ when the instance runs again (an ``atom.exch``
of such a value is not idempotent in effect: a re-execution may store another value).

Which loads make a value differ between runs (the definition of an idempotent instance:
running it again from any partly executed state gives the same final global memory):

* a plain load of **global** memory (``ld.global``, ``ldu.global``, ``ld.global.nc``) does
  not: the oracle records it as a read, so if any write of the instance (plain or atomic)
  touches those bytes the instance is not idempotent anyway (its clobbered set is not
  empty); otherwise the bytes hold the same value in every run, and the value loaded is the
  same. Different threads exchanging different values into one address are caught by the
  oracle's own check of the values each address receives;
* a load of shared or local memory, of a generic address (it may reach shared memory), a
  texture or surface fetch, an asynchronous copy and the old value an atomic returns do:
  their contents are produced during the launch, in an order the hardware chooses;
* so do the special registers that are not launch coordinates (``%clock``,
  ``%globaltimer``, ``%smid``, ...).

A register is *tainted* if any definition of it is one of those, or reads a tainted
register; flow-insensitive, so it over-approximates. Over-approximation only makes the
oracle call more instances "not idempotent", never fewer, so it stays sound.
"""

from __future__ import annotations

from kernelcheck.ir.nodes import VECTOR_ELEMENTS, Function, SpecialRegister
from kernelcheck.ir.operands import defs, uses

__all__ = ["memory_tainted", "module_taint", "used_registers"]

_LOADS = frozenset({"ld", "ldu", "atom", "red", "ld.global", "tex", "tld4", "suld",
                    "cp.async", "ldmatrix"})


#: Special registers with one value per thread and launch (ISA §10).
_COORDINATES = frozenset({"%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpsize",
                          "%nwarpid", "%nsmid", "%gridid", "%lanemask_eq", "%lanemask_le",
                          "%lanemask_lt", "%lanemask_ge", "%lanemask_gt"})


def _reads_mutable_memory(instr, kernel: bool) -> bool:
    """Whether ``instr`` defines a value that may differ between runs (module notes)."""
    for operand in instr.operands[1:]:
        if type(operand) is SpecialRegister and operand.base not in _COORDINATES and \
                not operand.base.startswith("%envreg"):
            return True
    if instr.opcode not in _LOADS:
        return False
    if "const" in instr.modifiers:
        return False
    if instr.opcode in ("ld", "ldu") and "global" in instr.modifiers:
        return False  # a read the oracle records: see the module notes
    # A device function's parameters may carry anything its caller passed.
    return not ("param" in instr.modifiers and kernel)


def memory_tainted(function: Function, module=None) -> frozenset[str]:
    """Registers that may hold a value derived from a load of mutable memory.

    With ``module``, values are followed through calls (:func:`module_taint`): a device
    function's parameter is tainted only if some call passes it a tainted value, and a value
    a call returns only if the callee's return value is tainted. Without it, every parameter
    of a device function counts as tainted and every returned value as clean, as seen from
    the function alone.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import VECTOR_ELEMENTS, Function, SpecialRegister
    >>> memory_tainted(Function("f", "entry", body=()))
    frozenset()
    """
    if module is not None and function.body is not None:
        per_function = module_taint(module)
        if function.name in per_function:
            return per_function[function.name]
    tainted: set[str] = set()
    if not function.is_kernel:
        # .reg parameters carry whatever a caller passed (.param ones are read by ld.param).
        tainted.update(n for p in function.params if p.space == "reg" for n in _formals(p))
    flows: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for instr in function.instructions:
        d = defs(instr)
        if _reads_mutable_memory(instr, function.is_kernel):
            tainted.update(d)
        else:
            flows.append((d, uses(instr)))
    _close(tainted, flows)
    return frozenset(tainted)


def _close(tainted: set, flows: list) -> None:
    changed = True
    while changed:
        changed = False
        for d, u in flows:
            if any(name in tainted for name in u):
                for name in d:
                    if name not in tainted:
                        tainted.add(name)
                        changed = True


_MODULE_TAINT: dict[int, tuple[object, dict[str, frozenset[str]]]] = {}


def module_taint(module) -> dict[str, frozenset[str]]:
    """The tainted registers of every function of ``module``, followed through calls.

    One flow graph over ``(function, name)`` nodes: registers, and ``.param`` variables
    (a function's formal and return parameters, call-scope variables). ``st.param`` flows a
    register into a variable, ``ld.param`` a variable into a register; a call flows each
    argument into the callee's formal parameter and the callee's return parameter into the
    caller's variable (or register, for ``.reg`` parameters). Sources are loads of mutable
    memory, and the formal parameters of device functions no call in the module reaches
    (another module may call them with anything).
    """
    cached = _MODULE_TAINT.get(id(module))
    if cached is not None and cached[0] is module:
        return cached[1]
    functions = {f.name: f for f in module.functions if f.body is not None}
    tainted: set = set()
    flows: list = []
    called: set[str] = set()
    for f in functions.values():
        for instr in f.instructions:
            d = tuple((f.name, n) for n in defs(instr))
            if instr.opcode == "call":
                called.update(_call_flows(f, instr, functions, flows, tainted))
                continue
            if instr.opcode in ("ld", "ldu") and "param" in instr.modifiers:
                base = _param_symbol(instr.operands[1] if len(instr.operands) > 1 else None)
                if base is not None:
                    flows.append((d, ((f.name, "param:" + base),)))
                    continue
            if instr.opcode == "st" and "param" in instr.modifiers:
                base = _param_symbol(instr.operands[0] if instr.operands else None)
                if base is not None:
                    flows.append((((f.name, "param:" + base),),
                                  tuple((f.name, n) for n in uses(instr))))
                    continue
            if _reads_mutable_memory(instr, True):
                tainted.update(d)
            else:
                flows.append((d, tuple((f.name, n) for n in uses(instr))))
    for f in functions.values():
        if not f.is_kernel and f.name not in called:
            tainted.update((f.name, n) for p in f.params for n in _formals(p))
    _close(tainted, flows)
    result: dict[str, set[str]] = {name: set() for name in functions}
    for fname, name in tainted:
        if fname in result and not name.startswith("param:"):
            result[fname].add(name)
    frozen = {name: frozenset(names) for name, names in result.items()}
    if len(_MODULE_TAINT) > 64:
        _MODULE_TAINT.clear()
    _MODULE_TAINT[id(module)] = (module, frozen)
    return frozen


def _formals(param) -> list[str]:
    """The nodes of a formal parameter: a ``.reg`` parameter's register (a vector one's
    element registers, ``p.x``, ``p.y``), else its ``.param`` variable."""
    if param.space != "reg":
        return ["param:" + param.name]
    if param.vector:
        return [f"{param.name}.{e}" for e in VECTOR_ELEMENTS.get(param.vector, ())]
    return [param.name]


def _param_symbol(operand) -> str | None:
    from kernelcheck.ir.nodes import Address, Symbol

    if type(operand) is Address and type(operand.base) is Symbol:
        return operand.base.name
    return None


def _call_flows(f: Function, instr, functions: dict, flows: list, tainted: set) -> set[str]:
    """Flows of one ``call``: arguments into the callee, its return into the caller."""
    from kernelcheck.ir.nodes import ParenList, Register, Symbol, VectorOperand

    operands = list(instr.operands)
    rets = operands.pop(0).elements if operands and type(operands[0]) is ParenList else ()
    if not operands or type(operands[0]) is not Symbol:
        return set()
    callee = functions.get(operands[0].name)
    args = operands[1].elements if len(operands) > 1 and type(operands[1]) is ParenList else ()

    def nodes(operand) -> list:
        """The caller's nodes of one operand; a vector register's elements in order."""
        if type(operand) is Register:
            return [(f.name, operand.name)]
        if type(operand) is Symbol:
            return [(f.name, "param:" + operand.name)]
        if type(operand) is VectorOperand:
            return [(f.name, e.name) for e in operand.elements if type(e) is Register]
        return []

    def formals(param) -> list:
        return [(callee.name, n) for n in _formals(param)]

    def pairs(outer: list, inner: list) -> list:
        """Element by element when the shapes agree, else every node to every node."""
        if len(outer) == len(inner):
            return list(zip(outer, inner, strict=True))
        return [(o, i) for o in outer for i in inner]

    if callee is None:
        # No body here: whatever it returns may come from memory.
        tainted.update(n for ret in rets for n in nodes(ret))
        return set()
    for formal, arg in zip(callee.params, args, strict=False):
        for source, target in pairs(nodes(arg), formals(formal)):
            flows.append(((target,), (source,)))
    for formal, ret in zip(callee.return_params, rets, strict=False):
        for target, source in pairs(nodes(ret), formals(formal)):
            flows.append(((target,), (source,)))
    return {callee.name}


def used_registers(function: Function) -> frozenset[str]:
    """Every register read by some instruction of ``function`` (guards included)."""
    used: set[str] = set()
    for instr in function.instructions:
        used.update(uses(instr))
    return frozenset(used)
