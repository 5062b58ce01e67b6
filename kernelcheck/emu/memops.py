"""Memory instructions: ``ld``/``ldu``/``st`` in every state space, ``atom``/``red``, and the
memory-ordering instructions that are no-ops for a sequential emulator.

Accesses are vectorized over the active lanes. Global memory is
:class:`kernelcheck.emu.memory.DeviceMemory`; shared memory is one byte buffer per block of the
batch; local memory one per thread; kernel parameters are the launch's parameter buffer and
device-function parameters live per lane in the frame. Cache and ordering qualifiers (``.nc``,
``.ca``, ``.cg``, ``.cs``, ``.lu``, ``.cv``, ``.volatile``, ``.relaxed``, ``.acquire``,
``.release``, scopes) do not change results in a sequential emulator and are accepted.

Atomics run in a defined serial order: for one instruction, lanes in increasing lane order
(lane within warp, warp within block, block within the batch). See
:func:`kernelcheck.emu.atomics.apply_atomic`.
"""

from __future__ import annotations

import numpy as np

from kernelcheck.emu.atomics import apply_atomic, half_add
from kernelcheck.emu.compiler import instruction_type, where
from kernelcheck.emu.convert import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE
from kernelcheck.emu.dispatch import form, register
from kernelcheck.emu.floats import flush
from kernelcheck.emu.memory import MemoryFault
from kernelcheck.emu.values import B128, NP_TYPE, UINT_OF_SIZE, bits_dtype
from kernelcheck.ir.nodes import Address, Register, Symbol, VectorOperand

__all__ = ["SPACES", "Access", "guard_writes", "space_of_instruction"]

SPACES = ("global", "shared", "local", "param", "const")
#: Generic address of offset 0 of a state space's variables (see kernelcheck.emu.convert).
_GENERIC_BASE = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW}
_U64 = np.uint64


# Forms (PTX ISA 9.7.9.8 ld, 9.7.9.9 ldu, 9.7.9.10 st, 9.7.13.5 atom, 9.7.13.6 red). Cache
# operators, eviction priorities, memory orders and scopes do not change what a sequential
# emulator reads or writes.
_LD_TYPES = "b8 b16 b32 b64 u8 u16 u32 u64 s8 s16 s32 s64 f32 f64"
_LD_SPACES = "global shared shared::cta local param param::entry param::func const"
#: Name of the raw-bits type of each access width.
_BITS_T = {1: "b8", 2: "b16", 4: "b32", 8: "b64", 16: "b128"}
_SCOPES = "cta cluster gpu sys"
_EVICT = ("L1::evict_normal L1::evict_unchanged L1::evict_first L1::evict_last "
          "L1::no_allocate L2::evict_first L2::evict_last L2::evict_normal L2::cache_hint "
          "L2::64B L2::128B L2::256B")
_LD_MODS = f"{_LD_SPACES} ca cg cs lu cv nc volatile relaxed acquire weak mmio {_SCOPES} " \
           f"{_EVICT} v2 v4"
# st takes neither .const ("Stores to const memory are illegal") nor .param::entry (".ss =
# { .global, .local, .param{::func}, .shared{::cta, ::cluster} }"), nor the prefetch sizes
# of ld (ISA 9.7.9.10 st).
_ST_SPACES = "global shared shared::cta local param param::func"
_ST_MODS = f"{_ST_SPACES} wb cg cs wt volatile relaxed release weak mmio {_SCOPES} " + \
    " ".join(m for m in _EVICT.split() if m not in ("L2::64B", "L2::128B", "L2::256B")) + \
    " v2 v4"
_ATOM_COMMON = f"global shared shared::cta relaxed acquire release acq_rel {_SCOPES} " \
               "L2::cache_hint"
