"""Random instructions of the forms the emulator runs, in a small kernel with random data.

:func:`instruction` builds one PTX instruction from an entry ``(opcode, type, modifier)`` of
``kernelcheck.emu.dispatch_entries()``: a form of the dispatch table that holds the entry, one
modifier of each group the form requires, a few more of its modifiers, and operands shaped as
the PTX ISA writes that opcode (a random shape for the opcodes without a template, which the
emulator must then run or reject). :func:`kernel` wraps it in a kernel whose registers hold
random bytes loaded per thread, with memory operands in every state space.
"""

from __future__ import annotations

import random

from kernelcheck.emu.dispatch import FORMS, Form, accepts, signature

#: Opcodes that change control flow or stop the launch: not fuzzed here.
CONTROL = frozenset({"bra", "brx", "call", "ret", "exit", "trap"})

# Register classes of the kernel: name prefix, count, declared type.
_CLASSES = {"p": ("%p", 4, "pred"), "h": ("%rs", 6, "b16"), "r": ("%r", 8, "b32"),
            "d": ("%rd", 4, "b64"), "f": ("%f", 6, "f32"), "fd": ("%fd", 4, "f64"),
            "q": ("%q", 2, "b128")}
_WIDTH = {"pred": 0, "b1": 4, "b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2,
          "bf16": 2, "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4,
          "tf32": 4, "u16x2": 4, "s16x2": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8,
          "f32x2": 8, "b128": 16, "e4m3x2": 2, "e5m2x2": 2, "e2m1x2": 1, "e2m3x2": 2,
          "e3m2x2": 2, "ue8m0x2": 2}

HEAD = ".version 8.3\n.target sm_90\n.address_size 64\n"
#: Bytes of random data each thread loads its registers from.
THREAD_BYTES = 192
#: Bytes of the scratch buffer the memory operands reach (global, shared, local, const).
SCRATCH = 256


def _register(rng: random.Random, ptx_type: str | None) -> str:
    """A register for a value of ``ptx_type`` (a random class when the type is unknown)."""
    width = _WIDTH.get(ptx_type or "", -1)
    if width == 0:
        cls = "p"
    elif width in (1, 2):
        cls = "h"
    elif width == 4:
        cls = "f" if ptx_type == "f32" and rng.random() < 0.7 else "r"
    elif width == 8:
        cls = "fd" if ptx_type == "f64" and rng.random() < 0.7 else "d"
    elif width == 16:
        cls = "q"
    else:
        cls = rng.choice(list(_CLASSES))
    prefix, count, _ = _CLASSES[cls]
    return f"{prefix}{rng.randrange(count)}"


def _immediate(rng: random.Random, ptx_type: str | None) -> str:
    if ptx_type == "f32":
        return f"0f{rng.getrandbits(32):08X}"
    if ptx_type == "f64":
        return f"0d{rng.getrandbits(64):016X}"
    return str(rng.choice([0, 1, 2, 3, 7, 8, 31, 32, 33, 63, 64, 255, -1, -2, 0x7FFFFFFF,
                           rng.getrandbits(32)]))


def _source(rng: random.Random, ptx_type: str | None, immediate: float = 0.2) -> str:
    if ptx_type != "pred" and rng.random() < immediate:
        return _immediate(rng, ptx_type)
    if ptx_type == "pred" and rng.random() < 0.2:
        return "!" + _register(rng, "pred")
    return _register(rng, ptx_type)


def _memory(rng: random.Random, space: str) -> str:
    """An address in ``space``: mostly aligned and inside the scratch buffer, sometimes not."""
    offset = rng.choice([0, 0, 0, 4, 8, 16, 32, 64, 3, -8, SCRATCH, 1 << 20])
    base = {"shared": "smem", "shared::cta": "smem", "local": "lmem", "const": "cmem",
            "param": "in_ptr", "param::entry": "in_ptr", "param::func": "in_ptr"}.get(
        space, "%ad3")
    if offset == 0:
        return f"[{base}]"
    return f"[{base}+{offset}]" if offset > 0 else f"[{base}{offset}]"


def _vector(rng: random.Random, ptx_type: str | None, count: int, source: bool) -> str:
    items = [_source(rng, ptx_type, 0.1) if source else _register(rng, ptx_type)
             for _ in range(count)]
    if not source and rng.random() < 0.1:
        items[rng.randrange(count)] = "_"
    return "{" + ", ".join(items) + "}"


