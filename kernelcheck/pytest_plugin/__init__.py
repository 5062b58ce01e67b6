"""The pytest plugin (``pytest --kernelcheck``), loaded through the ``pytest11`` entry point.

This module is what pytest imports whenever kernelcheck is installed, so it only declares
the options, the marker and the fixtures, and imports nothing heavy. Everything else
(:mod:`~kernelcheck.pytest_plugin._session` and what it needs) is imported when
``--kernelcheck`` is given, or when a fixture is used.

* ``pytest --kernelcheck`` attributes every kernel launch made while a test runs (setup,
  call and teardown, including launches of child processes the test starts) to that test,
  through the shim's control channel (:mod:`~kernelcheck.pytest_plugin._channel`), and
  prints a per-test table at the end. Run without the shim preloaded, it re-executes pytest
  under ``kernelcheck run`` (:mod:`~kernelcheck.pytest_plugin._reexec`).
* ``@pytest.mark.kernelcheck(idempotent=True)`` fails a test if one of its launches is not
  proven idempotent; ``@pytest.mark.kernelcheck(recoverable=True)`` injects faults into the
  launches made through the ``kernelcheck_recovery`` fixture and fails if a detected fault is
  not recovered.
* Fixtures: ``kernelcheck_analyze``, ``kernel_instances``, ``kernelcheck_device``,
  ``kernelcheck_recovery``.

docs/pytest-plugin.md describes it all.
"""

from __future__ import annotations

import pytest

#: Name under which the active plugin object is registered with pytest.
SESSION_PLUGIN = "kernelcheck-session"

_MARKER = ("kernelcheck(idempotent=False, recoverable=False, model='launch-fail', seed=0): "
           "idempotent=True fails the test if a kernel instance it launches is not proven "
           "idempotent; recoverable=True injects a fault into each launch made through the "
           "kernelcheck_recovery fixture and fails the test if a detected fault is not "
           "recovered (needs --kernelcheck)")


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--kernelcheck`` and its settings."""
    group = parser.getgroup("kernelcheck", "kernel launch idempotency (kernelcheck)")
    group.addoption("--kernelcheck", action="store_true", default=False,
                    help="attribute every kernel launch to the test that made it, decide "
                         "each instance and honour @pytest.mark.kernelcheck")
    group.addoption("--kernelcheck-report", metavar="PATH", default=None,
                    help="write the per-test kernel instances and verdicts as JSON")
    group.addoption("--kernelcheck-wait", metavar="SECONDS", type=float, default=120.0,
                    help="how long a launch of a kernel not analysed yet waits for its "
                         "analysis (default 120; 0 counts such instances as not proven)")
    group.addoption("--kernelcheck-no-reexec", action="store_true", default=False,
                    help="when the shim is not preloaded, do not re-run pytest under "
                         "'kernelcheck run' (launches are then not seen)")


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker; with ``--kernelcheck``, register the active plugin."""
    config.addinivalue_line("markers", _MARKER)
    if config.getoption("kernelcheck") and not config.pluginmanager.has_plugin(SESSION_PLUGIN):
        from kernelcheck.pytest_plugin._session import KernelcheckPlugin

        config.pluginmanager.register(KernelcheckPlugin(config), SESSION_PLUGIN)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """With ``--kernelcheck`` and no shim in this process, run pytest again under it."""
    if not config.getoption("kernelcheck"):
        return None
    from kernelcheck.pytest_plugin._reexec import reexec_under_shim

    return reexec_under_shim(config)


def _active(request: pytest.FixtureRequest):
    plugin = request.config.pluginmanager.get_plugin(SESSION_PLUGIN)
    if plugin is None:
        pytest.skip("this fixture needs pytest --kernelcheck")
    return plugin


@pytest.fixture
def kernel_instances(request: pytest.FixtureRequest):
    """The kernel instances the current test has launched so far (a live, read-only
    sequence of :class:`~kernelcheck.pytest_plugin.KernelInstance`)."""
    return _active(request).instances_view(request.node)


@pytest.fixture(scope="session")
def kernelcheck_analyze():
    """A function ``analyze(path_or_bytes, *, as_json=False)`` returning the
    :class:`~kernelcheck.analysis.summary.KernelSummary` of every kernel of a PTX, cubin,
    fatbin or binary file (or of PTX/cubin/fatbin bytes), or their JSON."""
    from kernelcheck.pytest_plugin._analyze import analyze

    return analyze


@pytest.fixture
def kernelcheck_device():
    """The device the ``kernelcheck_recovery`` fixture launches on (override it to use
    another :class:`~kernelcheck.recovery.device.Device`); by default the CPU emulator."""
    from kernelcheck.recovery.device import EmulatorDevice

    return EmulatorDevice()


@pytest.fixture
def kernelcheck_recovery(request: pytest.FixtureRequest, kernelcheck_device):
    """A recovery session (:class:`~kernelcheck.pytest_plugin.RecoveryHarness`) over
    ``kernelcheck_device``; under ``@pytest.mark.kernelcheck(recoverable=True)`` a fault is
    injected into every launch made through it."""
    from kernelcheck.pytest_plugin._recovery import RecoveryHarness

    marker = request.node.get_closest_marker("kernelcheck")
    kwargs = marker.kwargs if marker is not None else {}
    harness = RecoveryHarness(kernelcheck_device, inject=bool(kwargs.get("recoverable")),
                              model=kwargs.get("model", "launch-fail"),
                              seed=int(kwargs.get("seed", 0)))
    plugin = request.config.pluginmanager.get_plugin(SESSION_PLUGIN)
    if plugin is not None:
        plugin.attach_recovery(request.node, harness)
    return harness


def __getattr__(name: str):
    if name in ("KernelInstance", "RecoveryHarness", "KernelcheckPlugin"):
        from kernelcheck.pytest_plugin import _instances, _recovery, _session

        for module in (_instances, _recovery, _session):
            if hasattr(module, name):
                return getattr(module, name)
    raise AttributeError(f"module 'kernelcheck.pytest_plugin' has no attribute {name!r}")


__all__ = ["SESSION_PLUGIN", "pytest_addoption", "pytest_configure", "pytest_cmdline_main",
           "kernel_instances", "kernelcheck_analyze", "kernelcheck_device",
           "kernelcheck_recovery"]
