"""Device-side assertions on the emulator: a holding ``assert`` lets the launch compute its
results; a failing one stops the launch with a device-side assertion error naming the thread,
the block and the assertion, as ``cudaErrorAssert`` does on hardware."""

from __future__ import annotations

import numpy as np
import pytest

from kernelcheck.emu import Emulator, LaunchError
from kernelcheck.emu.executor import DeviceAssertionError
from kernelcheck.ptx.parser import parse_ptx, parse_ptx_file
from tests.emu.fixture_data import FIXTURES

FLAVOURS = ("sm_80", "sm_90", "nvrtc", "nvrtc12")
GATHER = "void gather_checked(float *, const float *, const int *, int, int)"


def _line_of(text: str) -> int:
    """The line of fixtures/src/asserts.cu holding ``text``."""
    lines = (FIXTURES / "src" / "asserts.cu").read_text().splitlines()
    return next(k for k, line in enumerate(lines, 1) if text in line)


def _program(flavour: str):
    emu = Emulator()
    return emu, emu.load_module(parse_ptx_file(FIXTURES / "ptx" / flavour / "asserts.ptx"))


def _gather(flavour: str, indices: np.ndarray, m: int):
    """Run gather_checked over ``indices`` (2 blocks of 32); returns (emu, out, src, outcome)."""
    emu, program = _program(flavour)
    n = len(indices)
    out, src, idx = emu.alloc(4 * n), emu.alloc(4 * m), emu.alloc(4 * n)
    emu.memset(out, 0xFF, 4 * n)
    emu.copy_htod(src, np.arange(m, dtype=np.float32) * 0.5)
    emu.copy_htod(idx, indices.astype(np.int32))
    try:
        outcome = emu.launch(program, "gather_checked", grid=(2,), block=(32,),
                             params=[out, src, idx, n, m])
    except DeviceAssertionError as err:
        outcome = err
    return emu, out, src, outcome


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_holding_assertion_gathers(flavour):
    indices = np.random.default_rng(3).integers(0, 16, size=64)
    emu, out, _, result = _gather(flavour, indices, 16)
    assert not isinstance(result, Exception) and result.completed
    got = emu.copy_dtoh(out, 4 * 64, np.float32)
    np.testing.assert_array_equal(got, indices.astype(np.float32) * 0.5)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_failing_assertion_stops_the_launch_and_names_the_thread(flavour):
    indices = np.arange(64) % 16
    indices[37], indices[40] = 16, -1
    emu, out, _, err = _gather(flavour, indices, 16)
    assert isinstance(err, DeviceAssertionError) and isinstance(err, LaunchError)
    assert (err.block, err.thread, err.failing) == ((1, 0, 0), (5, 0, 0), 2)
    line = _line_of("assert(j >= 0 && j < m)")
    assert (err.message, err.file, err.line) == ("j >= 0 && j < m", "asserts.cu", line)
    assert err.function == GATHER and err.kernel == "gather_checked"
    text = str(err)
    assert text.startswith("device-side assertion failed in gather_checked")
    assert "block (1, 0, 0), thread (5, 0, 0)" in text and "`j >= 0 && j < m`" in text
    assert f"asserts.cu:{line}" in text and "call" in err.location
    # The failing thread never reaches its store.
    got = emu.copy_dtoh(out, 4 * 64, np.uint32)
    assert got[37] == got[40] == 0xFFFFFFFF


@pytest.mark.parametrize("flavour", ("sm_80", "nvrtc"))
def test_launch_wide_assertion(flavour):
    emu, program = _program(flavour)
    out, data = emu.alloc(4 * 96), emu.alloc(4 * 96)
    emu.copy_htod(data, np.arange(96, dtype=np.float32))
    emu.launch(program, "scale_checked", grid=(3,), block=(32,), params=[out, data, 2.0, 96])
    np.testing.assert_array_equal(emu.copy_dtoh(out, 4 * 96, np.float32),
                                  2 * np.arange(96, dtype=np.float32))
    with pytest.raises(DeviceAssertionError) as caught:
        emu.launch(program, "scale_checked", grid=(2,), block=(32,),
                   params=[out, data, 2.0, 96])
    err = caught.value
    assert (err.block, err.thread, err.failing) == ((0, 0, 0), (0, 0, 0), 64)
    assert err.message == "n <= (int)(gridDim.x * blockDim.x)"
    assert err.line == _line_of("assert(n <= (int)")


