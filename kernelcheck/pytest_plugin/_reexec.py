"""Re-running pytest under ``kernelcheck run`` when ``--kernelcheck`` finds no shim.

The shim has to be preloaded before the process starts (``LD_PRELOAD``), so a pytest that
was started without it cannot see launches. :func:`reexec_under_shim` runs the same command
line again, with the same environment plus the shim's (through
:func:`kernelcheck.shim.launcher.run_command`, which also starts the analysis helper), and
returns its exit status; the outer pytest then runs no test. ``KERNELCHECK_PYTEST_REEXEC``
marks the inner run so it never re-executes again.
"""

from __future__ import annotations

import os
import sys

import pytest

__all__ = ["reexec_under_shim", "REEXEC_ENV", "HOW_TO"]

REEXEC_ENV = "KERNELCHECK_PYTEST_REEXEC"
HOW_TO = "run it as: kernelcheck run -- python -m pytest --kernelcheck ..."


def _say(config: pytest.Config, text: str) -> None:
    print(f"kernelcheck: {text}", file=sys.stderr, flush=True)


def reexec_under_shim(config: pytest.Config) -> int | None:
    """Run pytest again under the shim if it is not loaded here; ``None`` to go on here.

    Returns ``None`` (run the tests in this process) when the shim is loaded, when this is
    already the re-executed run, or when ``--kernelcheck-no-reexec`` is given; otherwise the
    exit status of the re-executed pytest.
    """
    from kernelcheck.pytest_plugin._channel import find_channel

    if find_channel() is not None:
        return None
    if os.environ.get(REEXEC_ENV) or config.getoption("kernelcheck_no_reexec"):
        why = ("the shim could not be loaded in the re-executed run"
               if os.environ.get(REEXEC_ENV) else "--kernelcheck-no-reexec")
        _say(config, f"the driver shim is not preloaded ({why}): kernel launches are not "
                     f"seen; {HOW_TO}")
        return None
    if os.environ.get("PYTEST_XDIST_WORKER"):
        _say(config, f"the driver shim is not preloaded in this xdist worker; {HOW_TO}")
        return None
    from kernelcheck.shim.launcher import run_command

    args = [str(a) for a in config.invocation_params.args]
    command = [sys.executable, "-m", "pytest", *args]
    env = dict(os.environ)
    env[REEXEC_ENV] = "1"
    _say(config, "the driver shim is not preloaded: running pytest again under "
                 "'kernelcheck run'")
    cwd = os.getcwd()
    try:
        os.chdir(config.invocation_params.dir)
        result = run_command(command, env=env, quiet=True)
    finally:
        os.chdir(cwd)
    return result.returncode
