"""Every fixture kernel, in every PTX flavour, computes what its numpy reference says, and the
oracle agrees with every instance verdict of fixtures/expected.toml."""

from __future__ import annotations

import pytest

from tests.emu.fixture_data import check_reference, expected, ptx_files, run_instance, scalars

CASES = [(k, p) for k in expected() for p in ptx_files(k)]
INSTANCES = [(k, n) for k, spec in expected().items() for n in range(len(spec["instances"]))]
#: Idempotent instances the oracle calls not idempotent, by the one rule where it is stricter
#: than the definition in fixtures/expected.toml: it counts every byte both read and written,
#: also one that the same thread writes first and then reads back (a write-first scratch).
#: Each maps to the pointer whose bytes [p, p + 4n) must then be exactly the clobbered set.
ORACLE_STRICTER = {("asm_scratch_write_first", 0): "scratch"}


def test_every_fixture_kernel_has_ptx_to_run():
    assert {k for k, _ in CASES} == set(expected())


@pytest.mark.parametrize("kernel,path", CASES,
                         ids=[f"{p.parent.name}-{k[:40]}" for k, p in CASES])
def test_output_matches_reference(kernel, path):
    inst = expected()[kernel]["instances"][0]
    emu, placement, inputs, result = run_instance(kernel, path, scalars(inst["params"]),
                                                  inst["grid"], inst["block"], seed=1)
    assert result.completed
    assert check_reference(kernel, emu, placement, inputs, inst["grid"], inst["block"]) == []


@pytest.mark.parametrize("kernel,number", INSTANCES,
                         ids=[f"{k[:40]}-{n}" for k, n in INSTANCES])
def test_oracle_agrees_with_expected_verdict(kernel, number):
    inst = expected()[kernel]["instances"][number]
    path = ptx_files(kernel)[0]
    *_, result = run_instance(kernel, path, inst["params"], inst["grid"], inst["block"],
                              trace=True, allocations=inst.get("allocations", ()))
    if (kernel, number) in ORACLE_STRICTER:
        start = inst["params"][ORACLE_STRICTER[kernel, number]]
        assert result.trace.clobbered.ranges == ((start, start + 4 * inst["params"]["n"]),)
        assert result.trace.verdict == "not_idempotent"
        return
    assert result.trace.verdict == inst["verdict"], result.trace.reasons
    if inst["verdict"] == "idempotent":
        assert not result.trace.clobbered
    elif not any(a.idempotent_in_effect is False for a in result.trace.atomics):
        assert result.trace.clobbered
