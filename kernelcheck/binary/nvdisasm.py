"""Run NVIDIA's ``nvdisasm`` on a cubin and return each kernel's instructions as text.

The tool is taken from the ``nvidia-cuda-nvdisasm`` wheel (``nvidia/cu13/bin/nvdisasm``, found
through the installed package's file list, never through ``PATH``, so that the version is the
one kernelcheck declares). Two output forms are read, and give the same instructions:

* the plain listing (``-c``, the default), whose ``/*0040*/`` comments carry the offsets.
  nvdisasm writes it about a quarter faster than ``-json`` (a sample of 24 sm_90 images of
  libtorch_cuda.so: 72 s against 97 s), and it reads faster too. Code references are
  resolved as ``-json`` prints them (``BRA `(.L_x_3)`` becomes ``BRA 0x1b0``, the label's
  offset; ``CALL `($f)`` becomes ``CALL $f``) and annotations (``(*"SpillRefill"*)``)
  are dropped.
* ``-json`` (nvdisasm 12.8 and later): one object per function with ``sass-instructions``;
  instruction offsets are ``start + 16 * i`` since sm_70 and later encode every instruction
  in 16 bytes. Its ``P2R`` quirk (the ``PR`` operand in the ``predicate`` field) is
  undone here.

Other options cost nothing measurable or give nothing the IR needs: ``-ndf`` (no dataflow
pass) saved under 2%, and raw-binary mode (``-b SM90`` on the bare code) is no faster, so
the cost is nvdisasm's decoding itself, about 14-30 us per instruction. The readers pause
the cyclic garbage collector while they build their records.

Parsing SASS into the Kernel IR is the SASS front end's job; this module only returns
:class:`SassInstruction` records (offset, text).
"""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from kernelcheck.errors import KernelcheckError

__all__ = ["NvdisasmError", "SassInstruction", "SassFunction", "find_nvdisasm", "disassemble"]

INSTRUCTION_SIZE = 16
# In a ``-c`` listing: an instruction with its offset comment (the text stops before any
# ``(*"SpillRefill"*)`` annotation and the ``;``), and a code label.
_INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/[ \t]*([^;\n]*);")
_LABEL = re.compile(r"\n(\.L_x_\d+):")
_OFFSET = re.compile(r"/\*([0-9a-f]{4,})\*/")
_HEADER = "\n.text."
_REFERENCE = re.compile(r"`\(([^)]*)\)")
# ``-g`` line information: ``//## File "/src/k.cu", line 14`` (a column may follow).
_LINE_INFO = re.compile(r'//## File "([^"]*)", line (\d+)')


class NvdisasmError(KernelcheckError):
    """nvdisasm is missing, or failed on one image (its message and exit status included)."""


@dataclass(frozen=True, slots=True)
class SassInstruction:
    """One instruction: its byte offset in the kernel's ``.text`` and its text.

    ``source`` is the CUDA source ``(file, line)`` nvdisasm ``-g`` gives it from the cubin's
    ``.debug_line`` (a cubin built with ``-lineinfo``), else ``None``.
    """

    offset: int
    text: str
    source: tuple[str, int] | None = None


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


@contextmanager
def _paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of acyclic records are built."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _json_text(item: dict) -> str:
    """An instruction's text from its ``-json`` record, operands where the listing has them.

    ``nvdisasm -json`` (CUDA 13.5) reports the ``PR`` source of ``P2R`` in the
    ``predicate`` field (``{"predicate": "PR", "opcode": "P2R", "operands": "R23,RZ,0x4"}``)
    where the listing prints ``P2R R23, PR, RZ, 0x4``: a word of that field that is not a
    guard (``@P0``, ``@!PT``) goes back after the first operand.
    """
    predicate = item.get("predicate")
    opcode = item.get("opcode", "")
    operands = item.get("operands")
    if predicate and (predicate[0] != "@" or " " in predicate):
        words = predicate.split()
        guards = [w for w in words if w[0] == "@"]
        moved = ",".join(w for w in words if w[0] != "@")
        first, comma, rest = (operands or "").partition(",")
        operands = f"{first},{moved}{comma}{rest}" if first else moved
        predicate = " ".join(guards)
    if predicate:
        return f"{predicate} {opcode} {operands}" if operands else f"{predicate} {opcode}"
    return f"{opcode} {operands}" if operands else opcode


def _from_json(text: str, label: str) -> tuple[SassFunction, ...]:
    try:
        with _paused_gc():
            document = json.loads(text)
            result = []
            for function in document[1]:
                start = int(function.get("start", 0))
                instructions = tuple(
                    SassInstruction(start + INSTRUCTION_SIZE * number, _json_text(item))
                    for number, item in enumerate(function.get("sass-instructions", ()))
                )
                result.append(SassFunction(function["function-name"], instructions))
            del document
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        raise NvdisasmError(f"{label}: unexpected nvdisasm -json output: {error}") from error
    return tuple(result)


