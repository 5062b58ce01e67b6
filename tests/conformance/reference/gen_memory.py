"""Generated sweeps of ld, st and ldu (PTX ISA 9.7.9.8 ld, 9.7.9.9 ldu, 9.7.9.10 st): every
type with every state space, cache operator, eviction priority, prefetch size, cache hint,
memory-consistency qualifier (.weak, .volatile, .relaxed, .acquire, .release, .mmio and the
scopes), .nc and vector width, each moving real data through the right state space.

What the ISA says each does to the data, and all these forms check: a load reads the bytes of
its type at the address, little-endian, vectors element 0 first; a load into a register wider
than its type sign-extends a signed type and zero-extends the others (5.2.2, "Operand Size
Exceeding Instruction-Type Size"); a store writes the low bytes of its type and nothing else.
The qualifiers order and place memory operations but leave a single thread's values as they
are. Each thread reads its own 32-byte row of ``a`` (from global memory, from a copy in its
shared or local memory slot, from a .const table holding the same rows); .param loads read a
kernel parameter's bytes and a device function's argument, and stores to .param pass one.
"""

from __future__ import annotations

from tests.conformance.reference.bits import signed, unsigned
from tests.conformance.reference.sweep_values import hexes
from tests.conformance.sweep import Form, Operand, Sweep, register

TYPES = ("b8", "u8", "s8", "b16", "u16", "s16", "b32", "u32", "s32", "f32", "b64", "u64",
         "s64", "f64")
_BITS = {t: int(t[1:]) for t in TYPES}

#: each thread's 32 bytes: patterns with high bits set in every byte position, so that
#: sign and zero extension differ, and halves, words and doublewords that all differ
ROWS = (
    0x0123456789ABCDEF, 0xFEDCBA9876543210, 0x8000000000000080, 0x7FFF00FF8001807F,
    0xFFFFFFFFFFFFFFFF, 0x0000000000000000, 0x00000001FFFFFFFE, 0x80808080C0C0C0C0,
    0x3FF0000000000000, 0xBF8000003F800000, 0x7FC00000FF800000, 0x0000000180000000,
    0x7F7F7F7F7F7F7F7F, 0x8181818181818181, 0x1234567887654321, 0xDEADBEEFCAFEF00D,
    0x00FF00FF00FF00FF, 0xFF00FF00FF00FF00, 0x0F1E2D3C4B5A6978, 0x8796A5B4C3D2E1F0,
    0xC3C3C3C33C3C3C3C, 0x0102040810204080, 0xFEFDFBF7EFDFBF7F, 0x5555AAAA5555AAAA,
)
THREADS = len(ROWS) // 4
#: the bytes of the kernel parameter the .param loads read
PARAM_BYTES = bytes.fromhex("f1e2d3c4b5a69788796a5b4c3d2e1f00ff807f0181fe02fd55aa33cc0f0ff0f0")
#: the byte a shared or local slot holds before a store into it
FILL = 0xA5


def reg(type_name: str, k: int) -> str:
    """Scratch register k wide enough for the type (8-bit values live in .b16 registers)."""
    return {8: f"%h{k}", 16: f"%h{k}", 32: f"%r{k}", 64: f"%rd{k}"}[_BITS[type_name]]


def _reg_bytes(type_name: str) -> int:
    return max(_BITS[type_name], 16) // 8


def _element(data: bytes, k: int, type_name: str) -> int:
    """Element k of a type read from ``data``, extended to its register's width."""
    size = _BITS[type_name] // 8
    raw = int.from_bytes(data[k * size:(k + 1) * size], "little")
    if type_name[0] == "s":
        return unsigned(signed(raw, 8 * size), 8 * _reg_bytes(type_name))
    return raw


def _loaded(data: bytes, type_name: str, count: int) -> int:
    """The 32-byte slot after storing ``count`` loaded registers one after another."""
    width = _reg_bytes(type_name)
    out = bytearray(32)
    for k in range(count):
        out[k * width:(k + 1) * width] = _element(data, k, type_name).to_bytes(width, "little")
    return int.from_bytes(out, "little")


