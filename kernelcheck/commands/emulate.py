"""``kernelcheck emulate FILE --launch LAUNCH.json``: run one PTX kernel and show its outputs.

The launch file (docs/launch-files.md) gives the grid, block, buffers and parameters. The
kernel runs on kernelcheck's CPU emulator (``--backend emulator``, the default), on a GPU
through the CUDA driver (``--backend gpu``), or on both with their outputs compared
(``--backend both``). Output buffers are printed (hex, or as values of their type) or saved
(``-o DIR``: ``NAME.npy`` or ``NAME.bin``).

Exit status (the table every command shares, kernelcheck.commands.exitcodes): 0 when the
launch ran and every expectation of the launch file held; 1 when an expectation failed, the
two backends disagree, or the kernel itself failed (a memory fault, ``trap``, or the step
limit: ``kernelcheck: error: kernel failed: ...``); 2 for bad input and for what the emulator
does not support (``FILE:LINE:COL: unsupported: ...``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from kernelcheck.errors import KernelcheckError
from kernelcheck.launchfile import (
    LaunchFailed,
    check_expectation,
    diff_outputs,
    load_launch_file,
    load_program,
    run_launch,
)
from kernelcheck.launchfile.spec import LaunchSpec
from kernelcheck.launchfile.values import decode_values, format_value, numpy_dtype

EXIT_MISMATCH = 1
EXIT_KERNEL_FAILED = 1
_SHOWN_MISMATCHES = 20


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``emulate`` sub-command."""
    parser = subparsers.add_parser(
        "emulate",
        help="run a PTX kernel described by a launch file on the emulator or a GPU",
        description="Run one kernel of a PTX file with the grid, buffers and parameters of a "
        "launch file (docs/launch-files.md) and print or save its output buffers.",
    )
    parser.add_argument("file", help="PTX file")
    parser.add_argument("--launch", required=True, metavar="LAUNCH.json",
                        help="launch file (JSON)")
    parser.add_argument("--kernel", help="kernel to run (default: the launch file's, or the "
                        "only kernel of the file)")
    parser.add_argument("--backend", choices=("emulator", "gpu", "both"), default="emulator",
                        help="where to run: the CPU emulator (default), a GPU through the "
                        "CUDA driver, or both with their outputs compared")
    parser.add_argument("--format", choices=("auto", "hex", "typed"), default="auto",
                        help="how to print buffers: as values of their type when known "
                        "(auto), raw hex, or typed")
    parser.add_argument("--json", action="store_true", help="print the outputs as JSON")
    parser.add_argument("-o", "--output-dir", metavar="DIR",
                        help="save each output buffer in DIR instead of printing it")
    parser.add_argument("--save-format", choices=("auto", "npy", "bin"), default="auto",
                        help="file format with -o: .npy for typed buffers and .bin for "
                        "untyped ones (auto), or always one of them")
    parser.add_argument("--step-limit", type=int, metavar="N",
                        help="stop the emulator after N instruction steps per batch of "
                        "threads (a kernel that loops forever then fails with status 3)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the launch; see the module docstring for the exit status."""
    spec = load_launch_file(args.launch)
    program = load_program(args.file, args.kernel or spec.kernel)
    if args.step_limit is not None and args.step_limit < 1:
        raise KernelcheckError(f"--step-limit must be at least 1, not {args.step_limit}")
    backends = ("emulator", "gpu") if args.backend == "both" else (args.backend,)
    try:
        results = {b: run_launch(program, spec, b, step_limit=args.step_limit)
                   for b in backends}
    except LaunchFailed as error:
        print(f"kernelcheck: error: kernel failed: {error}", file=sys.stderr)
        return EXIT_KERNEL_FAILED
    outputs = results[backends[0]]
    types = {o.buffer: _shown_type(o.type, args.format) for o in spec.outputs}
    mismatches = [m for e in spec.expectations for m in check_expectation(e, outputs[e.buffer])]
    differences = (diff_outputs(results["emulator"], results["gpu"], types)
                   if len(backends) == 2 else [])
    if args.output_dir:
        saved = _save(outputs, spec, Path(args.output_dir), args.save_format)
    else:
        saved = []
    if args.json:
        print(json.dumps(_document(program.kernel.name, args.backend, outputs, types, saved,
                                   mismatches, differences, spec), indent=2))
    else:
        _print_text(program.kernel.name, args.backend, spec, outputs, types, saved,
                    mismatches, differences)
    return EXIT_MISMATCH if mismatches or differences else 0


def _shown_type(type_name: str | None, how: str) -> str | None:
    if how == "hex":
        return None
    if how == "typed" and type_name is None:
        return "u8"
    return type_name


def _save(outputs: dict[str, bytes], spec: LaunchSpec, directory: Path, how: str
          ) -> list[str]:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise KernelcheckError(f"{directory}: cannot create output directory: "
                               f"{error.strerror}") from error
    saved = []
    for output in spec.outputs:
        data = outputs[output.buffer]
        npy = how == "npy" or (how == "auto" and output.type is not None)
        if npy:
            dtype = numpy_dtype(output.type) if output.type else np.dtype(np.uint8)
            usable = len(data) - len(data) % dtype.itemsize
            path = directory / f"{output.buffer}.npy"
            try:
                np.save(path, np.frombuffer(data[:usable], dtype=dtype))
            except OSError as error:
                raise KernelcheckError(f"{path}: cannot write: {error.strerror}") from error
        else:
            path = directory / f"{output.buffer}.bin"
            try:
                path.write_bytes(data)
            except OSError as error:
                raise KernelcheckError(f"{path}: cannot write: {error.strerror}") from error
        saved.append(str(path))
    return saved


def _print_text(kernel: str, backend: str, spec: LaunchSpec, outputs: dict[str, bytes],
                types: dict[str, str | None], saved: list[str], mismatches: list,
                differences: list) -> None:
    grid = "x".join(map(str, spec.grid))
    block = "x".join(map(str, spec.block))
    where = {"emulator": "the emulator", "gpu": "the GPU",
             "both": "the emulator and the GPU"}[backend]
    print(f"kernel {kernel} on {where}: grid {grid}, block {block}, "
          f"{spec.shared_bytes} bytes of dynamic shared memory")
    if saved:
        for path in saved:
            print(f"saved {path}")
    else:
        for name, data in outputs.items():
            print("\n".join(_format_buffer(name, data, types.get(name))))
    for expectation in spec.expectations:
        count = [m for m in mismatches if m.buffer == expectation.buffer]
        state = "as expected" if not count else f"{len(count)} elements differ"
        print(f"expect {expectation.buffer}: {state}")
    for mismatch in mismatches[:_SHOWN_MISMATCHES]:
        print(f"  {mismatch}")
    if len(mismatches) > _SHOWN_MISMATCHES:
        print(f"  ... and {len(mismatches) - _SHOWN_MISMATCHES} more")
    if backend == "both":
        print("emulator and GPU agree" if not differences
              else f"emulator and GPU differ in {len(differences)} elements "
                   f"(expected: emulator, found: GPU)")
        for difference in differences[:_SHOWN_MISMATCHES]:
            print(f"  {difference}")


def _format_buffer(name: str, data: bytes, type_name: str | None) -> list[str]:
    if type_name is None:
        lines = [f"{name} ({len(data)} bytes):"]
        for offset in range(0, len(data), 16):
            chunk = data[offset:offset + 16]
            lines.append(f"  {offset:06x}: {' '.join(f'{b:02x}' for b in chunk)}")
        return lines
    values = decode_values(data, type_name)
    lines = [f"{name} ({len(data)} bytes, {type_name} x {len(values)}):"]
    per_line = 8
    width = len(str(max(len(values) - 1, 0)))
    for start in range(0, len(values), per_line):
        shown = " ".join(format_value(v, type_name) for v in values[start:start + per_line])
        lines.append(f"  [{start:>{width}}] {shown}")
    return lines


def _json_value(value: int | float, type_name: str) -> int | float | str:
    if type_name in ("f16", "bf16", "f32", "f64"):
        text = format_value(value, type_name)
        return text if text in ("nan", "-nan", "inf", "-inf") else value
    return value


def _document(kernel: str, backend: str, outputs: dict[str, bytes],
              types: dict[str, str | None], saved: list[str], mismatches: list,
              differences: list, spec: LaunchSpec) -> dict:
    shown = {}
    for name, data in outputs.items():
        entry: dict = {"bytes": len(data), "hex": data.hex()}
        type_name = types.get(name)
        if type_name:
            entry["type"] = type_name
            entry["values"] = [_json_value(v, type_name) for v in decode_values(data, type_name)]
        shown[name] = entry
    return {
        "format": "kernelcheck-emulate",
        "version": 1,
        "kernel": kernel,
        "backend": backend,
        "grid": list(spec.grid),
        "block": list(spec.block),
        "outputs": shown,
        "saved": saved,
        "expectations": {e.buffer: not any(m.buffer == e.buffer for m in mismatches)
                         for e in spec.expectations},
        "mismatches": [str(m) for m in mismatches],
        "differences": [str(d) for d in differences],
    }
