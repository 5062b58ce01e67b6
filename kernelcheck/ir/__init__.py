"""The Kernel IR shared by every front end, and the graphs built over it."""

from kernelcheck.ir.nodes import *  # noqa: F401,F403
from kernelcheck.ir.nodes import __all__  # noqa: F401