def _resolve_references(text: str, labels: dict[str, int]) -> str:
    """``BRA `(.L_x_3)`` → ``BRA 0x1b0`` and ``CALL `($f)`` → ``CALL $f``, as ``-json``
    prints them: a label of the function becomes its offset, any other name stays. A
    reference the listing sets after another operand without a comma
    (``RET.REL.NODEC R2 `(k)``) gets one, as in ``-json`` (``R2,k``)."""
    def replace(match: re.Match) -> str:
        name = match.group(1)
        offset = labels.get(name)
        target = name if offset is None else f"{offset:#x}"
        before = text[:match.start()].split()
        if before and before[0][0] == "@":
            del before[0]
        if len(before) > 1 and not before[-1].endswith(","):
            return "," + target
        return target

    return _REFERENCE.sub(replace, text)


def _listing_text(body: str, labels: dict[str, int]) -> str:
    """The instruction text of a listing line's body: no annotation, references resolved."""
    body = body.rstrip()
    if "(*" in body:  # (*"SpillRefill"*)
        body = body[:body.index("(*")].rstrip()
    if "`(" in body:
        body = _resolve_references(body, labels)
    return body


def _function_labels(chunk: str, instructions: list[tuple[str, str]]) -> dict[str, int]:
    """``{label: offset}`` for the ``.L_x_N:`` lines of one function's listing: the offset
    of the next instruction, or the end of the code for a label after the last one."""
    labels = {}
    end = int(instructions[-1][0], 16) + INSTRUCTION_SIZE if instructions else 0
    for match in _LABEL.finditer(chunk):
        following = _OFFSET.search(chunk, match.end())
        labels[match.group(1)] = int(following.group(1), 16) if following else end
    return labels


def _sources(chunk: str) -> dict[str, tuple[str, int]]:
    """``{offset: (file, line)}`` of the instructions after each ``-g`` line marker."""
    out: dict[str, tuple[str, int]] = {}
    current = None
    for match in re.finditer(r'//## File "([^"]*)", line (\d+)|/\*([0-9a-f]{4,})\*/', chunk):
        if match.group(1) is not None:
            current = (match.group(1), int(match.group(2)))
        elif current is not None:
            out[match.group(3)] = current
    return out


def _from_listing(text: str) -> tuple[SassFunction, ...]:
    """Functions of a ``-c`` listing, with the same instruction texts as ``-json`` gives
    (up to spaces after commas): code references resolved, annotations dropped, and the
    source line of each instruction where the listing has ``-g`` markers."""
    result: list[SassFunction] = []
    text = "\n" + text
    start = text.find(_HEADER)
    with _paused_gc():
        while start >= 0:
            colon = text.find(":", start)
            name = text[start + len(_HEADER):colon]
            after = text.find(_HEADER, colon)
            chunk = text[colon:after] if after >= 0 else text[colon:]
            rows = _INSTRUCTION.findall(chunk)
            labels = _function_labels(chunk, rows) if "`(" in chunk else {}
            sources = _sources(chunk) if "//## File" in chunk else {}
            result.append(SassFunction(name, tuple(
                SassInstruction(int(offset, 16), _listing_text(body, labels),
                                sources.get(offset))
                for offset, body in rows)))
            start = after
    return tuple(result)


def disassemble(
    cubin: bytes, *, use_json: bool = False, label: str = "<cubin>", timeout: float = 120.0,
    line_info: bool = False,
) -> dict[str, SassFunction]:
    """Disassemble a cubin into ``{function name: SassFunction}``.

    Parameters
    ----------
    cubin : bytes
        The (decompressed) cubin image.
    use_json : bool
        Read ``nvdisasm -json`` rather than the plain ``-c`` listing (the default, faster).
    label : str
        Name of the image in error messages.
    timeout : float
        Seconds before nvdisasm is given up on.
    line_info : bool
        Ask nvdisasm for source lines (``-g``; the plain listing only), for cubins with a
        ``.debug_line`` section.

    Raises
    ------
    NvdisasmError
        When nvdisasm is missing, fails on this image, or prints something unexpected.

    Examples
    --------
    >>> code = disassemble(open("tests/binary/data/k80.cubin", "rb").read())  # doctest: +SKIP
    >>> code["saxpy"].instructions[0]  # doctest: +SKIP
    SassInstruction(offset=0, text='MOV R1, c[0x0][0x28]')
    """
    if use_json:
        functions = _from_json(_run(["-json"], cubin, label, timeout), label)
    else:
        functions = _from_listing(_run(["-c", "-g"] if line_info else ["-c"], cubin, label,
                                       timeout))
    return {function.name: function for function in functions}