def _row(th) -> bytes:
    return th.a.to_bytes(32, "little")


def _dump(type_name: str, count: int, first: int = 1) -> str:
    """Store registers first.. one after another at their register width into the slot."""
    width = _reg_bytes(type_name)
    return "\n".join(f"st.global.b{8 * width} [{{o}}+{k * width}], {reg(type_name, first + k)};"
                     for k in range(count))


def _vector(type_name: str, count: int, first: int = 1) -> str:
    return "{" + ", ".join(reg(type_name, first + k) for k in range(count)) + "}"


def _load_form(type_name: str, instruction: str, count: int = 1, data=_row) -> Form:
    """``instruction`` loads ``count`` elements into registers 1..; they are dumped."""
    regs = _vector(type_name, count) if count > 1 else reg(type_name, 1)
    code = instruction.format(r=regs, t=type_name) + "\n" + _dump(type_name, count)
    return Form("x32", code, lambda th: _loaded(data(th), type_name, count))


_ROW_OPERAND = Operand("a", "u64", hexes(ROWS), row=4)
_POLICY = "createpolicy.fractional.L2::evict_last.b64 %rd23, 1.0;"

# -- loads from global memory -----------------------------------------------------------

GLOBAL_LOADS = (
    ("global", "ld.global.{t} {r}, [%a_addr];"),
    ("", "ld.{t} {r}, [%a_addr];"),
    ("ca", "ld.global.ca.{t} {r}, [%a_addr];"),
    ("cg", "ld.global.cg.{t} {r}, [%a_addr];"),
    ("cs", "ld.global.cs.{t} {r}, [%a_addr];"),
    ("lu", "ld.global.lu.{t} {r}, [%a_addr];"),
    ("cv", "ld.global.cv.{t} {r}, [%a_addr];"),
    ("nc", "ld.global.nc.{t} {r}, [%a_addr];"),
    ("L1::evict_normal", "ld.global.L1::evict_normal.{t} {r}, [%a_addr];"),
    ("L1::evict_unchanged", "ld.global.L1::evict_unchanged.{t} {r}, [%a_addr];"),
    ("L1::evict_first", "ld.global.L1::evict_first.{t} {r}, [%a_addr];"),
    ("L1::evict_last", "ld.global.L1::evict_last.{t} {r}, [%a_addr];"),
    ("L1::no_allocate", "ld.global.L1::no_allocate.{t} {r}, [%a_addr];"),
    ("L2::64B", "ld.global.L2::64B.{t} {r}, [%a_addr];"),
    ("L2::128B", "ld.global.L2::128B.{t} {r}, [%a_addr];"),
    ("L2::256B", "ld.global.L2::256B.{t} {r}, [%a_addr];"),
    ("L2::cache_hint", "ld.global.L2::cache_hint.{t} {r}, [%a_addr], %rd23;"),
    ("weak", "ld.weak.global.{t} {r}, [%a_addr];"),
    ("volatile", "ld.volatile.global.{t} {r}, [%a_addr];"),
    ("relaxed", "ld.relaxed.gpu.global.{t} {r}, [%a_addr];"),
    ("acquire", "ld.acquire.gpu.global.{t} {r}, [%a_addr];"),
    ("cta", "ld.relaxed.cta.global.{t} {r}, [%a_addr];"),
    ("cluster", "ld.acquire.cluster.global.{t} {r}, [%a_addr];"),
    ("sys", "ld.relaxed.sys.global.{t} {r}, [%a_addr];"),
    ("mmio", "ld.mmio.relaxed.sys.global.{t} {r}, [%a_addr];"),
)

ld_global = Sweep("memory", "gen_ld_global",
                  "ld of every type from global memory with every cache operator, eviction "
                  "priority, prefetch size, cache hint, .nc and memory-consistency qualifier "
                  "(PTX ISA 9.7.9.8).", [_ROW_OPERAND], setup=_POLICY)