def test_assertion_on_loaded_data():
    emu, program = _program("sm_90")
    x = emu.alloc(4 * 40)
    values = np.linspace(0, 1, 40, dtype=np.float32)
    emu.copy_htod(x, values)
    emu.launch(program, "increment_checked", grid=(2,), block=(32,), params=[x, 40])
    np.testing.assert_allclose(emu.copy_dtoh(x, 160, np.float32), values + 1)
    values[33] = -2.0
    emu.copy_htod(x, values)
    with pytest.raises(DeviceAssertionError, match=r"thread \(1, 0, 0\).*`v >= 0.0f`"):
        emu.launch(program, "increment_checked", grid=(2,), block=(32,), params=[x, 40])


_CALLER = """
.version 8.0
.target sm_80
.address_size 64
{callee}
.visible .entry check_tid(.param .u64 out, .param .u32 limit)
{{
  .reg .pred %p<2>; .reg .b32 %r<3>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [limit];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p1, %r2, %r1;
  {{
  .param .b64 param0; st.param.b64 [param0+0], 0;
  .param .b64 param1; st.param.b64 [param1+0], 8;
  .param .b32 param2; st.param.b32 [param2+0], 7;
  .param .b64 param3; st.param.b64 [param3+0], 0;
  .param .b64 param4; st.param.b64 [param4+0], 1;
  @%p1 call.uni __assertfail, (param0, param1, param2, param3, param4);
  }}
  mul.wide.u32 %rd2, %r2, 4; add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}}
"""
_EXTERN = """.extern .func __assertfail(.param .b64 a, .param .b64 b, .param .b32 c,
    .param .b64 d, .param .b64 e);"""
_DEFINED = """.visible .func __assertfail(.param .b64 a, .param .b64 b, .param .b32 c,
    .param .b64 d, .param .b64 e)
{
  ret;
}"""


def test_guarded_call_with_unreadable_strings():
    emu = Emulator()
    program = emu.load_module(_CALLER.format(callee=_EXTERN))
    out = emu.alloc(4 * 32)
    emu.launch(program, "check_tid", grid=(1,), block=(32,), params=[out, 32])
    np.testing.assert_array_equal(emu.copy_dtoh(out, 128, np.uint32), np.arange(32))
    with pytest.raises(DeviceAssertionError) as caught:
        emu.launch(program, "check_tid", grid=(1,), block=(32,), params=[out, 5])
    err = caught.value
    assert (err.thread, err.failing, err.line) == ((5, 0, 0), 27, 7)
    assert err.message is err.file is err.function is None
    assert "Assertion" not in str(err) and "thread (5, 0, 0)" in str(err)


def test_a_module_that_defines_assertfail_calls_it():
    emu = Emulator()
    module = parse_ptx(_CALLER.format(callee=_DEFINED))
    program = emu.load_module(module)
    out = emu.alloc(4 * 32)
    result = emu.launch(program, "check_tid", grid=(1,), block=(32,), params=[out, 5])
    assert result.completed
    np.testing.assert_array_equal(emu.copy_dtoh(out, 128, np.uint32), np.arange(32))


def test_trap_is_not_an_assertion():
    emu = Emulator()
    program = emu.load_module(_CALLER.format(callee=_DEFINED).replace(
        "@%p1 call.uni __assertfail, (param0, param1, param2, param3, param4);", "@%p1 trap;"))
    out = emu.alloc(4 * 32)
    with pytest.raises(LaunchError, match="trap in check_tid") as caught:
        emu.launch(program, "check_tid", grid=(1,), block=(32,), params=[out, 5])
    assert not isinstance(caught.value, DeviceAssertionError)