def _pick_form(rng: random.Random, entry: tuple[str, str, str]) -> Form:
    opcode, ty, modifier = entry
    forms = [f for f in FORMS[opcode] if ty in f.types and (not modifier or modifier in
                                                              f.modifiers)]
    return rng.choice(forms)


def _modifiers(rng: random.Random, f: Form, modifier: str) -> list[str]:
    chosen: list[str] = [modifier] if modifier else []
    for group in f.required:
        if not any(m in group for m in chosen):
            chosen.append(rng.choice(sorted(group)))
    optional = sorted(f.modifiers - set(chosen))
    for m in rng.sample(optional, k=min(len(optional), rng.choice([0, 0, 1, 1, 2]))):
        chosen.append(m)
    return chosen


def _space(mods: list[str]) -> str:
    for m in mods:
        if m in ("global", "shared", "shared::cta", "local", "const", "param", "param::entry",
                 "param::func"):
            return m
    return "generic"


def _vec(mods: list[str]) -> int:
    for m in mods:
        if m in ("v2", "v4", "v8"):
            return int(m[1:])
    return 1


def operands(rng: random.Random, opcode: str, types: list[str], mods: list[str]) -> list[str]:
    """Operands of ``opcode`` in the shape the PTX ISA gives it (see the module notes)."""
    t = types[0] if types else None
    src_t = types[-1] if types else None
    reg, src = (lambda ty=t: _register(rng, ty)), (lambda ty=src_t: _source(rng, ty))
    n = _vec(mods)
    if opcode in ("ld", "ldu"):
        dest = _vector(rng, t, n, False) if n > 1 else reg()
        return [dest, _memory(rng, _space(mods))]
    if opcode == "st":
        data = _vector(rng, t, n, True) if n > 1 else src(t)
        return [_memory(rng, _space(mods)), data]
    if opcode in ("atom", "red"):
        value = _vector(rng, t, n, True) if n > 1 else src(t)
        tail = [src(t)] if "cas" in mods else []
        addr = _memory(rng, _space(mods))
        if opcode == "red":
            return [addr, value, *tail]
        return [_vector(rng, t, n, False) if n > 1 else reg(), addr, value, *tail]
    if opcode == "setp":
        dest = reg("pred") + (f"|{reg('pred')}" if rng.random() < 0.5 else "")
        extra = [src("pred")] if any(m in mods for m in ("and", "or", "xor")) else []
        return [dest, src(t), src(t), *extra]
    if opcode == "set":
        extra = [src("pred")] if any(m in mods for m in ("and", "or", "xor")) else []
        return [reg(t), src(src_t), src(src_t), *extra]
    if opcode in ("selp",):
        return [reg(), src(), src(), src("pred")]
    if opcode == "slct":
        return [reg(t), src(t), src(t), src(src_t)]
    if opcode in ("testp", "isspacep"):
        return [reg("pred"), src(t if opcode == "testp" else "u64")]
    if opcode in ("bfe",):
        return [reg(), src(), src("u32"), src("u32")]
    if opcode == "bfi":
        return [reg(), src(), src(), src("u32"), src("u32")]
    if opcode in ("shl", "shr"):
        return [reg(), src(), src("u32")]
    if opcode == "lop3":
        return [reg(), src(), src(), src(), str(rng.randrange(256))]
    if opcode in ("prmt", "shf", "dp4a", "dp2a", "sad", "mad", "mad24", "madc", "fma", "fns"):
        wide = "wide" in mods and opcode == "mad"
        return [reg(_widened(t) if wide else t), src(), src(),
                src(_widened(t) if wide else src_t)]
    if opcode == "mul" and "wide" in mods:
        return [reg(_widened(t)), src(), src()]
    if opcode in ("add", "sub", "addc", "subc", "mul", "div", "rem", "min", "max", "and", "or",
                  "xor", "copysign", "mul24", "bmsk", "szext"):
        return [reg(), src(), src()]
    if opcode == "cvt" and "pack" in mods:
        # cvt.pack.sat.convertType.s32{.b32} d, a, b{, c}: d is 32 bits of packed values
        return [reg("b32"), src("s32"), src("s32")] + ([src("b32")] if len(types) == 3 else [])
    if opcode[0] == "v" and opcode != "vote":
        # video instructions: d, a, b, and c with a second operation (.add/.min/.max), in
        # the packed forms (vadd2, vset4, ...) and in vmad
        third = opcode[-1] in "24" or opcode == "vmad" or any(
            m in mods for m in ("add", "min", "max"))
        out_t = "pred" if opcode == "vset" and not third and rng.random() < 0.3 else "u32"
        return [reg(out_t), src("u32"), src("u32")] + ([src("u32")] if third else [])
    if opcode in ("ldmatrix", "stmatrix"):
        count = next((int(m[1:]) for m in mods if m in ("x1", "x2", "x4")), 1)
        regs = "{" + ", ".join(reg("b32") for _ in range(count)) + "}"
        addr = rng.choice(["[%ad3]", "[smem]", "[smem+16]", "[smem+8]", _memory(rng, "shared")])
        return [regs, addr] if opcode == "ldmatrix" else [addr, regs]
    if opcode == "movmatrix":
        return [reg("b32"), src("b32")]
    if opcode == "cp" and any(m in mods for m in ("ca", "cg")):
        size = rng.choice(["4", "8", "16", "16", "3"])
        tail = [rng.choice(["0", "4", size, reg("u32"), reg("pred")])] if rng.random() < 0.3 \
            else []
        return [_memory(rng, "shared"), _memory(rng, "global"), size, *tail]
    if opcode == "cp" and "bulk" in mods and "bulk_group" in mods:
        return [_memory(rng, "global"), _memory(rng, "shared"), rng.choice(["16", "32", "8"])]
    if opcode in ("abs", "neg", "not", "cnot", "popc", "clz", "brev", "bfind", "sqrt", "rsqrt",
                  "rcp", "ex2", "lg2", "sin", "cos", "tanh", "mov", "cvt", "cvta"):
        if opcode == "cvt" and len(types) == 2 and types[0].endswith("x2") and \
                types[1] == "f32":
            return [reg(types[0]), src("f32"), src("f32")]
        out_t = "u32" if opcode in ("popc", "clz", "bfind") else t
        return [reg(out_t), src(src_t)]
    if opcode == "shfl":
        dest = reg("b32") + (f"|{reg('pred')}" if rng.random() < 0.5 else "")
        return [dest, src("b32"), src("u32"), src("u32"), "0xffffffff"]
    if opcode == "vote":
        return [reg("b32" if "ballot" in mods else "pred"), src("pred"), "0xffffffff"]
    if opcode == "match":
        dest = reg("b32") + (f"|{reg('pred')}" if "all" in mods and rng.random() < 0.5 else "")
        return [dest, src(t), "0xffffffff"]
    if opcode == "redux":
        return [reg(t), src(t), "0xffffffff"]
    if opcode == "activemask":
        return [reg("b32")]
    if opcode == "elect":
        return [f"{reg('b32')}|{reg('pred')}", "0xffffffff"]
    if opcode in ("bar", "barrier"):
        if "red" in mods:
            return [reg(t), "0", src("pred")]
        return ["0"]
    if opcode in ("fence", "membar", "brkpt", "pmevent", "griddepcontrol"):
        return [] if opcode != "pmevent" else ["1"]
    if opcode == "nanosleep":
        return [src("u32")]
    if opcode in ("prefetch", "prefetchu", "discard", "applypriority"):
        return [_memory(rng, _space(mods))] + (["128"] if opcode != "prefetch" and
                                               opcode != "prefetchu" else [])
    return _random_shape(rng, t)