for _t in TYPES:
    for _mod, _text in GLOBAL_LOADS:
        ld_global.forms.append(_load_form(_t, _text))
register(ld_global)

# -- loads from the other state spaces, and .param through a device function ------------


def _const_table() -> str:
    data = b"".join(v.to_bytes(8, "little") for v in ROWS)
    body = ", ".join(str(b) for b in data)
    return f".const .align 32 .b8 ctab[{len(data)}] = {{{body}}};"


def _echo_function(type_name: str) -> str:
    """A device function returning its argument through .param::func loads and stores."""
    width = _BITS[type_name]
    register_type = f"b{max(width, 16)}"
    return (f".func (.param .align 8 .b8 fret[8]) echo_{type_name}"
            f"(.param .align 8 .b8 farg[8])\n{{\n"
            f"    .reg .{register_type} %fx;\n"
            f"    ld.param::func.{type_name} %fx, [farg];\n"
            f"    st.param::func.{type_name} [fret], %fx;\n"
            "    ret;\n}")


def _call_form(type_name: str) -> Form:
    """st.param the argument, call, ld.param the result (the caller's side of 9.7.9.8,
    9.7.9.10 and 9.7.13.3 call)."""
    value = f"%a{max(_BITS[type_name], 16)}"
    code = ("{\n"
            ".param .align 8 .b8 arg0[8];\n"
            ".param .align 8 .b8 ret0[8];\n"
            f"st.param.{type_name} [arg0], {value};\n"
            f"call.uni (ret0), echo_{type_name}, (arg0);\n"
            f"ld.param.{type_name} {reg(type_name, 1)}, [ret0];\n"
            "}\n" + _dump(type_name, 1))
    return Form("x32", code, lambda th: _loaded(_row(th), type_name, 1))


_SPACE_SETUP = f"""{_POLICY}
// the thread's shared and local slots hold a copy of its row; %rd22 its row in ctab
mov.u64 %rd20, sbuf;
mul.wide.u32 %rd1, %gt, 32;
add.s64 %rd20, %rd20, %rd1;
mov.u64 %rd21, lbuf;
mov.u64 %rd22, ctab;
mul.wide.u32 %rd1, %gi, 32;
add.s64 %rd22, %rd22, %rd1;
ld.global.v2.b64 {{%rd1, %rd2}}, [%a_addr];
ld.global.v2.b64 {{%rd3, %rd4}}, [%a_addr+16];
st.shared.v2.b64 [%rd20], {{%rd1, %rd2}};
st.shared.v2.b64 [%rd20+16], {{%rd3, %rd4}};
st.local.v2.b64 [%rd21], {{%rd1, %rd2}};
st.local.v2.b64 [%rd21+16], {{%rd3, %rd4}};"""
_SPACE_LOCALS = (f".shared .align 32 .b8 sbuf[{32 * THREADS}];\n"
                 ".local .align 32 .b8 lbuf[32];")
_PARAM = (".param .align 32 .b8 pblock[32]", {"hex": PARAM_BYTES.hex()})

ld_spaces = Sweep("memory", "gen_ld_spaces",
                  "ld of every type from shared memory (.shared, .shared::cta), local memory, "
                  "constant memory, a kernel parameter (.param, .param::entry), and st.param/"
                  "ld.param/ld.param::func/st.param::func around a call (PTX ISA 9.7.9.8, "
                  "9.7.9.10, 5.1 \"State Spaces\").", [_ROW_OPERAND],
                  decls=_const_table() + "\n\n" + "\n\n".join(_echo_function(t) for t in TYPES),
                  locals=_SPACE_LOCALS, setup=_SPACE_SETUP, extra_params=(_PARAM,))
