"""Launch files: run any PTX kernel from a JSON description, on the emulator or a GPU.

A launch file (docs/launch-files.md) gives the grid, the block, the buffers, the parameters
and, optionally, the expected contents of the output buffers. :func:`load_launch_file` reads
one, :func:`load_program` parses the PTX and picks the kernel, :func:`run_launch` runs it on a
backend (``"emulator"`` or ``"gpu"``), and :func:`check_expectation` / :func:`diff_outputs`
compare results. ``kernelcheck emulate`` is the command-line face of this package.
"""

from kernelcheck.launchfile.backends import (
    BACKENDS,
    GpuUnavailable,
    LaunchFailed,
    run_launch,
    run_on_emulator,
    run_on_gpu,
)
from kernelcheck.launchfile.compare import Mismatch, check_expectation, diff_outputs
from kernelcheck.launchfile.program import PtxProgram, load_program, program_from_text
from kernelcheck.launchfile.spec import (
    FORMAT_NAME,
    FORMAT_VERSION,
    BufferSpec,
    Expectation,
    LaunchFileError,
    LaunchSpec,
    OutputSpec,
    ParamSpec,
    load_launch_file,
    parse_launch,
)

__all__ = [
    "BACKENDS",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "BufferSpec",
    "Expectation",
    "GpuUnavailable",
    "LaunchFailed",
    "LaunchFileError",
    "LaunchSpec",
    "Mismatch",
    "OutputSpec",
    "ParamSpec",
    "PtxProgram",
    "check_expectation",
    "diff_outputs",
    "load_launch_file",
    "load_program",
    "parse_launch",
    "program_from_text",
    "run_launch",
    "run_on_emulator",
    "run_on_gpu",
]