def _widened(ptx_type: str | None) -> str | None:
    return {"u16": "u32", "s16": "s32", "u32": "u64", "s32": "s64"}.get(ptx_type or "",
                                                                          ptx_type)


def _random_shape(rng: random.Random, t: str | None) -> list[str]:
    """Operands of a random shape: registers, immediates, vectors and addresses."""
    shape = []
    for k in range(rng.randrange(0, 6)):
        kind = rng.random()
        if kind < 0.45:
            shape.append(_register(rng, t if rng.random() < 0.6 else None))
        elif kind < 0.6 and k:
            shape.append(_immediate(rng, t))
        elif kind < 0.85:
            shape.append(_vector(rng, t if rng.random() < 0.6 else None,
                                 rng.choice([1, 2, 4, 8]), k > 0))
        else:
            shape.append(_memory(rng, rng.choice(["generic", "global", "shared"])))
    return shape


def instruction(rng: random.Random, entry: tuple[str, str, str]) -> str:
    """One PTX instruction (text) of the dispatch-table entry ``entry``."""
    opcode, ty, modifier = entry
    f = _pick_form(rng, entry)
    mods = _modifiers(rng, f, modifier)
    types = ty.split(".") if ty else []
    text = ".".join([opcode, *mods, *types])
    args = operands(rng, opcode, types, mods)
    guard = ""
    if rng.random() < 0.15:
        guard = f"@{'!' if rng.random() < 0.5 else ''}{_register(rng, 'pred')} "
    return f"{guard}{text} {', '.join(args)};"