for _t in TYPES:
    for _text in ("ld.shared.{t} {r}, [%rd20];", "ld.shared::cta.{t} {r}, [%rd20];",
                  "ld.local.{t} {r}, [%rd21];", "ld.local.{t} {r}, [lbuf];",
                  "ld.const.{t} {r}, [%rd22];"):
        ld_spaces.forms.append(_load_form(_t, _text))
    for _text in ("ld.param.{t} {r}, [pblock];", "ld.param::entry.{t} {r}, [pblock+8];"):
        _offset = 8 if "+8" in _text else 0
        ld_spaces.forms.append(_load_form(
            _t, _text, data=lambda th, off=_offset: PARAM_BYTES[off:]))
    ld_spaces.forms.append(_call_form(_t))
register(ld_spaces)

# -- vector loads, and the 256-bit loads the L2 eviction priorities need -----------------

ld_vector = Sweep("memory", "gen_ld_vector",
                  "ld.global.v2/.v4/.v8 of every type they take, and the 256-bit loads "
                  "(.v8 of 32-bit, .v4 of 64-bit types) with .L2::evict_normal/_first/_last "
                  "(PTX ISA 9.7.9.8).", [_ROW_OPERAND], target="sm_100a", version="8.8")
for _t in TYPES:
    _counts = [2, 4] + ([8] if _BITS[_t] == 32 else []) + ([4] if _BITS[_t] == 64 else [])
    for _n in sorted(set(_counts)):
        if _n * _BITS[_t] > 256:
            continue
        ld_vector.forms.append(_load_form(_t, f"ld.global.v{_n}.{{t}} {{r}}, [%a_addr];", _n))
    if _BITS[_t] >= 32:
        _n = 256 // _BITS[_t]
        for _level in ("L2::evict_normal", "L2::evict_first", "L2::evict_last"):
            ld_vector.forms.append(_load_form(
                _t, f"ld.global.{_level}.v{_n}.{{t}} {{r}}, [%a_addr];", _n))
register(ld_vector)

# -- stores -----------------------------------------------------------------------------


def _stored(data: bytes, type_name: str, count: int, fill: int = 0) -> int:
    """A 32-byte slot of ``fill`` bytes after a store of ``count`` elements of ``data``."""
    size = _BITS[type_name] // 8 * count
    return int.from_bytes(data[:size] + bytes([fill]) * (32 - size), "little")


def _store_form(type_name: str, instruction: str, count: int = 1) -> Form:
    """Store the row's first ``count`` elements (loaded first with a plain ld) to the slot."""
    if count == 1:
        value = f"%a{max(_BITS[type_name], 16)}"
        code = instruction.format(t=type_name, v=value, o="{o}")
    else:
        code = (f"ld.global.v{count}.{type_name} {_vector(type_name, count)}, [%a_addr];\n"
                + instruction.format(t=type_name, v=_vector(type_name, count), o="{o}"))
    return Form("x32", code, lambda th: _stored(_row(th), type_name, count))


GLOBAL_STORES = (
    ("global", "st.global.{t} [{o}], {v};"),
    ("", "st.{t} [{o}], {v};"),
    ("wb", "st.global.wb.{t} [{o}], {v};"),
    ("cg", "st.global.cg.{t} [{o}], {v};"),
    ("cs", "st.global.cs.{t} [{o}], {v};"),
    ("wt", "st.global.wt.{t} [{o}], {v};"),
    ("L1::evict_normal", "st.global.L1::evict_normal.{t} [{o}], {v};"),
    ("L1::evict_unchanged", "st.global.L1::evict_unchanged.{t} [{o}], {v};"),
    ("L1::evict_first", "st.global.L1::evict_first.{t} [{o}], {v};"),
    ("L1::evict_last", "st.global.L1::evict_last.{t} [{o}], {v};"),
    ("L1::no_allocate", "st.global.L1::no_allocate.{t} [{o}], {v};"),
    ("L2::cache_hint", "st.global.L2::cache_hint.{t} [{o}], {v}, %rd23;"),
    ("weak", "st.weak.global.{t} [{o}], {v};"),
    ("volatile", "st.volatile.global.{t} [{o}], {v};"),
    ("relaxed", "st.relaxed.gpu.global.{t} [{o}], {v};"),
    ("release", "st.release.gpu.global.{t} [{o}], {v};"),
    ("cta", "st.relaxed.cta.global.{t} [{o}], {v};"),
    ("cluster", "st.release.cluster.global.{t} [{o}], {v};"),
    ("sys", "st.relaxed.sys.global.{t} [{o}], {v};"),
    ("mmio", "st.mmio.relaxed.sys.global.{t} [{o}], {v};"),
)