_ATOM_FORMS = (
    form("b32 b64", _ATOM_COMMON + " and or xor exch cas", required=["and or xor exch cas"]),
    form("u32 u64 s32 s64", _ATOM_COMMON + " add min max", required=["add min max"]),
    form("u32", _ATOM_COMMON + " inc dec", required=["inc dec"]),
    form("f32", _ATOM_COMMON + " add min max", required=["add min max"]),
    form("f64", _ATOM_COMMON + " add", required=["add"]),
    form("b16", _ATOM_COMMON + " cas", required=["cas"]),
    # Half-precision adds (.noftz is mandatory) and the vector forms of sm_90.
    form("f16 bf16 f16x2 bf16x2", _ATOM_COMMON + " add noftz", required=["add", "noftz"]),
    form("f32", "global relaxed acquire release acq_rel " + _SCOPES + " L2::cache_hint"
         " add v2 v4", required=["add", "v2 v4"]),
    form("f16 bf16", "global relaxed acquire release acq_rel " + _SCOPES +
         " L2::cache_hint add noftz v2 v4 v8", required=["add", "noftz", "v2 v4 v8"]),
    form("f16x2 bf16x2", "global relaxed acquire release acq_rel " + _SCOPES +
         " L2::cache_hint add noftz v2 v4", required=["add", "noftz", "v2 v4"]),
)
# red has no result and no exchange or compare-and-swap (ISA 9.7.13.6).
_RED_FORMS = tuple(
    form(f.types, f.modifiers - {"exch", "cas", "acquire", "acq_rel"},
         [g - {"exch", "cas"} for g in f.required])
    for f in _ATOM_FORMS if not (f.types == {"b16"}))


def _space_of(m: str) -> str | None:
    if m in SPACES:
        return m
    if m == "shared::cta":
        return "shared"
    if m in ("param::entry", "param::func"):
        return "param"
    return None


def _space(instr) -> str:
    for m in instr.modifiers:
        space = _space_of(m)
        if space is not None:
            return space
    return "generic"


def space_of_instruction(instr) -> str:
    """The state space an instruction names (``generic`` when none)."""
    return _space(instr)


def _vector_count(instr, data_operand) -> int:
    for m in instr.modifiers:
        if m in ("v2", "v4", "v8"):
            return int(m[1:])
    if type(data_operand) is VectorOperand:
        return len(data_operand.elements)
    return 1


