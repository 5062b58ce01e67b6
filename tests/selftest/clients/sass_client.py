"""Runs the SASS section's verdicts through the re-execution oracle on the stand-in driver.

The stand-in cannot launch cubins, so the kernels run from their PTX (the same sources); the
verdicts come from the SASS of fixtures/cubin/sm_90. Prints the section result as JSON.
"""

import json
import sys
import time

from kernelcheck.selftest.cases import find_case, fixtures_dir
from kernelcheck.selftest.context import SectionContext
from kernelcheck.selftest.device import TestDevice
from kernelcheck.selftest.reexec import check_cases, ptx_loader
from kernelcheck.selftest.results import SectionResult
from kernelcheck.selftest.sass_check import sass_verdict

root = fixtures_dir()
device = TestDevice()
ctx = SectionContext("sass", device, root, {"seed": 1}, time.monotonic() + 120)
cases = [find_case(root, name, 1) for name in sys.argv[1:]]
result = SectionResult("sass")
check_cases(ctx, result, sass_verdict("sm_90", root), ptx_loader, what="SASS", cases=cases)
print(json.dumps(result.finish().to_json()))
