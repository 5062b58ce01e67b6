"""One self-test section in its own process: ``python -m kernelcheck.selftest.worker``.

The runner (:mod:`kernelcheck.selftest.runner`) starts this module with the environment of
the chosen driver (the stand-in ``libcuda.so.1`` is found through ``LD_LIBRARY_PATH``, which
the dynamic loader reads only when a process starts) and one JSON object on standard input:
``{"section": NAME, "options": {...}, "seconds": CAP, "out": PATH}``. The worker opens the
device, runs the section until it is done or its cap is reached, and writes the
:class:`~kernelcheck.selftest.results.SectionResult` as JSON to ``PATH``. A process per
section also confines what a GPU makes of a sticky error to that section.

Section ``probe`` only opens the device and reports it (``figures["device"]``).
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from importlib import import_module

from kernelcheck.selftest.results import SectionResult

__all__ = ["run_section", "SECTION_MODULES"]

#: Section name -> module whose ``run(ctx)`` returns its SectionResult.
SECTION_MODULES = {"reexec": "kernelcheck.selftest.reexec",
                   "emulator": "kernelcheck.selftest.emulator_check",
                   "sass": "kernelcheck.selftest.sass_check",
                   "recovery": "kernelcheck.selftest.recovery_check",
                   "pytorch": "kernelcheck.selftest.torch_check",
                   "launch": "kernelcheck.selftest.launch_cost"}


def _open_device():
    from kernelcheck.selftest.device import TestDevice
    try:
        return TestDevice(), None
    except Exception as error:  # noqa: BLE001 - no driver, no device, a broken binding
        return None, f"cannot open the CUDA device: {type(error).__name__}: {error}"


def run_section(name: str, options: dict, seconds: float) -> SectionResult:
    """Run section ``name`` in this process (its driver already chosen by the environment)."""
    from kernelcheck.selftest.cases import fixtures_dir
    from kernelcheck.selftest.context import SectionContext

    start = time.monotonic()
    device, problem = _open_device()
    if name == "probe":
        if device is None:
            return SectionResult.error("probe", problem)
        result = SectionResult("probe", summary="device opened")
        result.figures["device"] = device.describe()
        return result
    if name not in SECTION_MODULES:
        return SectionResult.error(name, f"no section named {name}")
    module = import_module(SECTION_MODULES[name])
    needs_device = getattr(module, "NEEDS_DEVICE", True)
    if device is None and needs_device:
        return SectionResult.error(name, problem)
    try:
        root = fixtures_dir(options.get("fixtures"))
        ctx = SectionContext(name, device, root, options, start + seconds)
        result = module.run(ctx)
    except Exception as error:  # noqa: BLE001 - the section's own failure: report, not crash
        traceback.print_exc()
        result = SectionResult.error(name, f"{type(error).__name__}: {error}")
    result.seconds = time.monotonic() - start
    return result


def main() -> int:
    request = json.loads(sys.stdin.read())
    result = run_section(request["section"], request.get("options", {}),
                         float(request.get("seconds", 60)))
    with open(request["out"], "w") as handle:
        json.dump(result.to_json(), handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
