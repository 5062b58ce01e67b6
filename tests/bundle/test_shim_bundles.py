"""The shim reads bundles named in KERNELCHECK_BUNDLES: a cuda-python program on the
stand-in driver, with an empty user cache and no helper, gets the analysis' verdicts."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3

import pytest

from kernelcheck.bundle import create_bundle
from kernelcheck.executor import LocalExecutor
from tests.shim.conftest import FIXTURES, fixture_launches, run_client
from tests.shim.test_end_to_end import _analysis_verdict

FILES = ("elementwise.ptx", "inplace.ptx", "atomics.ptx")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    directory = tmp_path_factory.mktemp("ship")
    out = directory / "fixtures.kcb"
    create_bundle([FIXTURES / "ptx" / "sm_90" / f for f in FILES], out,
                  executor=LocalExecutor(1))
    return out


def _warnings(stderr: str, text: str) -> int:
    """Distinct warnings mentioning ``text`` (the run's summary repeats each one)."""
    return len({line for line in stderr.splitlines() if text in line})


def _run(spec, tmp_path, env, bundles):
    log = tmp_path / "instances.jsonl"
    env = dict(env, KERNELCHECK_BUNDLES=":".join(str(b) for b in bundles))
    done, _ = run_client(spec, tmp_path, env, under_shim=True,
                         extra_args=("--no-helper", "--log", str(log)))
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in log.read_text().splitlines()], done.stderr


def test_verdicts_come_from_the_bundle_with_an_empty_cache(env, tmp_path, bundle):
    spec = fixture_launches(FILES, forms=("params", "ex", "library"))
    assert {s["expected"] for s in spec} == {"idempotent", "not_idempotent"}
    assert not any((tmp_path / "cache").iterdir())
    records, stderr = _run(spec, tmp_path, env, [tmp_path / "missing.kcb", bundle])
    assert len(records) == len(spec)
    for launch, record in zip(spec, records, strict=True):
        assert record["verdict"] != "not_proven", (launch, record)
        assert record["verdict"] == _analysis_verdict(launch), (launch, record)
    assert _warnings(stderr, "missing.kcb") == 1  # one warning for the missing bundle
    # nothing was spooled for analysis: the bundle knew every image
    spool = tmp_path / "cache" / "spool"
    assert not spool.exists() or not any(spool.iterdir())


def test_a_bundle_others_can_write_is_refused_by_the_shim(env, tmp_path, bundle):
    copy = tmp_path / "open.kcb"
    shutil.copy(bundle, copy)
    os.chmod(copy, 0o666)
    spec = fixture_launches(["elementwise.ptx"], forms=("params",))[:3]
    records, stderr = _run(spec, tmp_path, env, [copy])
    assert {r["verdict"] for r in records} == {"not_proven"}
    assert _warnings(stderr, "open.kcb") == 1 and "refusing to use it" in stderr


def test_a_bundle_of_another_analyzer_version_is_ignored_with_one_warning(env, tmp_path,
                                                                          bundle):
    copy = tmp_path / "old.kcb"
    shutil.copy(bundle, copy)
    with sqlite3.connect(copy) as db:
        db.execute("UPDATE manifest SET value = '0.0.1+000000000000' WHERE key = "
                   "'analyzer_version'")
    os.chmod(copy, 0o644)
    spec = fixture_launches(["elementwise.ptx"], forms=("params",))[:3]
    records, stderr = _run(spec, tmp_path, env, [copy])
    assert {r["verdict"] for r in records} == {"not_proven"}
    assert _warnings(stderr, "made by analyzer version 0.0.1+000000000000") == 1