class _Access:
    """Decoded address of one memory instruction, able to locate its bytes for lanes."""

    def __init__(self, instr, cx, operand, space: str, nbytes: int, kind: str) -> None:
        if type(operand) is not Address:
            raise cx.unsupported(f"memory operand {operand!r}")
        self.instr = instr
        self.function = cx.function
        self.space = space
        self.nbytes = nbytes
        self.kind = kind
        self.offset = operand.offset
        self.symbol = None
        self.reg = -1
        self.wrap32 = False
        self.const_addr = None
        base = operand.base
        if type(base) is Symbol:
            sym_space, addr = cx.symbol(base.name)
            if sym_space in ("kparam", "param"):
                self.symbol = (sym_space, base.name, addr)
            elif space == "generic":
                # A variable used as a generic address means its generic address (ISA 6.4.1
                # generic addressing): the .shared and .local windows, or the .global/.const
                # address itself.
                self.const_addr = addr + operand.offset + _GENERIC_BASE.get(sym_space, 0)
            else:
                self.const_addr = addr + operand.offset
        elif type(base) is Register:
            self.reg = cx.reg(base.name)
            # A 32-bit register holds a 32-bit address: [%r + imm] wraps modulo 2**32 (nvcc
            # forms shared addresses as `base - 64*tid` and adds the offset back).
            self.wrap32 = np.dtype(cx.reg_storage[self.reg]).itemsize <= 4
        elif base is None:
            self.const_addr = operand.offset
        else:
            raise cx.unsupported(f"address base {base!r}")
        #: ``ld.param [%r+imm]`` in a kernel: ``%r`` holds an address in the kernel's
        #: parameter space (``mov.b64 %r, k_param_0`` gives the parameter's offset in the
        #: buffer, the address the emulator gives a kernel parameter symbol).
        self.kparam_reg = False
        if self.symbol is None and space == "param":
            if kind != "read" or self.reg < 0 or not cx.function.is_kernel:
                raise cx.unsupported("ld/st.param through a register address")
            self.kparam_reg = True

    def addresses(self, st, fr, lanes) -> np.ndarray:
        if self.const_addr is not None:
            return np.full(len(lanes), self.const_addr & 0xFFFFFFFFFFFFFFFF, dtype=_U64)
        reg = fr.regs[self.reg]
        a = reg[lanes].astype(_U64)
        if self.offset:
            a = a + _U64(self.offset & 0xFFFFFFFFFFFFFFFF)
            if self.wrap32:
                a &= _U64(0xFFFFFFFF)
        return a

    def fault(self, st, lanes, err: MemoryFault) -> MemoryFault:
        k = getattr(err, "fault_lane", 0)
        lane = int(lanes[k]) if len(lanes) else 0
        ctaid, tid = st.position(lane)
        line = self.instr.loc.line if self.instr.loc is not None else None
        return err.located(instruction=self.instr.full_opcode, index=self.instr.index,
                           source_line=line, tid=tid, ctaid=ctaid, kernel=self.function.name)

    def locate(self, st, fr, lanes):
        """Return a list of ``(buffer, byte_offsets, lane_positions, alloc_or_None)``."""
        return self.locate_at(st, fr, lanes, 0)

    def locate_at(self, st, fr, lanes, delta: int):
        """:meth:`locate` of the bytes ``delta`` past each lane's address (bulk copies)."""
        addrs = self.addresses(st, fr, lanes)
        if delta:
            addrs = addrs + _U64(delta)
        space = self.space
        try:
            if space == "generic":
                return self._generic(st, addrs, lanes)
            return self._in_space(st, space, addrs, lanes, np.arange(len(lanes)))
        except MemoryFault as err:
            raise self.fault(st, lanes, err) from None

    def locate_addresses(self, st, addrs, lanes):
        """:meth:`locate` of explicit addresses, one per entry of ``lanes`` (the lane whose
        block and thread own the shared and local memory reached)."""
        addrs = np.asarray(addrs, dtype=_U64)
        try:
            if self.space == "generic":
                return self._generic(st, addrs, lanes)
            return self._in_space(st, self.space, addrs, lanes, np.arange(len(lanes)))
        except MemoryFault as err:
            raise self.fault(st, lanes, err) from None

    def _generic(self, st, addrs, lanes):
        shared = (addrs >= _U64(SHARED_WINDOW)) & (addrs < _U64(SHARED_WINDOW + WINDOW_SIZE))
        local = (addrs >= _U64(LOCAL_WINDOW)) & (addrs < _U64(LOCAL_WINDOW + WINDOW_SIZE))
        if not shared.any() and not local.any():
            return self._in_space(st, "global", addrs, lanes, np.arange(len(lanes)))
        out = []
        glob = ~(shared | local)
        for sel, space, base in ((glob, "global", 0), (shared, "shared", SHARED_WINDOW),
                                 (local, "local", LOCAL_WINDOW)):
            pos = np.nonzero(sel)[0]
            if len(pos):
                try:
                    out += self._in_space(st, space, addrs[pos] - _U64(base), lanes[pos], pos)
                except MemoryFault as err:
                    if hasattr(err, "fault_lane"):
                        err.fault_lane = int(pos[err.fault_lane])
                    raise
        return out

    def _in_space(self, st, space, addrs, lanes, pos):
        n = self.nbytes
        if n > 1:
            bad = (addrs % _U64(n)) != 0
            if bad.any():
                k = int(np.argmax(bad))
                err = MemoryFault(f"misaligned address for a {n}-byte access", kind=self.kind,
                                  space=space, address=int(addrs[k]), width=n)
                err.fault_lane = k
                raise err
        if space in ("global", "const"):
            found = st.mem.locate(addrs, n, self.kind)
            if type(found) is tuple:
                alloc, off = found
                _check_offsets(off, addrs, alloc, n, self.kind, space)
                return [(alloc.data, off, pos, alloc)]
            for a, sub, off in found:
                _check_offsets(off, addrs[sub], a, n, self.kind, space, sub)
            return [(a.data, off, pos[sub], a) for a, sub, off in found]
        if space == "shared":
            size, base = st.shared_size, st.block_slot[lanes] * st.shared_size
            buf = st.shared
        elif space == "local":
            size, base = st.local_size, lanes.astype(np.int64) * st.local_size
            buf = st.local
        else:
            raise MemoryFault("unsupported state space", kind=self.kind, space=space, width=n)
        # (the first test catches addresses near 2**64, where addrs + n wraps around)
        over = (addrs >= _U64(size)) | (addrs + _U64(n) > _U64(size))
        if over.any():
            k = int(np.argmax(over))
            err = MemoryFault(f"out of bounds of the {size}-byte {space} window",
                              kind=self.kind, space=space, address=int(addrs[k]), width=n)
            err.fault_lane = k
            raise err
        return [(buf, addrs.astype(np.int64) + base, pos, None)]


