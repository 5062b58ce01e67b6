"""The active plugin of ``pytest --kernelcheck``: per-test scopes, markers, table, reports.

:class:`KernelcheckPlugin` opens one scope of the shim's control channel per test, from the
start of its setup to the end of its teardown, so every launch in between (in this process
or in a child it starts) is written to that test's instance file. After the call phase the
``kernelcheck`` marker is checked against the instances of setup and call (and of
``kernelcheck_recovery``), after teardown against those of teardown; the test fails naming
each offending kernel, its instance and the reason. At the end it prints a table per test,
writes the JSON report (``--kernelcheck-report``) and leaves per-test counts as JUnit XML
properties.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kernelcheck.pytest_plugin._channel import ShimChannel, find_channel
from kernelcheck.pytest_plugin._instances import (
    InstanceExplainer,
    KernelInstance,
    read_records,
)
from kernelcheck.pytest_plugin._reexec import HOW_TO

__all__ = ["KernelcheckPlugin", "TestKernels", "marker_failures"]

VERDICTS = ("idempotent", "not_idempotent", "not_proven")
_MAX_LISTED = 8


@dataclass(slots=True)
class TestKernels:
    """What one test launched (mutable while the test runs)."""

    nodeid: str
    path: Path
    offset: int = 0
    instances: list[KernelInstance] = field(default_factory=list)
    checked: int = 0
    recovery: object = None
    recovery_outcome: object = None
    outcome: str = ""

    def counts(self) -> dict[str, int]:
        out = {v: 0 for v in VERDICTS}
        for i in self.instances:
            out[i.verdict] = out.get(i.verdict, 0) + 1
        return out

    def kernels(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i.kernel for i in self.instances))

    def to_json(self) -> dict:
        data = {"test": self.nodeid, "outcome": self.outcome,
                "kernels": list(self.kernels()), "instances": len(self.instances),
                **self.counts(), "launches": [i.to_json() for i in self.instances]}
        if self.recovery_outcome is not None:
            data["recovery"] = self.recovery_outcome.to_json()
        return data


def marker_failures(instances: Sequence[KernelInstance]) -> str:
    """The failure text for instances not proven idempotent ('' when there are none)."""
    bad = [i for i in instances if not i.idempotent]
    if not bad:
        return ""
    lines = [f"kernelcheck: {len(bad)} of {len(instances)} kernel instances not proven "
             f"idempotent (@pytest.mark.kernelcheck(idempotent=True)):"]
    for i in bad[:_MAX_LISTED]:
        lines.append(f"  {i.describe()}")
        lines.append(f"    {i.reason}")
    if len(bad) > _MAX_LISTED:
        lines.append(f"  ... and {len(bad) - _MAX_LISTED} more")
    return "\n".join(lines)


class _LiveInstances(Sequence):
    """The ``kernel_instances`` fixture: re-reads the test's instances on every access."""

    def __init__(self, plugin: KernelcheckPlugin, item: pytest.Item) -> None:
        self._plugin = plugin
        self._item = item

    def _now(self) -> list[KernelInstance]:
        return self._plugin.collect(self._item)

    def __getitem__(self, k):
        return self._now()[k]

    def __len__(self) -> int:
        return len(self._now())

    def __repr__(self) -> str:
        return f"kernel_instances({self._now()!r})"


