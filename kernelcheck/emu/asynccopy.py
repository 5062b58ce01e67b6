"""Asynchronous copies (PTX ISA 9.7.9.25 "Data Movement and Conversion Instructions:
Asynchronous copy"): ``cp.async`` global to shared, its groups, and the bulk copy from shared
to global with bulk-group completion.

An asynchronous copy may complete at any time between its issue and the wait that covers it
(``cp.async.wait_group``/``wait_all``, ``cp.async.bulk.wait_group``); reading the destination
or writing the source in between is a data race the ISA leaves undefined. The emulator
completes each copy when it is issued, which is one of the orders the hardware may take, so
the waits and commits have nothing left to do. The bulk copies that complete through an
``mbarrier`` (``cp.async.bulk`` into shared memory, the ``.tensor`` forms) and the
reductions (``cp.reduce.async.bulk``) are not run.
"""

from __future__ import annotations

import numpy as np

from kernelcheck.emu.compiler import where
from kernelcheck.emu.dispatch import form, register
from kernelcheck.emu.memops import Access, guard_writes
from kernelcheck.errors import UnsupportedFeature
from kernelcheck.ir.nodes import Immediate, Register

__all__: list[str] = []

_HINTS = "L2::64B L2::128B L2::256B L2::cache_hint"


def _bytes(buf, off, n):
    return buf[off[:, None] + np.arange(n)[None, :]]


@register("cp",
          form("", "async ca shared shared::cta global " + _HINTS, required=["async", "ca"]),
          form("", "async cg shared shared::cta global " + _HINTS, required=["async", "cg"]),
          form("", "async commit_group", required=["async", "commit_group"]),
          form("", "async wait_group", required=["async", "wait_group"]),
          form("", "async wait_all", required=["async", "wait_all"]),
          form("", "async bulk global shared::cta bulk_group L2::cache_hint",
               required=["async", "bulk", "bulk_group", "global"]),
          form("", "async bulk commit_group", required=["async", "bulk", "commit_group"]),
          form("", "async bulk wait_group read", required=["async", "bulk", "wait_group"]))
def _cp(instr, cx):
    mods = instr.modifiers
    if any(m in mods for m in ("commit_group", "wait_group", "wait_all")):
        return lambda st, fr, mask: None
    if "bulk" in mods:
        return _bulk_store(instr, cx)
    return _cp_async(instr, cx)


def _cp_async(instr, cx):
    """cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size | ignore-src}: copy
    ``src-size`` bytes (``cp-size`` by default, none when the predicate ``ignore-src`` is
    true) and fill the rest of the ``cp-size`` bytes of ``dst`` with zeros."""
    ops = instr.operands
    size_operand = ops[2]
    if type(size_operand) is not Immediate or size_operand.value not in (4, 8, 16):
        raise cx.unsupported(f"cp-size {size_operand} of '{instr.full_opcode}' (4, 8 or 16)")
    n = int(size_operand.value)
    if "cg" in instr.modifiers and n != 16:
        raise cx.unsupported("cp.async.cg with a cp-size other than 16")
    dst = Access(instr, cx, ops[0], "shared", n, "write")
    src = Access(instr, cx, ops[1], "global", n, "read")
    src_size = None
    ignore = None
    if len(ops) > 3:
        extra = ops[3]
        types = cx.function.register_types
        if type(extra) is Register and types.get(extra.name) == "pred":
            ignore = cx.src(extra, "pred")
        elif type(extra) is Register or type(extra) is Immediate:
            if type(extra) is Register and types.get(extra.name) == "b64":
                pass  # a cache policy (L2::cache_hint) takes the operand's place
            else:
                src_size = cx.src(extra, "u32")
    if len(ops) > 4 and "L2::cache_hint" not in instr.modifiers:
        raise cx.unsupported(f"operands of '{instr.full_opcode}'")

    def run(st, fr, mask):
        lanes = st.all_lanes if mask is None else np.nonzero(mask)[0]
        if not len(lanes):
            return
        count = np.full(len(lanes), n, dtype=np.int64)
        if src_size is not None:
            count = np.minimum(np.broadcast_to(np.asarray(src_size(st, fr)).astype(np.int64),
                                               (st.L,))[lanes], n)
        if ignore is not None:
            skip = np.broadcast_to(np.asarray(ignore(st, fr)), (st.L,))[lanes]
            count = np.where(skip, 0, count)
        data = np.zeros((len(lanes), n), dtype=np.uint8)
        reading = np.nonzero(count > 0)[0]
        if len(reading):
            for buf, off, pos, alloc in src.locate(st, fr, lanes[reading]):
                data[reading[pos]] = _bytes(buf, off, n)
                if alloc is not None and st.trace is not None:
                    for k in np.unique(count[reading[pos]]).tolist():
                        sel = count[reading[pos]] == k
                        st.trace.read(alloc, off[sel], int(k))
        keep = np.arange(n)[None, :] < count[:, None]
        data = np.where(keep, data, 0).astype(np.uint8)
        for buf, off, pos, _ in dst.locate(st, fr, lanes):
            buf[off[:, None] + np.arange(n)[None, :]] = data[pos]
    return run


def _bulk_store(instr, cx):
    """cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size: ``size`` bytes (a
    multiple of 16) from shared memory to global memory."""
    ops = instr.operands
    size = cx.src(ops[2], "u32")
    probe = Access(instr, cx, ops[0], "global", 16, "write")
    src_probe = Access(instr, cx, ops[1], "shared", 16, "read")
    where_instr = where(instr, cx.function)

    def run(st, fr, mask):
        lanes = st.all_lanes if mask is None else np.nonzero(mask)[0]
        if not len(lanes):
            return
        sizes = np.broadcast_to(np.asarray(size(st, fr)).astype(np.int64), (st.L,))[lanes]
        if (sizes % 16).any():
            # the size "must be a multiple of 16" (ISA 9.7.9 "Data Movement and Conversion
            # Instructions: cp.async.bulk"); the ISA gives no result for other sizes, so none
            # is made up
            raise UnsupportedFeature(f"'{instr.full_opcode}' with a size that is not a "
                                     f"multiple of 16", where_instr)
        for k in np.unique(sizes).tolist():
            sel = lanes[sizes == k]
            for chunk in range(0, int(k), 16):
                data = np.zeros((len(sel), 16), dtype=np.uint8)
                for buf, off, pos, _ in src_probe.locate_at(st, fr, sel, chunk):
                    data[pos] = _bytes(buf, off, 16)
                pieces = probe.locate_at(st, fr, sel, chunk)
                if st.mem.write_guard is not None:
                    guard_writes(st, probe, sel, pieces)
                for buf, off, pos, alloc in pieces:
                    buf[off[:, None] + np.arange(16)[None, :]] = data[pos]
                    if alloc is not None and st.trace is not None:
                        st.trace.write(alloc, off, 16)
    return run
