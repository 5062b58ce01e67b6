"""Dynamic profiles, instruction groups and fault models on the emulator."""

from __future__ import annotations

import numpy as np
import pytest

from kernelcheck.emu.executor import BitFlip
from kernelcheck.emu.profile import profile_launch
from kernelcheck.errors import KernelcheckError
from kernelcheck.faults.campaign import Campaign
from kernelcheck.faults.groups import group_sites
from kernelcheck.faults.models import Fault, draw_fault, fault_launch
from kernelcheck.faults.targets import load_target


def test_profile_counts_match_the_emulator_and_bitflip_occurrences():
    t = load_target("scale_gridstride", 0, disjoint=True)
    profile, result = profile_launch(t.emu, t.program, t.entry, **t.launch_kwargs())
    # Plain instructions only: branches and returns are executed but not counted.
    assert 0 < profile.total() <= result.thread_instructions
    keys = group_sites(t.program)["G_GPPR"]     # instructions with a destination to flip
    rng = np.random.default_rng(3)
    for _ in range(10):
        site = profile.locate(int(rng.integers(profile.total(keys))), keys)
        t.reset()
        try:
            flipped = t.emu.launch(t.program, t.entry, inject=BitFlip(
                site.instruction, site.ctaid, site.tid, 1, site.occurrence, site.function),
                **t.launch_kwargs())
        except KernelcheckError:
            continue  # the flip happened and broke an address
        assert flipped.fault_injected
        t.reset()
        past = t.emu.launch(t.program, t.entry, inject=BitFlip(
            site.instruction, site.ctaid, site.tid, 1,
            profile.count(site.function, site.instruction) + 1, site.function),
            **t.launch_kwargs())
        assert not past.fault_injected or site.occurrence < profile.count(
            site.function, site.instruction)


def test_groups_partition_the_destinations():
    t = load_target("_Z5axpbyIdEvPT_PKS0_S3_S0_S0_i", 0, disjoint=True)
    sites = group_sites(t.program)
    assert sites["G_FP64"] and sites["G_LD"] and sites["G_PR"]
    assert sites["G_GPPR"] == sites["G_GP"] | sites["G_PR"]
    assert sites["G_GP"] == sites["G_FP64"] | sites["G_FP32"] | sites["G_LD"] | \
        sites["G_OTHERS"]
    assert not sites["G_GPPR"] & sites["G_NODEST"]


def test_store_fault_corrupts_the_stored_value_only():
    t = load_target("fill_f32", 0, disjoint=True)
    t.emu.launch(t.program, t.entry, **t.launch_kwargs())
    golden = t.emu.memory.snapshot()
    st = next(i.index for i in t.program.function("fill_f32").function.instructions
              if i.opcode == "st")
    t.reset()
    fault = Fault("store", "G_NODEST", "fill_f32", st, (0, 0, 0), (5, 0, 0), 1, 0, 1)
    fault_launch(fault)(t.emu, t.program, t.entry, dict(t.launch_kwargs()))
    out = t.values[0]
    got = t.emu.copy_dtoh(out, 4 * 16, np.uint32)
    want = np.frombuffer(golden[min(golden)], np.uint32)[:16] if min(golden) == out else None
    assert want is not None
    assert list(np.flatnonzero(got != want)) == [5] and got[5] ^ want[5] == 1


@pytest.mark.parametrize("model", ["single", "double", "store", "mem-before", "mem-after",
                                   "launch-fail"])
def test_draws_are_reproducible_per_trial(model):
    c = Campaign([("saxpy", 0, True), ("inplace_add_one", 0, False)])
    a = [c.draw(k, 11, model, ["G_GP", "G_LD"]) for k in range(6)]
    d = Campaign([("saxpy", 0, True), ("inplace_add_one", 0, False)])
    b = [d.draw(k, 11, model, ["G_GP", "G_LD"]) for k in reversed(range(6))][::-1]
    assert a == b and all(f is not None for _, f in a)


def test_double_flip_sets_two_adjacent_bits():
    c = Campaign([("saxpy", 0, True)])
    p = c.prepared(0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        f = draw_fault("double", p.golden, p.target.program, rng, "G_GP")
        assert f.bits // (f.bits & -f.bits) == 3   # two adjacent bits
