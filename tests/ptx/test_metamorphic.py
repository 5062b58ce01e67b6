"""Meaning-keeping PTX rewrites change no verdict and no emulated result (a fast subset).

The full run over every fixture file is `python bench/soundness.py --metamorphic`.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernelcheck.analysis.provider import verdict_provider
from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.emu.soundness import PLACEMENTS, check_metamorphic, draw_instance
from kernelcheck.ir.nodes import RegisterDecl, ScopeOpen
from kernelcheck.ptx.metamorphic import TRANSFORMS, transform_module, transform_ptx
from kernelcheck.ptx.parser import parse_ptx, parse_ptx_file
from kernelcheck.ptx.printer import print_ptx
from tests.conftest import FIXTURES
from tests.emu.fixture_data import entry_name, expected, ptx_files

FILES = ["sm_80/elementwise.ptx", "sm_80/inplace.ptx", "sm_90/asserts.ptx",
         "sm_80/structs_calls.ptx", "nvrtc/atomics.ptx"]


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@pytest.mark.parametrize("path", FILES)
def test_transform_gives_ptx_that_parses_and_round_trips(path, name):
    module = parse_ptx_file(FIXTURES / "ptx" / path)
    rewritten = transform_module(module, name, seed=5)
    assert parse_ptx(print_ptx(rewritten)) == rewritten
    assert {k.name for k in rewritten.kernels} == {k.name for k in module.kernels}


def test_rename_replaces_every_register_name():
    module = parse_ptx_file(FIXTURES / "ptx/sm_80/elementwise.ptx")
    rewritten = transform_module(module, "rename", seed=2)
    for before, after in zip(module.kernels, rewritten.kernels, strict=True):
        assert not set(before.register_types) & set(after.register_types)
        assert len(before.register_types) == len(after.register_types)
        assert any(not n.startswith("%") for n in after.register_types)


def test_blocks_add_shadowing_declarations():
    module = parse_ptx_file(FIXTURES / "ptx/sm_80/elementwise.ptx")
    rewritten = transform_module(module, "blocks", seed=1)
    kernel = rewritten.get_function("saxpy")
    assert any(type(s) is ScopeOpen for s in kernel.body)
    renamed = [n for d in kernel.register_decls for n in d.names if "$" in n]
    assert renamed, "some block declaration shadows an outer register"
    assert [type(s) for s in kernel.body].count(RegisterDecl) > len(
        module.get_function("saxpy").register_decls)


def test_outline_moves_code_into_functions():
    text = (FIXTURES / "ptx/sm_80/inplace.ptx").read_text()
    rewritten = parse_ptx(transform_ptx(text, "outline", seed=0))
    outlined = [f for f in rewritten.functions if "$outlined" in f.name]
    assert outlined and all(not f.is_kernel for f in outlined)
    calls = [i for k in rewritten.kernels for i in k.instructions if i.opcode == "call"]
    assert len(calls) >= len(outlined)


def test_unknown_transform_is_named():
    with pytest.raises(ValueError, match="no transform 'shuffle'"):
        transform_ptx(".version 8.0\n.target sm_80\n.address_size 64\n", "shuffle")


def _analyse(names):
    def analyse(module):
        provider = verdict_provider(module, names)
        classes: dict = {}

        def class_of(entry):
            if entry not in classes:
                classes[entry] = analyze_kernel(module, module.get_function(entry)).kernel_class
            return classes[entry]

        def verdict_of(entry, inst, allocations):
            return provider(entry, inst.params, inst.grid, inst.block,
                            allocations=allocations or None)

        return class_of, verdict_of

    return analyse


@pytest.mark.parametrize("path", FILES)
def test_no_verdict_or_result_changes(path):
    path = FIXTURES / "ptx" / path
    module = parse_ptx_file(path)
    kernels = [k for k in sorted(expected()) if path in ptx_files(k)]
    assert kernels
    names = {entry_name(path, k): expected()[k]["param_names"] for k in kernels}
    rng = np.random.default_rng(7)
    instances = [draw_instance(k, expected()[k]["instances"][0], rng, PLACEMENTS[j])
                 for k in kernels for j in (0, 2)]
    report = check_metamorphic(
        instances, module_for=lambda k: module, names_for=lambda k: expected()[k][
            "param_names"], entry_for=lambda k: entry_name(path, k), analyse=_analyse(names),
        seeds=(0, 1))
    assert report.changes == ()
    ran = len(instances) - report.skipped
    assert report.checks["memory"] == ran * len(TRANSFORMS) * 2
    assert report.checks["class"] == ran * len(TRANSFORMS) * 2