st_global = Sweep("memory", "gen_st_global",
                  "st of every type to global memory with every cache operator, eviction "
                  "priority, cache hint and memory-consistency qualifier (PTX ISA 9.7.9.10).",
                  [_ROW_OPERAND], setup=_POLICY)
for _t in TYPES:
    for _mod, _text in GLOBAL_STORES:
        st_global.forms.append(_store_form(_t, _text))
register(st_global)


def _slot_store_form(type_name: str, space: str, slot: str) -> Form:
    """Fill the slot, store one value into it, copy the 32 bytes out."""
    value = f"%a{max(_BITS[type_name], 16)}"
    base = space.split("::")[0]
    code = (f"st.{base}.v2.b64 [{slot}], {{%rd30, %rd30}};\n"
            f"st.{base}.v2.b64 [{slot}+16], {{%rd30, %rd30}};\n"
            f"st.{space}.{type_name} [{slot}], {value};\n"
            f"ld.{base}.v2.b64 {{%rd1, %rd2}}, [{slot}];\n"
            f"ld.{base}.v2.b64 {{%rd3, %rd4}}, [{slot}+16];\n"
            "st.global.v2.b64 [{o}], {%rd1, %rd2};\n"
            "st.global.v2.b64 [{o}+16], {%rd3, %rd4};")
    return Form("x32", code, lambda th: _stored(_row(th), type_name, 1, FILL))


st_spaces = Sweep("memory", "gen_st_spaces",
                  "st of every type to shared memory (.shared, .shared::cta) and local memory: "
                  "the slot is filled with 0xa5 first, and only the type's bytes change "
                  "(PTX ISA 9.7.9.10).", [_ROW_OPERAND],
                  locals=_SPACE_LOCALS,
                  setup=f"mov.u64 %rd20, sbuf;\nmul.wide.u32 %rd1, %gt, 32;\n"
                        f"add.s64 %rd20, %rd20, %rd1;\nmov.u64 %rd21, lbuf;\n"
                        f"mov.b64 %rd30, {FILL * 0x0101010101010101:#x};")
for _t in TYPES:
    for _space, _slot in (("shared", "%rd20"), ("shared::cta", "%rd20"), ("local", "%rd21")):
        st_spaces.forms.append(_slot_store_form(_t, _space, _slot))
register(st_spaces)

st_vector = Sweep("memory", "gen_st_vector",
                  "st.global.v2/.v4/.v8 of every type they take, and the 256-bit stores with "
                  ".L2::evict_normal/_first/_last (PTX ISA 9.7.9.10).", [_ROW_OPERAND],
                  target="sm_100a", version="8.8")
for _t in TYPES:
    _counts = [2, 4] + ([8] if _BITS[_t] == 32 else []) + ([4] if _BITS[_t] == 64 else [])
    for _n in sorted(set(_counts)):
        st_vector.forms.append(_store_form(_t, f"st.global.v{_n}.{{t}} [{{o}}], {{v}};", _n))
    if _BITS[_t] >= 32:
        _n = 256 // _BITS[_t]
        for _level in ("L2::evict_normal", "L2::evict_first", "L2::evict_last"):
            st_vector.forms.append(_store_form(
                _t, f"st.global.{_level}.v{_n}.{{t}} [{{o}}], {{v}};", _n))
register(st_vector)

# -- ldu --------------------------------------------------------------------------------

ldu = Sweep("memory", "gen_ldu",
            "ldu of every type, scalar and .v2/.v4 (up to 128 bits), with and without .global "
            "(PTX ISA 9.7.9.9).", [_ROW_OPERAND])
