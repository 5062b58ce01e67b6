"""The dispatch table: what dispatch_entries() lists is what the compile step accepts, and
the compile step turns every other form, and operands of the wrong shape, into
UnsupportedFeature (never a crash)."""

from __future__ import annotations

import pytest

import kernelcheck.emu
from kernelcheck.emu import Emulator, dispatch_entries
from kernelcheck.emu.dispatch import FORMS
from kernelcheck.errors import KernelcheckError, UnsupportedFeature
from kernelcheck.ptx.opcodes import KNOWN_OPCODES
from tests.emu.ptx_kernels import HEAD, REGS


def _load(line: str):
    ptx = HEAD + f".visible .entry k(.param .u64 out) {{ {REGS}\n{line}\nret; }}"
    return Emulator().load_module(ptx)


def test_entries_are_sorted_unique_triples():
    entries = dispatch_entries()
    assert list(entries) == sorted(set(entries))
    assert all(len(e) == 3 and all(isinstance(x, str) for x in e) for e in entries)
    assert ("add", "s32", "") in entries and ("add", "s32", "sat") in entries
    assert ("cvt", "f16x2.f32", "relu") in entries
    assert ("mma", "f32.f16.f16.f32", "m16n8k16") in entries
    assert ("cp", "", "async") in entries
    assert ("add", "f32", "cc") not in entries


def test_entries_come_from_the_declared_forms():
    opcodes = {e[0] for e in dispatch_entries()}
    assert opcodes == set(FORMS)
    assert opcodes <= KNOWN_OPCODES


@pytest.mark.parametrize("line,needle", [
    ("add.cc.f32 %f1, %f2, %f3;", "modifier .cc"),
    ("add.u16x2 %r1, %r2, %r3;", "type u16x2"),
    ("bar.arrive 1, 64;", "modifier .arrive"),
    ("mbarrier.init.shared.b64 [%rd1], 32;", "opcode mbarrier"),
    ("cvt.rs.f16x2.f32 %r1, %f1, %f2, %r3;", "modifier .rs"),
    ("shfl.sync.b32 %r1, %r2, 1, 31, -1;", "needed"),
    ("min.f32 %f1, %f2, %f3, %f4;", "3 inputs"),
])
def test_undeclared_forms_are_unsupported_naming_what(line, needle):
    with pytest.raises(UnsupportedFeature, match=needle.replace(".", r"\.")) as err:
        _load(line)
    assert "instruction" in str(err.value)


_OPERAND_SHAPES = ["", "%r1", "%r1, %r2", "%r1, %r2, %r3", "%r1, %r2, %r3, %r4",
                   "{%r1, %r2}, [%rd1]", "[%rd1], %r1", "%p1, %r2, %r3", "%rd1, [%rd2]",
                   "{%r1, %r2}, {%r3}, {%r4}, {%r5}", "[%rd1], [%rd2], 16", "%r1, [%rd1], %r2"]


def _one_form(opcode):
    f = FORMS[opcode][0]
    ty = sorted(f.types)[0]
    mods = [sorted(g)[0] for g in f.required]
    return ".".join([opcode, *dict.fromkeys(mods), *([ty] if ty else [])])


@pytest.mark.parametrize("opcode", sorted(FORMS))
def test_wrong_operand_shapes_never_crash(opcode):
    from kernelcheck.errors import PtxSyntaxError
    head = _one_form(opcode)
    for operands in _OPERAND_SHAPES:
        line = f"{head} {operands};"
        try:
            _load(line)
        except PtxSyntaxError:
            continue
        except KernelcheckError as err:
            assert isinstance(err, UnsupportedFeature), (line, err)


def test_the_package_exports_dispatch_entries():
    assert kernelcheck.emu.dispatch_entries is dispatch_entries


@pytest.mark.parametrize("line,needle", [
    # a vector special register without its component, and ones the emulator gives no value
    ("mov.u32 %r1, %tid;", "special register %tid"),
    ("mov.u32 %r1, %envreg3;", "special register %envreg3"),
    ("mov.u32 %r1, %clock_hi;", "special register %clock_hi"),
    # a guard that is not a predicate register
    ("@%r1 add.u32 %r2, %r2, 1;", "guard %r1"),
])
def test_what_cannot_run_is_unsupported_at_load_with_its_place(line, needle):
    ptx = HEAD + f".visible .entry k(.param .u64 out) {{ {REGS}\n{line}\nret; }}"
    with pytest.raises(UnsupportedFeature, match=needle.replace(".", r"\.")) as err:
        Emulator().load_module(ptx)
    assert err.value.where.startswith("k: instruction 0")


def test_a_register_type_without_storage_is_unsupported_at_its_function():
    # The PTX front end has no such declaration; another front end (or a program) may.
    from dataclasses import replace

    from kernelcheck.ir.nodes import RegisterDecl
    from kernelcheck.ptx.parser import parse_ptx
    module = parse_ptx(HEAD + ".visible .entry k() { .reg .b32 %n; ret; }")
    function = module.functions[0]
    body = tuple(replace(s, type="u4") if type(s) is RegisterDecl else s for s in function.body)
    odd = replace(module, items=tuple(replace(function, body=body) if i is function else i
                                      for i in module.items))
    with pytest.raises(UnsupportedFeature, match=r"register %n of type \.u4") as err:
        Emulator().load_module(odd)
    assert err.value.where.startswith("k (PTX line")


def test_a_bulk_copy_of_a_size_the_isa_leaves_undefined_is_unsupported_where_it_runs():
    ptx = HEAD + (".shared .align 16 .b8 smem[64];\n.visible .entry k(.param .u64 out) {"
                  f" {REGS} ld.param.u64 %rd1, [out]; mov.u32 %r1, 8;"
                  " cp.async.bulk.global.shared::cta.bulk_group [%rd1], [smem], %r1; ret; }")
    emu = Emulator()
    program = emu.load_module(ptx)
    with pytest.raises(UnsupportedFeature, match="multiple of 16") as err:
        emu.launch(program, "k", grid=(1,), block=(1,), params=[emu.alloc(64)])
    assert "instruction 2" in err.value.where
