"""LaunchCheck format 4 (tables of pointers and sizes in the parameter buffer: ``PARAMX``
records and accesses expanded block by block): the C evaluator of the shim and
:func:`kernelcheck.launch.evaluate.evaluate` give the same verdict and rule on drawn
instances of fixtures/src/tensor_lists.cu, whose kernels take such tables by value."""

from __future__ import annotations

import struct
from functools import cache

import numpy as np
import pytest

from kernelcheck.analysis.summary import analyze_module
from kernelcheck.launch.evaluate import evaluate
from kernelcheck.ptx.parser import parse_ptx_file
from tests.shim.conftest import FIXTURES

BASE = 0x7F0000000000
#: Entries of the tables of fixtures/src/tensor_lists.cu: (lists, tensors per list).
_LISTS = {"ILi2E": (2, 8), "ILi4E": (4, 6)}
_BLOCKS = 32  # kMaxBlocks


@pytest.fixture(autouse=True)
def _built(libraries):
    return libraries


@cache
def _checks(flavour: str):
    module = parse_ptx_file(FIXTURES / "ptx" / flavour / "tensor_lists.ptx")
    return {s.name: (module.get_function(s.name), s.launch_check)
            for s in analyze_module(module)}


def _pointer(rng, slot_bytes: int) -> int:
    """A pointer into one of a few regions, so that drawn tables alias, overlap and keep
    apart in turn (one region per ``slot_bytes``, shifted by a few elements)."""
    region = int(rng.integers(0, 5))
    shift = 4 * int(rng.integers(0, 3)) * int(rng.integers(0, 2)) * 256
    return BASE + region * slot_bytes + shift


def _tensor_list(rng, name: str, buf: bytearray, grid) -> None:
    lists, tensors = _LISTS[next(k for k in _LISTS if k in name)]
    numel_at = 8 * lists * tensors
    to_tensor = numel_at + 8 * tensors
    to_chunk = to_tensor + _BLOCKS
    used = int(rng.integers(1, tensors + 1))
    for t in range(tensors):
        for k in range(lists):
            struct.pack_into("<Q", buf, 8 * (k * tensors + t), _pointer(rng, 8192))
        struct.pack_into("<q", buf, numel_at + 8 * t, int(rng.integers(0, 1500)))
    for b in range(_BLOCKS):
        tensor = int(rng.integers(0, used)) if rng.random() > 0.03 else 200
        chunk = int(rng.integers(0, 3)) if rng.random() > 0.03 else -1
        buf[to_tensor + b] = tensor
        struct.pack_into("<i", buf, to_chunk + 4 * b, chunk)
    if rng.random() < 0.5:  # same pointers in every list: in place
        for t in range(tensors):
            first = buf[8 * t:8 * t + 8]
            for k in range(1, lists):
                buf[8 * (k * tensors + t):8 * (k * tensors + t) + 8] = first


def _draw(rng, name: str, function):
    buf = bytearray(function.param_size)
    grid = [int(rng.integers(1, 9)), 1, 1]
    block = [int(rng.choice([32, 64, 128])), 1, 1]
    if "apply_to_lists" in name:
        _tensor_list(rng, name, buf, grid)
        for p in function.params[2:]:
            struct.pack_into("<f", buf, p.offset, float(rng.uniform(0.1, 1)))
    elif name == "gemm_batched_pointers":
        for k in range(12):
            struct.pack_into("<Q", buf, 8 * k, _pointer(rng, 1024))
        for k in range(6):
            struct.pack_into("<i", buf, 96 + 4 * k, int(rng.integers(0, 12)))
        grid = [1, int(rng.integers(1, 3)), int(rng.integers(1, 6))]
        block = [int(rng.choice([4, 8])), int(rng.choice([4, 8])), 1]
    elif name == "copy_tasks":
        for k in range(4):
            struct.pack_into("<QQi", buf, 24 * k, _pointer(rng, 2048), _pointer(rng, 2048),
                             int(rng.integers(0, 600)))
        grid[1] = int(rng.integers(1, 6))  # 5: past the table, outside the buffer
    else:
        struct.pack_into("<QQQfi", buf, 0, _pointer(rng, 4096), _pointer(rng, 4096),
                         _pointer(rng, 4096), 0.5, int(rng.integers(0, 1200)))
    return bytes(buf), tuple(grid), tuple(block)


def _allocations():
    """Allocations around every region a drawn pointer may point into."""
    return [(BASE + k * 1024, 1024) for k in range(48)]


@pytest.mark.parametrize("flavour", ["sm_90", "sm_80"])
def test_c_and_python_agree_on_drawn_tables(flavour):
    from kernelcheck.shim.native import native_evaluate

    rng = np.random.default_rng(4 if flavour == "sm_90" else 5)
    seen: dict[str, set] = {}
    for name, (function, check) in sorted(_checks(flavour).items()):
        blob = check.to_bytes()
        for _ in range(40):
            params, grid, block = _draw(rng, name, function)
            allocations = _allocations() if rng.random() < 0.3 else None
            python = evaluate(check, params, grid, block, allocations)
            want = (python.verdict, python.decided_by)
            assert native_evaluate(blob, params, grid, block, allocations) == want, (
                name, params.hex(), grid, block)
            if allocations is None:
                assert native_evaluate(blob, params, grid, block, path="general") == want
                fast = native_evaluate(blob, params, grid, block, path="fast")
                assert fast in (None, want)
            seen.setdefault(name, set()).add(python.verdict)
    # The drawn tables reach both sides of every conditional kernel, and the block tables
    # that leave the parameter buffer give not proven.
    for name in _checks(flavour):
        if name.startswith("_Z14apply_to_listsI14TensorListMetaILi2EE13"):
            assert seen[name] == {"idempotent", "not_idempotent", "not_proven"}
        elif name in ("gemm_batched_pointers", "copy_tasks", "axpy_struct_args"):
            assert {"idempotent", "not_idempotent"} <= seen[name], name


def test_a_table_entry_outside_the_parameter_buffer_is_not_proven():
    from kernelcheck.shim.native import native_evaluate

    function, check = _checks("sm_90")["copy_tasks"]
    buf = bytearray(function.param_size)
    for k in range(4):
        struct.pack_into("<QQi", buf, 24 * k, BASE + 0x10000 * k, BASE + 0x10000 * k + 0x8000,
                         256)
    params = bytes(buf)
    inside = evaluate(check, params, (2, 4, 1), (128, 1, 1))
    assert (inside.verdict, inside.decided_by) == ("idempotent", "disjoint")
    # Blocks with y = 4 read task[4], past the 96 bytes of the buffer.
    past = evaluate(check, params, (2, 5, 1), (128, 1, 1))
    assert past.verdict == "not_proven"
    blob = check.to_bytes()
    assert native_evaluate(blob, params, (2, 4, 1), (128, 1, 1)) == ("idempotent", "disjoint")
    assert native_evaluate(blob, params, (2, 5, 1), (128, 1, 1)) == (past.verdict,
                                                                     past.decided_by)