def _check_offsets(off, addrs, alloc, n, kind, space, sub=None) -> None:
    """Offsets past the allocation (an address 2**63 or more above it reads as negative
    once cast to int64) are memory faults."""
    bad = off < 0
    if bad.any():
        k = int(np.argmax(bad))
        err = MemoryFault(f"address {int(addrs[k]):#x} is outside every allocation",
                          kind=kind, space=space, address=int(addrs[k]), width=n)
        err.fault_lane = k if sub is None else int(sub[k])
        raise err


def guard_writes(st, acc, lanes, pieces) -> None:
    """Stop a global store or atomic that leaves the launch's write guard, before any of its
    lanes writes (shared and local pieces, ``alloc is None``, are private and not checked)."""
    for _, off, pos, alloc in pieces:
        if alloc is None:
            continue
        addrs = off.astype(np.uint64) + _U64(alloc.base)
        try:
            st.mem.check_writes(addrs, acc.nbytes, acc.kind)
        except MemoryFault as err:
            err.fault_lane = int(pos[err.fault_lane])
            raise acc.fault(st, lanes, err) from None


def _lanes(st, mask):
    return st.all_lanes if mask is None else np.nonzero(mask)[0]


def _scatter_full(st, values, lanes, mask, dtype):
    if mask is None:
        return values
    full = np.zeros(st.L, dtype=dtype)
    full[lanes] = values
    return full


def _param_read(st, fr, sym, offset, width, count, lanes):
    sym_space, name, base = sym
    if sym_space == "kparam":
        start = base + offset
        raw = st.params[start:start + width * count]
        if len(raw) < width * count:
            raise MemoryFault("read past the end of the kernel parameters", kind="read",
                              space="param", address=start, width=width * count)
        return [np.full(len(lanes), v) for v in raw.view(bits_dtype(width))]
    area = fr.params[name]
    cols = area[lanes, offset:offset + width * count]
    vals = np.ascontiguousarray(cols).view(bits_dtype(width))
    return [vals[:, k] for k in range(count)]


def _kparam_read(st, offsets, width, count):
    """Values of ``count`` consecutive ``width``-byte elements of the kernel parameter
    buffer at each lane's byte offset (a by-value array indexed per thread)."""
    raw = np.asarray(st.params, dtype=np.uint8)
    # Offsets are unsigned 64-bit: a negative index is a huge one, past the end.
    end = int(offsets.max()) + width * count if len(offsets) else 0
    if len(offsets) and end > len(raw):
        raise MemoryFault("read past the end of the kernel parameters", kind="read",
                          space="param", address=int(offsets.max()), width=width * count)
    size = width * count
    if len(offsets) and size > 1 and bool((offsets % size != 0).any()):
        # PTX ISA: an address not aligned to the access size is not read (the hardware
        # reports a misaligned address); the launch check reads table entries the same way.
        bad = int(offsets[offsets % size != 0][0])
        raise MemoryFault("misaligned read of the kernel parameters", kind="read",
                          space="param", address=bad, width=size)
    out = []
    for k in range(count):
        idx = offsets.astype(np.int64)[:, None] + k * width + np.arange(width)
        out.append(np.ascontiguousarray(raw[idx]).view(bits_dtype(width)).reshape(len(offsets)))
    return out


def _param_write(st, fr, sym, offset, width, values, lanes):
    sym_space, name, _ = sym
    if sym_space == "kparam":
        raise MemoryFault("store to a kernel parameter", kind="write", space="param")
    area = fr.params[name]
    for k, v in enumerate(values):
        raw = np.ascontiguousarray(np.asarray(v, dtype=bits_dtype(width))).view(np.uint8)
        area[lanes, offset + k * width:offset + (k + 1) * width] = raw.reshape(len(lanes), width)


