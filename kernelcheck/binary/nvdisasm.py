"""Run NVIDIA's ``nvdisasm`` on a cubin and return each kernel's instructions as text.

The tool is taken from the ``nvidia-cuda-nvdisasm`` wheel (``nvidia/cu13/bin/nvdisasm``, found
through the installed package's file list, never through ``PATH``, so that the version is the
one kernelcheck declares). Two output forms are read:

* ``-json`` (nvdisasm 12.8 and later): one object per function with ``sass-instructions``;
  instruction offsets are ``start + 16 * i`` since sm_70 and later encode every instruction
  in 16 bytes.
* the plain listing (``-c``), whose ``/*0040*/`` comments carry the offsets.

Parsing SASS into the Kernel IR is the SASS front end's job; this module only returns
:class:`SassInstruction` records (offset, text).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from kernelcheck.errors import KernelcheckError

__all__ = ["NvdisasmError", "SassInstruction", "SassFunction", "find_nvdisasm", "disassemble"]

INSTRUCTION_SIZE = 16
_LISTING_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_FUNCTION_LINE = re.compile(r"^\s*\.text\.(\S+):\s*$")


class NvdisasmError(KernelcheckError):
    """nvdisasm is missing, or failed on one image (its message and exit status included)."""


@dataclass(frozen=True, slots=True)
class SassInstruction:
    """One instruction: its byte offset in the kernel's ``.text`` and its text."""

    offset: int
    text: str


@dataclass(frozen=True, slots=True)
class SassFunction:
    """The instructions of one function (kernel or device function)."""

    name: str
    instructions: tuple[SassInstruction, ...]


def find_nvdisasm() -> Path:
    """The ``nvdisasm`` binary of the installed nvidia-cuda-nvdisasm wheel.

    Raises
    ------
    NvdisasmError
        When the wheel is not installed or holds no executable ``nvdisasm``.
    """
    try:
        distribution = metadata.distribution("nvidia-cuda-nvdisasm")
    except metadata.PackageNotFoundError as error:
        raise NvdisasmError(
            "nvdisasm not found: install the nvidia-cuda-nvdisasm wheel "
            "(pip install nvidia-cuda-nvdisasm)"
        ) from error
    for file in distribution.files or ():
        if file.name == "nvdisasm":
            path = Path(distribution.locate_file(file))
            if path.is_file() and os.access(path, os.X_OK):
                return path
    raise NvdisasmError(
        f"the nvidia-cuda-nvdisasm {distribution.version} wheel holds no executable nvdisasm"
    )


def _run(arguments: list[str], cubin: bytes, label: str, timeout: float) -> str:
    tool = find_nvdisasm()
    with tempfile.NamedTemporaryFile(suffix=".cubin") as handle:
        handle.write(cubin)
        handle.flush()
        try:
            done = subprocess.run(
                [str(tool), *arguments, handle.name],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise NvdisasmError(f"{label}: running {tool} failed: {error}") from error
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip().replace(handle.name, label)
        raise NvdisasmError(f"{label}: nvdisasm exited with status {done.returncode}: {message}")
    return done.stdout


def _from_json(text: str, label: str) -> tuple[SassFunction, ...]:
    try:
        document = json.loads(text)
        functions = document[1]
        result = []
        for function in functions:
            start = int(function.get("start", 0))
            instructions = []
            for number, item in enumerate(function.get("sass-instructions", ())):
                words = [
                    item.get("predicate", ""),
                    item.get("opcode", ""),
                    item.get("operands", ""),
                ]
                instructions.append(
                    SassInstruction(
                        start + INSTRUCTION_SIZE * number, " ".join(w for w in words if w)
                    )
                )
            result.append(SassFunction(function["function-name"], tuple(instructions)))
    except (ValueError, KeyError, IndexError, TypeError) as error:
        raise NvdisasmError(f"{label}: unexpected nvdisasm -json output: {error}") from error
    return tuple(result)


def _from_listing(text: str) -> tuple[SassFunction, ...]:
    result: list[SassFunction] = []
    name, instructions = None, []
    for line in text.splitlines():
        function = _FUNCTION_LINE.match(line)
        if function:
            if name is not None:
                result.append(SassFunction(name, tuple(instructions)))
            name, instructions = function.group(1), []
            continue
        match = _LISTING_LINE.match(line)
        if match and name is not None:
            instructions.append(
                SassInstruction(int(match.group(1), 16), " ".join(match.group(2).split()))
            )
    if name is not None:
        result.append(SassFunction(name, tuple(instructions)))
    return tuple(result)


def disassemble(
    cubin: bytes, *, use_json: bool = True, label: str = "<cubin>", timeout: float = 120.0
) -> dict[str, SassFunction]:
    """Disassemble a cubin into ``{function name: SassFunction}``.

    Parameters
    ----------
    cubin : bytes
        The (decompressed) cubin image.
    use_json : bool
        Read ``nvdisasm -json`` (default) or the plain ``-c`` listing.
    label : str
        Name of the image in error messages.
    timeout : float
        Seconds before nvdisasm is given up on.

    Raises
    ------
    NvdisasmError
        When nvdisasm is missing, fails on this image, or prints something unexpected.

    Examples
    --------
    >>> code = disassemble(open("tests/binary/data/k80.cubin", "rb").read())  # doctest: +SKIP
    >>> code["saxpy"].instructions[0]  # doctest: +SKIP
    SassInstruction(offset=0, text='MOV R1,c[0x0][0x28]')
    """
    if use_json:
        functions = _from_json(_run(["-json"], cubin, label, timeout), label)
    else:
        functions = _from_listing(_run(["-c"], cubin, label, timeout))
    return {function.name: function for function in functions}
