"""No false "idempotent" on random instances, judged by tests/fixtures/access_model.py."""

import random
import sys
from pathlib import Path

import pytest

from tests.analysis.test_fixtures import EXPECTED, FILES, param_bytes, summaries

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
access_model = pytest.importorskip("access_model")

BASE = 0x7F0000000000


def draw(rng, expected):
    """Random small instances around the fixture's own examples (pointers near each other)."""
    example = rng.choice(expected["instances"])
    params = {}
    for name, value in example["params"].items():
        if isinstance(value, int) and value >= BASE:
            params[name] = BASE + 4 * rng.randrange(-64, 512)
        elif isinstance(value, int):
            params[name] = rng.choice([value, rng.randrange(-300, 600), rng.randrange(0, 64)])
        else:
            params[name] = value
    block = [rng.choice([1, 2, 32, 64]), 1, 1]
    grid = [rng.choice([1, 2, 3]), 1, 1]
    return {"params": params, "grid": grid, "block": block}


@pytest.mark.parametrize("path", [p for p in FILES if p.parent.name == "sm_80"],
                         ids=lambda p: p.name)
def test_no_false_idempotent_on_random_instances(path):
    rng = random.Random(path.name)
    module, found = summaries(path)
    for name, summary in found.items():
        expected = EXPECTED[name]
        model = access_model.KERNELS.get(name)
        if model is None or any("allocations" in i for i in expected["instances"]):
            continue
        if expected["instances"][0]["block"][1] > 1 or "pitch" in expected["param_names"]:
            continue  # 2-D kernels: the random draw below is 1-D
        function = module.get_function(name)
        for _ in range(30):
            instance = draw(rng, expected)
            acc = access_model.Access()
            try:
                model(instance["params"], instance["grid"], instance["block"], acc)
            except (AssertionError, KeyError, ZeroDivisionError, IndexError):
                continue
            clobber = acc.bad_atomic or access_model.overlaps(acc.reads, acc.writes)
            verdict = __import__("kernelcheck.launch.evaluate", fromlist=["evaluate"]).evaluate(
                summary.launch_check, param_bytes(function, instance, expected["param_names"]),
                instance["grid"], instance["block"])
            if clobber:
                assert verdict.verdict != "idempotent", (name, instance)