def _read(buf: np.ndarray, off: np.ndarray, width: int) -> np.ndarray:
    """The ``width``-byte values at byte offsets ``off`` of ``buf`` (aligned)."""
    if width == 16:
        return np.ascontiguousarray(buf[off[:, None] + _BYTES16]).view(B128).reshape(len(off))
    return buf.view(UINT_OF_SIZE[width])[off // width]


def _write(buf: np.ndarray, off: np.ndarray, width: int, values: np.ndarray) -> None:
    """Store ``width``-byte values at byte offsets ``off`` of ``buf`` (aligned)."""
    if width == 16:
        raw = np.ascontiguousarray(values, dtype=B128).view(np.uint8).reshape(len(off), 16)
        buf[off[:, None] + _BYTES16] = raw
        return
    buf.view(UINT_OF_SIZE[width])[off // width] = values


_BYTES16 = np.arange(16)
# .b128 (PTX ISA 8.3, sm_70+): ld and st of one 128-bit value, no vectors of them (9.7.9.8 ld
# ".type = { .b8, .b16, .b32, .b64, .b128, ... }", "ld.global.b128 %r0, [gbl]; // 128-bit
# load").
_LD_B128 = " ".join(m for m in _LD_MODS.split() if m not in ("v2", "v4"))
_ST_B128 = " ".join(m for m in _ST_MODS.split() if m not in ("v2", "v4"))


@register("ld", form(_LD_TYPES, _LD_MODS), form("b32 u32 s32 f32", _LD_MODS + " v8"),
          form("b128", _LD_B128))
@register("ldu", form(_LD_TYPES, "global v2 v4"))
def _ld(instr, cx):
    t = instruction_type(instr)
    if t is None:
        raise cx.unsupported()
    dest = instr.operands[0]
    count = _vector_count(instr, dest)
    width = NP_TYPE[t].itemsize
    ut = bits_dtype(width)
    space = _space(instr)
    acc = _Access(instr, cx, instr.operands[1], space, width * count, "read")
    elements = dest.elements if type(dest) is VectorOperand else (dest,)
    bits_t = _BITS_T[width]
    puts = [cx.dst(e, t if t[0] == "s" else bits_t) for e in elements]
    sdt = NP_TYPE[t] if t[0] == "s" else ut
    tracing_space = space in ("global", "generic", "const")

    def run(st, fr, mask):
        lanes = _lanes(st, mask)
        if not len(lanes):
            return
        if acc.symbol is not None:
            vals = _param_read(st, fr, acc.symbol, acc.offset, width, count, lanes)
        elif acc.kparam_reg:
            vals = _kparam_read(st, acc.addresses(st, fr, lanes), width, count)
        else:
            vals = [np.zeros(len(lanes), dtype=ut) for _ in range(count)]
            for buf, off, pos, alloc in acc.locate(st, fr, lanes):
                for k in range(count):
                    vals[k][pos] = _read(buf, off + k * width, width)
                if alloc is not None and st.trace is not None and tracing_space:
                    st.trace.read(alloc, off, width * count)
        for put, v in zip(puts, vals, strict=True):
            v = np.asarray(v).astype(ut).view(sdt)
            put(st, fr, _scatter_full(st, v, lanes, mask, sdt), mask)
    return run


@register("st", form(_LD_TYPES, _ST_MODS), form("b32 u32 s32 f32", _ST_MODS + " v8"),
          form("b128", _ST_B128))
def _st(instr, cx):
    t = instruction_type(instr)
    if t is None:
        raise cx.unsupported()
    data = instr.operands[1]
    count = _vector_count(instr, data)
    width = NP_TYPE[t].itemsize
    ut = bits_dtype(width)
    space = _space(instr)
    acc = _Access(instr, cx, instr.operands[0], space, width * count, "write")
    elements = data.elements if type(data) is VectorOperand else (data,)
    bits_t = _BITS_T[width]
    gets = [cx.src(e, bits_t) for e in elements]
    tracing_space = space in ("global", "generic")

    def run(st, fr, mask):
        lanes = _lanes(st, mask)
        if not len(lanes):
            return
        vals = []
        for g in gets:
            v = np.asarray(g(st, fr)).astype(ut)
            vals.append(v[lanes] if v.ndim else np.full(len(lanes), v, dtype=ut))
        if acc.symbol is not None:
            _param_write(st, fr, acc.symbol, acc.offset, width, vals, lanes)
            return
        pieces = acc.locate(st, fr, lanes)
        if st.mem.write_guard is not None:
            guard_writes(st, acc, lanes, pieces)
        for buf, off, pos, alloc in pieces:
            for k in range(count):
                _write(buf, off + k * width, width, vals[k][pos])
            if alloc is not None and st.trace is not None and tracing_space:
                st.trace.write(alloc, off, width * count)
    return run


_ATOMIC_OPS = ("add", "inc", "dec", "exch", "cas", "min", "max", "and", "or", "xor")


@register("atom", *_ATOM_FORMS)
@register("red", *_RED_FORMS)
def _atom(instr, cx):
    op = next((m for m in instr.modifiers if m in _ATOMIC_OPS), None)
    t = instruction_type(instr)
    count = next((int(m[1:]) for m in instr.modifiers if m in ("v2", "v4", "v8")), 1)
    width = NP_TYPE[t].itemsize
    ut = UINT_OF_SIZE[width]
    dt = NP_TYPE[t] if t not in ("bf16", "bf16x2", "f16x2") else ut
    combine = half_add(t) if t in ("f16", "bf16", "f16x2", "bf16x2") else None
    # "atom.add.f32 on global memory flushes subnormal inputs and results to sign-preserving
    # zero; on shared memory it does not" (ISA 9.7.13.5).
    global_combine = _add_f32_ftz if (t == "f32" and op == "add") else combine
    space = _space(instr)
    has_dest = instr.opcode == "atom"
    ops = instr.operands
    addr_operand = ops[1] if has_dest else ops[0]
    acc = _Access(instr, cx, addr_operand, space, width * count, "atomic")
    first = 2 if has_dest else 1
    elem_t = t if combine is None else {1: "b8", 2: "b16", 4: "b32", 8: "b64"}[width]

    def elements(operand):
        return operand.elements if type(operand) is VectorOperand else (operand,)
    bs = [cx.src(e, elem_t) for e in elements(ops[first])]
    c = cx.src(ops[first + 1], t) if op == "cas" else None
    puts = [cx.dst(e, elem_t) for e in elements(ops[0])] if has_dest else []
    if len(bs) != count or (has_dest and len(puts) != count):
        raise cx.unsupported(f"operands of '{instr.full_opcode}' do not hold {count} values")
    used = cx_used(cx)
    result_used = has_dest and any(type(e) is Register and e.name in used
                                   for e in elements(ops[0]))
    tainted = any(type(o) is Register and o.name in cx_taint(cx)
                  for o in ops[first:] for o in elements(o))
    info = (instr.index, op, t, width, result_used, tainted, where(instr, cx.function))
    tracing_space = space in ("global", "generic")
    edt = NP_TYPE[elem_t] if combine is not None else dt

    def run(st, fr, mask):
        lanes = _lanes(st, mask)
        if not len(lanes):
            return
        vbs = []
        for b in bs:
            vb = np.asarray(b(st, fr), dtype=edt)
            vbs.append(vb[lanes] if vb.ndim else np.full(len(lanes), vb, dtype=edt))
        vc = None
        if c is not None:
            vc = np.asarray(c(st, fr), dtype=dt)
            vc = vc[lanes] if vc.ndim else np.full(len(lanes), vc, dtype=dt)
        olds = [np.zeros(len(lanes), dtype=edt) for _ in range(count)]
        pieces = acc.locate(st, fr, lanes)
        if st.mem.write_guard is not None:
            guard_writes(st, acc, lanes, pieces)
        for buf, off, pos, alloc in pieces:
            view = buf.view(ut).view(edt)
            for k in range(count):
                # Each element of a vector atomic is its own atomic operation (ISA 9.7.13.5
                # "vector atom"); vectors of two lanes are aligned, so they meet whole.
                olds[k][pos] = apply_atomic(view, off // width + k, op, vbs[k][pos],
                                            None if vc is None else vc[pos],
                                            combine if alloc is None else global_combine)
                if alloc is not None and st.trace is not None and tracing_space:
                    st.trace.atomic(alloc, off + k * width, info, vbs[k][pos])
        # red has no destination (puts is empty): the olds are not written anywhere.
        for put, old in zip(puts, olds, strict=bool(puts)):
            put(st, fr, _scatter_full(st, old, lanes, mask, edt), mask)
    return run


def _add_f32_ftz(old, b):
    """f32 add with subnormal inputs and result flushed to zero of their sign."""
    return flush(flush(old.astype(np.float32)) + flush(b.astype(np.float32))).astype(
        np.float32)


def cx_used(cx):
    return cx.used_registers


def cx_taint(cx):
    return cx.tainted


@register("isspacep", form("", "global shared shared::cta local",
                            required=["global shared shared::cta local"]))
def _isspacep(instr, cx):
    """isspacep.space p, a (ISA 9.7.9.18): whether the generic address ``a`` falls in the
    window of the space. The emulator's generic addresses: the shared and local windows
    (kernelcheck.emu.convert), every other address global."""
    space = next(m for m in instr.modifiers if m in ("global", "shared", "shared::cta", "local"))
    get = cx.src(instr.operands[1], "u64")
    put = cx.dst(instr.operands[0], "pred")

    def run(st, fr, mask):
        a = np.asarray(get(st, fr)).astype(_U64)
        shared = (a >= _U64(SHARED_WINDOW)) & (a < _U64(SHARED_WINDOW + WINDOW_SIZE))
        local = (a >= _U64(LOCAL_WINDOW)) & (a < _U64(LOCAL_WINDOW + WINDOW_SIZE))
        r = local if space == "local" else shared if space != "global" else ~(shared | local)
        put(st, fr, r, mask)
    return run


# Instructions with no effect on the emulator's state. The fences order memory accesses
# (ISA 9.7.13.4 membar/fence), and the emulator performs every access in program order when
# it is issued, so every order a fence asks for already holds. That includes the proxy fence
# ``fence.proxy.async``, which orders generic-proxy accesses (the st.shared that fill a
# buffer) with async-proxy ones (the cp.async.bulk that reads it): the emulator's bulk copies
# complete when they are issued (kernelcheck.emu.asynccopy), after every earlier store. The
# cache hints (prefetch, discard, applypriority, createpolicy) change no value a program can
# read: the policy createpolicy writes is opaque (9.7.9.18: "an opaque 64-bit register"), so
# it is zero here, and the ``.global`` of ``createpolicy.range.global`` only names the state
# space of ``[a]``, an address createpolicy does not access.
@register("pmevent", form("", "mask"))
@register("brkpt", form(""))
@register("setmaxnreg", form("u32", "inc dec sync aligned", required=["inc dec"]))
@register("prefetch", form("", "global local L1 L2 L2::evict_last L2::evict_normal tensormap",
                            required=["L1 L2 L2::evict_last L2::evict_normal tensormap"]))
@register("prefetchu", form("", "L1", required=["L1"]))
@register("fence", form("", "sc acq_rel " + _SCOPES, required=["sc acq_rel"]),
          form("", "proxy async shared::cta", required=["proxy", "async"]))
@register("membar", form("", "cta gl sys", required=["cta gl sys"]))
@register("nanosleep", form("u32"))
@register("discard", form("", "global L2", required=["L2"]))
@register("applypriority", form("", "global L2::evict_normal", required=["L2::evict_normal"]))
@register("createpolicy", form("b64", "fractional range L2::evict_last L2::evict_normal "
                                      "L2::evict_first L2::evict_unchanged"),
          form("b64", "range global L2::evict_last L2::evict_normal L2::evict_first "
                      "L2::evict_unchanged", required=["range"]))
@register("griddepcontrol", form("", "launch_dependents wait",
                                 required=["launch_dependents wait"]))
def _noop(instr, cx):
    if instr.opcode == "createpolicy":
        put = cx.dst(instr.operands[0], "b64")
        return lambda st, fr, mask: put(st, fr, np.uint64(0), mask)
    return lambda st, fr, mask: None


Access = _Access