for _t in TYPES:
    ldu.forms.append(_load_form(_t, "ldu.global.{t} {r}, [%a_addr];"))
    ldu.forms.append(_load_form(_t, "ldu.{t} {r}, [%a_addr];"))
    for _n in (2, 4):
        if _n * _BITS[_t] <= 128:
            ldu.forms.append(_load_form(_t, f"ldu.global.v{_n}.{{t}} {{r}}, [%a_addr];", _n))
register(ldu)

# -- cp.async ---------------------------------------------------------------------------

_ASYNC_SETUP = ("createpolicy.fractional.L2::evict_last.b64 %rd23, 1.0;\n"
                "mov.u64 %rd20, sbuf;\nmul.wide.u32 %rd1, %gt, 32;\nadd.s64 %rd20, %rd20, %rd1;")


def _copy_form(instruction: str, size: int, wait: str = "cp.async.wait_group 0;") -> Form:
    """Copy the row's first ``size`` bytes to shared memory asynchronously, wait, and store
    the slot's 32 bytes (zeroed first) to the output."""
    code = ("st.shared.v2.b64 [%rd20], {%rd30, %rd30};\n"
            "st.shared.v2.b64 [%rd20+16], {%rd30, %rd30};\n"
            f"{instruction}\ncp.async.commit_group;\n{wait}\n"
            "ld.shared.v2.b64 {%rd1, %rd2}, [%rd20];\nld.shared.v2.b64 {%rd3, %rd4}, [%rd20+16];\n"
            "st.global.v2.b64 [{o}], {%rd1, %rd2};\nst.global.v2.b64 [{o}+16], {%rd3, %rd4};")
    return Form("x32", code, lambda th: _stored(_row(th), "b8", size))


cp_async = Sweep("memory", "gen_cp_async",
                 "cp.async with .ca and .cg, every prefetch size and a cache hint, waited for "
                 "with cp.async.wait_group and cp.async.wait_all (PTX ISA 9.7.9.25.3).",
                 [_ROW_OPERAND], locals=f".shared .align 32 .b8 sbuf[{32 * THREADS}];",
                 setup=_ASYNC_SETUP + "\nmov.b64 %rd30, 0;")
cp_async.forms += [
    _copy_form("cp.async.ca.shared::cta.global.L2::64B [%rd20], [%a_addr], 4;", 4),
    _copy_form("cp.async.ca.shared.global.L2::128B [%rd20], [%a_addr], 8;", 8),
    _copy_form("cp.async.cg.shared.global.L2::256B [%rd20], [%a_addr], 16;", 16),
    _copy_form("cp.async.cg.shared.global.L2::cache_hint [%rd20], [%a_addr], 16, %rd23;", 16),
    _copy_form("cp.async.ca.shared::cta.global.L2::cache_hint.L2::128B [%rd20], [%a_addr], 16, "
               "%rd23;", 16, "cp.async.wait_all;"),
]
register(cp_async)

bulk = Sweep("memory", "gen_cp_async_bulk",
             "cp.async.bulk from shared to global memory with .bulk_group, committed and "
             "waited for with .read and in full; fence.proxy.async makes the shared stores "
             "visible to it (PTX ISA 9.7.9.25.4.1, 9.7.9.25.4.2, 9.7.13.4).",
             [_ROW_OPERAND], locals=f".shared .align 32 .b8 sbuf[{32 * THREADS}];",
             setup=_ASYNC_SETUP)
bulk.forms.append(Form(
    "x32", "ld.global.v2.b64 {%rd1, %rd2}, [%a_addr];\nld.global.v2.b64 {%rd3, %rd4}, "
           "[%a_addr+16];\nst.shared.v2.b64 [%rd20], {%rd1, %rd2};\n"
           "st.shared.v2.b64 [%rd20+16], {%rd3, %rd4};\nfence.proxy.async.shared::cta;\n"
           "cp.async.bulk.global.shared::cta.bulk_group [{o}], [%rd20], 32;\n"
           "cp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;\n"
           "cp.async.bulk.wait_group 0;", lambda th: _stored(_row(th), "b8", 32)))
register(bulk)
