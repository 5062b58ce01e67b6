"""The compiled fast path decides exactly as the general evaluator, on every fixture kernel."""

import random

import pytest

from kernelcheck.launch.compiled import compiled_source
from kernelcheck.launch.evaluate import evaluate, evaluate_general
from tests.analysis.test_fixtures import EXPECTED, FILES, param_bytes, summaries

BASE = 0x7F0000000000


def _draw(rng, example):
    params = {}
    for name, value in example["params"].items():
        if isinstance(value, int) and value >= BASE:
            params[name] = BASE + rng.choice([0, 4, 8, 2048, 4096, 1 << 20]) * rng.choice(
                [0, 1, 1, 2]) + rng.choice([0, 0, 1, 2, 4])
        elif isinstance(value, int):
            params[name] = rng.choice([value, value + 1, 0, 1, -1, rng.randrange(0, 5000)])
        else:
            params[name] = value
    grid = [rng.choice([1, 2, 4, 7]), rng.choice([1, 1, 2]), 1]
    block = [rng.choice([1, 32, 64, 256]), rng.choice([1, 1, 4]), 1]
    return {"params": params, "grid": grid, "block": block}


@pytest.mark.parametrize("path", [p for p in FILES if p.parent.name in ("sm_80", "nvrtc12")],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_compiled_equals_general(path):
    rng = random.Random(path.name)
    module, found = summaries(path)
    for name, summary in found.items():
        expected = EXPECTED[name]
        function = module.get_function(name)
        check = summary.launch_check
        for example in expected.get("instances", []):
            for instance in [example] + [_draw(rng, example) for _ in range(12)]:
                try:
                    params = param_bytes(function, instance, expected["param_names"])
                except (TypeError, ValueError):
                    continue
                grid, block = tuple(instance["grid"]), tuple(instance["block"])
                fast = evaluate(check, params, grid, block)
                slow = evaluate_general(check, params, grid, block)
                assert (fast.verdict, fast.decided_by, fast.clobbered) == (
                    slow.verdict, slow.decided_by, slow.clobbered), (name, instance)


def _reads_tables(check) -> bool:
    """Whether ``check`` reads tables in the parameter buffer (``PARAMX``, expansions)."""
    return any(a.expand_slot >= 0 for a in check.accesses) or any(
        op == 25 for op, *_ in check.program)


def test_most_fixture_checks_have_a_fast_path():
    checks = [s.launch_check for p in FILES if p.parent.name == "sm_80"
              for s in summaries(p)[1].values() if s.kernel_class != "not_proven"]
    # Checks that read tables of pointers and sizes in the parameter buffer have no
    # compiled form by design (their sets are made block by block): the general evaluator.
    tables = [c for c in checks if _reads_tables(c)]
    assert tables and all(compiled_source(c) is None for c in tables)
    checks = [c for c in checks if not _reads_tables(c)]
    fast = [c for c in checks if compiled_source(c) is not None]
    assert len(fast) >= 0.9 * len(checks)