def accepted_by_the_table(text: str) -> bool:
    """Whether the dispatch table accepts the instruction's opcode, type and modifiers (the
    generator only combines a form's own modifiers, so it always should)."""
    body = text.split(" ", 1)[1] if text.startswith("@") else text
    head = body.split(" ", 1)[0].rstrip(";")
    opcode, *parts = head.split(".")

    class _Instr:
        modifiers = tuple(parts)
    ty, mods = signature(_Instr)
    return any(accepts(f, ty, mods) for f in FORMS[opcode])


def kernel(line: str) -> str:
    """A kernel running ``line`` once per thread after loading random bytes into every
    register; ``in_ptr``/``out_ptr`` hold ``THREAD_BYTES`` per thread, ``scratch`` (what
    generic and global memory operands reach) is shared by all threads. The addresses live
    in ``%ad`` registers, which the fuzzed instruction never names."""
    decls = " ".join(f".reg .{ty} {prefix}<{count}>;" for prefix, count, ty
                     in _CLASSES.values())
    loads, offset = [], 0
    # widest first, so that every load is aligned
    for prefix, count, ty in sorted(_CLASSES.values(), key=lambda c: -_WIDTH[c[2]]):
        if ty == "pred":
            continue
        width = _WIDTH[ty]
        for k in range(count):
            kind = ty if ty[0] == "f" else f"b{8 * width}"
            loads.append(f"ld.global.{kind} {prefix}{k}, [%ad2+{offset}];")
            offset += width
    assert offset <= THREAD_BYTES
    preds = ["setp.ne.b32 %p0, %r7, 0;", "setp.lt.s32 %p1, %r6, 0;",
             "setp.eq.b16 %p2, %rs5, 0;", "setp.gt.u32 %p3, %r5, 0x80000000;"]
    return HEAD + f""".global .align 16 .b8 gmem[{SCRATCH}];
.const .align 16 .b8 cmem[{SCRATCH}] = {{1, 2, 3, 4, 5, 6, 7, 8}};
.shared .align 16 .b8 smem[{SCRATCH}];
.visible .entry fuzz(.param .u64 in_ptr, .param .u64 out_ptr, .param .u64 scratch)
{{
  {decls}
  .reg .b32 %tidx;
  .reg .b64 %ad<4>;
  .local .align 16 .b8 lmem[{SCRATCH}];
  mov.u32 %tidx, %tid.x;
  ld.param.u64 %ad0, [in_ptr];
  ld.param.u64 %ad1, [out_ptr];
  ld.param.u64 %ad3, [scratch];
  mul.wide.u32 %ad2, %tidx, {THREAD_BYTES};
  add.s64 %ad1, %ad1, %ad2;
  add.s64 %ad2, %ad0, %ad2;
  {" ".join(loads)}
  {" ".join(preds)}
  {line}
  st.global.b32 [%ad1], %r0;
  st.global.b64 [%ad1+8], %rd0;
  st.global.f64 [%ad1+16], %fd0;
  st.global.b128 [%ad1+32], %q0;
  ret;
}}"""


def run(line: str, threads: int, seed: int) -> None:
    """Load the kernel of ``line`` and launch it over ``threads`` threads with random data
    from ``seed``; raises whatever the emulator raises."""
    import numpy as np

    from kernelcheck.emu import Emulator

    data = np.random.default_rng(seed)
    emu = Emulator()
    program = emu.load_module(kernel(line))
    inp = emu.alloc(THREAD_BYTES * threads)
    out = emu.alloc(THREAD_BYTES * threads)
    scratch = emu.alloc(SCRATCH)
    emu.copy_htod(inp, data.integers(0, 256, THREAD_BYTES * threads, dtype=np.uint8))
    emu.copy_htod(scratch, data.integers(0, 256, SCRATCH, dtype=np.uint8))
    emu.launch(program, "fuzz", grid=(1,), block=(threads,), params=[inp, out, scratch])