class KernelcheckPlugin:
    """The plugin object registered when ``--kernelcheck`` is given."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.channel: ShimChannel | None = find_channel()
        self.directory = Path(tempfile.mkdtemp(prefix="kernelcheck-pytest-"))
        self.explainer = InstanceExplainer()
        self.tests: dict[str, TestKernels] = {}
        self._order = 0
        if self.channel is not None:
            self.channel.set_analysis_wait(config.getoption("kernelcheck_wait"))

    # ------------------------------------------------------------------ per test state
    def _state(self, item: pytest.Item) -> TestKernels:
        state = self.tests.get(item.nodeid)
        if state is None:
            self._order += 1
            state = TestKernels(item.nodeid, self.directory / f"test-{self._order}.jsonl")
            self.tests[item.nodeid] = state
        return state

    def collect(self, item: pytest.Item) -> list[KernelInstance]:
        """The instances of ``item`` so far (reads what the shim has written since)."""
        state = self._state(item)
        records, state.offset = read_records(state.path, state.offset)
        driver = [i for i in state.instances if i.source == "driver"]
        driver += [self.explainer.explain(r) for r in records]
        state.instances = driver + self._recovery_instances(state)
        return list(state.instances)

    @staticmethod
    def _recovery_instances(state: TestKernels) -> list[KernelInstance]:
        harness = state.recovery
        if harness is None:
            return []
        out = []
        for (kernel, grid, block, raw), rec in zip(harness.launches, harness.records(),
                                                   strict=False):
            out.append(KernelInstance(kernel, grid, block, (), raw, rec.verdict,
                                      rec.decided_by, f"{rec.verdict} ({rec.decided_by})",
                                      source="recovery"))
        return out

    def instances_view(self, item: pytest.Item) -> Sequence[KernelInstance]:
        return _LiveInstances(self, item)

    def attach_recovery(self, item: pytest.Item, harness) -> None:
        self._state(item).recovery = harness

    # ------------------------------------------------------------------ hooks
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item):
        state = self._state(item)
        if self.channel is not None:
            try:
                self.channel.begin(state.path)
            except OSError as error:
                print(f"kernelcheck: {error}: launches of {item.nodeid} are not attributed",
                      file=sys.stderr)
        return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item):
        result = yield
        self._check(item, "call")
        return result

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem):
        try:
            result = yield
        finally:
            if self.channel is not None:
                self.channel.end()
            instances = self.collect(item)
            self._properties(item, instances)
        self._check(item, "teardown")
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call):
        report = yield
        state = self.tests.get(item.nodeid)
        if state is not None:
            if report.when == "call":
                state.outcome = report.outcome
            elif report.failed:
                state.outcome = f"error in {report.when}"
            elif report.skipped and not state.outcome:
                state.outcome = "skipped"
        return report

    def _check(self, item: pytest.Item, phase: str) -> None:
        marker = item.get_closest_marker("kernelcheck")
        if marker is None:
            return
        state = self._state(item)
        instances = self.collect(item)
        problems = []
        if marker.kwargs.get("recoverable") and phase == "call":
            problems += self._recovery_problems(state)
        if marker.kwargs.get("idempotent"):
            if self.channel is None:
                problems.append("kernelcheck: idempotent=True cannot be checked: the driver "
                                f"shim is not preloaded, so launches are not seen; {HOW_TO}")
            new = instances[state.checked:] if phase == "teardown" else instances
            text = marker_failures(new)
            if text:
                problems.append(text if phase == "call" else f"{text}\n  (launched during "
                                                              f"teardown)")
        state.checked = len(instances)
        if problems:
            pytest.fail("\n".join(problems), pytrace=False)

    @staticmethod
    def _recovery_problems(state: TestKernels) -> list[str]:
        harness = state.recovery
        if harness is None:
            return ["kernelcheck: recoverable=True needs the test's launches to go through "
                    "the kernelcheck_recovery fixture (launches made straight through the "
                    "driver cannot be fault-injected and replayed); this test did not use it"]
        outcome = harness.outcome()
        state.recovery_outcome = outcome
        problems = []
        if not outcome.injected and not outcome.problems:
            problems.append("kernelcheck: recoverable=True but no launch went through "
                            "kernelcheck_recovery, so no fault was injected")
        for kernel, reason in outcome.unrecovered:
            where = f"kernel {kernel}" if kernel else "a launch since the last synchronization"
            problems.append(f"kernelcheck: a detected fault in {where} was not recovered: "
                            f"{reason}")
        problems += [f"kernelcheck: {p}" for p in outcome.problems]
        if problems and outcome.injected:
            problems.append("  injected: " + "; ".join(f"#{f.launch} {f.kernel}: {f.model} "
                                                       f"{f.fault}" for f in outcome.injected))
        return problems

    @staticmethod
    def _properties(item: pytest.Item, instances: Sequence[KernelInstance]) -> None:
        counts = {v: 0 for v in VERDICTS}
        for i in instances:
            counts[i.verdict] = counts.get(i.verdict, 0) + 1
        props = [("kernelcheck_instances", len(instances)),
                 ("kernelcheck_kernels", ",".join(dict.fromkeys(i.kernel for i in instances)))]
        props += [(f"kernelcheck_{v}", n) for v, n in counts.items()]
        item.user_properties.extend(props)

    # ------------------------------------------------------------------ end of session
    def pytest_terminal_summary(self, terminalreporter) -> None:
        tr = terminalreporter
        tr.write_sep("=", "kernelcheck: kernel instances per test")
        if self.channel is None:
            tr.write_line(f"the driver shim is not preloaded: launches were not seen; "
                          f"{HOW_TO}")
        rows = [t for t in self.tests.values() if t.instances or t.recovery_outcome]
        if not rows:
            tr.write_line("no kernel launches")
            return
        width = min(60, max(len(t.nodeid) for t in rows))
        tr.write_line(f"{'test':<{width}} {'kernels':>7} {'inst':>6} {'idem':>6} "
                      f"{'not_idem':>8} {'not_prov':>8}")
        for t in rows:
            name = t.nodeid if len(t.nodeid) <= width else "~" + t.nodeid[-(width - 1):]
            c = t.counts()
            tr.write_line(f"{name:<{width}} {len(t.kernels()):>7} {len(t.instances):>6} "
                          f"{c['idempotent']:>6} {c['not_idempotent']:>8} "
                          f"{c['not_proven']:>8}")
            o = t.recovery_outcome
            if o is not None:
                tr.write_line(f"{'':<{width}}   faults injected {len(o.injected)}, detected "
                              f"{o.detected}, recovered {o.recovered}, unrecovered "
                              f"{len(o.unrecovered)}")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        path = self.config.getoption("kernelcheck_report")
        if path:
            data = {"format_version": 1, "shim_loaded": self.channel is not None,
                    "tests": [t.to_json() for t in self.tests.values()]}
            data["instances"] = sum(t["instances"] for t in data["tests"])
            for v in VERDICTS:
                data[v] = sum(t[v] for t in data["tests"])
            target = Path(self.config.invocation_params.dir, path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(data, indent=2) + "\n")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.explainer.close()
        shutil.rmtree(self.directory, ignore_errors=True)
        os.environ.pop("KERNELCHECK_SCOPE_LOG", None)
