"""The oracle's taint follows values through calls (kernelcheck/emu/taint.py).

An `atom.exch` of a value loaded through a generic address is not idempotent in effect: the
address may reach shared memory, which holds another value when the launch runs again (a
plain global load is a read the oracle records, and does not taint). A device function's
parameter is tainted only if a call passes it a tainted value, and a value a call returns is
tainted if the callee's is.
"""

from __future__ import annotations

from kernelcheck.emu import Emulator
from kernelcheck.emu.taint import memory_tainted, module_taint
from kernelcheck.ptx.parser import parse_ptx

HEADER = ".version 8.8\n.target sm_80\n.address_size 64\n"

CALLS = HEADER + """
.func (.param .b32 rv) first(.param .b64 p)
{
  .reg .b64 %rd<2>; .reg .b32 %r<2>;
  ld.param.b64 %rd1, [p];
  ld.u32 %r1, [%rd1];
  st.param.b32 [rv], %r1;
  ret;
}
.func exch(.param .b64 q, .param .b32 v)
{
  .reg .b64 %rd<2>; .reg .b32 %r<3>;
  ld.param.b64 %rd1, [q];
  ld.param.b32 %r1, [v];
  atom.global.exch.b32 %r2, [%rd1], %r1;
  ret;
}
.visible .entry loaded(.param .u64 src, .param .u64 dst)
{
  .reg .b64 %rd<3>; .reg .b32 %r<3>;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  { .param .b64 a; .param .b32 r; st.param.b64 [a], %rd1;
    call.uni (r), first, (a); ld.param.b32 %r1, [r]; }
  atom.global.exch.b32 %r2, [%rd2], %r1;
  ret;
}
.visible .entry constant(.param .u64 dst, .param .u32 v)
{
  .reg .b64 %rd<2>; .reg .b32 %r<2>;
  ld.param.u64 %rd1, [dst];
  ld.param.u32 %r1, [v];
  { .param .b64 a; .param .b32 b; st.param.b64 [a], %rd1; st.param.b32 [b], %r1;
    call.uni exch, (a, b); }
  ret;
}
"""


def test_a_returned_load_is_tainted_and_a_passed_parameter_is_not():
    module = parse_ptx(CALLS)
    taint = module_taint(module)
    assert "%r1" in taint["loaded"]
    assert "%r1" in taint["first"]
    assert "%r1" not in taint["exch"]
    # Seen alone, a device function's parameters may carry anything.
    assert "%r1" in memory_tainted(module.get_function("exch"))


def _oracle(module, kernel, params):
    emu = Emulator()
    buffers = [emu.alloc(64) for _ in range(2)]
    values = [buffers[k] if p == "ptr" else p for k, p in enumerate(params)]
    result = emu.launch(emu.load_module(module), kernel, grid=(1,), block=(4,),
                        params=values, trace=True)
    return result.trace.verdict


def test_exch_of_a_value_a_call_loaded_is_not_idempotent_for_the_oracle():
    assert _oracle(parse_ptx(CALLS), "loaded", ["ptr", "ptr"]) == "not_idempotent"


def test_exch_of_a_kernel_parameter_inside_a_callee_is_idempotent_for_the_oracle():
    assert _oracle(parse_ptx(CALLS), "constant", ["ptr", 7]) == "idempotent"


VECTOR_CALLS = HEADER + """
.func (.reg .v2 .b32 r) swap(.reg .v2 .b32 a)
{
  mov.b32 r.x, a.y;
  mov.b32 r.y, a.x;
  ret;
}
.func lonely(.reg .v2 .b32 a)
{
  .reg .b32 %r<2>;
  add.u32 %r1, a.x, 1;
  ret;
}
.visible .entry k(.param .u64 src)
{
  .reg .b64 %rd<2>; .reg .v2 .b32 %v, %w;
  ld.param.u64 %rd1, [src];
  ld.u32 %v.x, [%rd1];
  mov.b32 %v.y, 7;
  call.uni (%w), swap, (%v);
  ret;
}
"""


def test_taint_follows_vector_registers_element_by_element():
    taint = module_taint(parse_ptx(VECTOR_CALLS))
    # %v.x (loaded) goes to a.x, then r.y, then back to the caller's %w.y.
    assert {"a.x", "r.y"} <= taint["swap"] and not {"a.y", "r.x"} & taint["swap"]
    assert {"%v.x", "%w.y"} <= taint["k"] and not {"%v.y", "%w.x"} & taint["k"]
    # No call reaches lonely: its vector parameter may hold anything, element by element.
    assert {"a.x", "a.y", "%r1"} <= taint["lonely"]
    # Seen alone, a device function's .reg parameters may carry anything too.
    assert {"a.x", "a.y", "r.x", "r.y"} <= memory_tainted(
        parse_ptx(VECTOR_CALLS).get_function("swap"))
