"""``kernelcheck analyze FILE``: per kernel, what it is made of and what is proven about it.

Without FILE, the bundled example (``elementwise.ptx``, five small kernels compiled for
sm_90) is analysed, so the command shows what it does on a fresh install.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path

from kernelcheck import __version__
from kernelcheck.inputs import LoadedInput, LoadedModule, load_input
from kernelcheck.structure import KernelStructure, kernel_structure

#: Version of the JSON document ``--json`` writes (docs/json-schema.md).
JSON_FORMAT_VERSION = 1

BUNDLED_EXAMPLE = "elementwise.ptx"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``analyze`` sub-command."""
    parser = subparsers.add_parser(
        "analyze",
        help="analyse the kernels of a .ptx, .cubin, fatbin, executable or shared library",
        description=(
            "Analyse every kernel in FILE: parameters, blocks, loops and memory accesses. "
            "Without FILE, the bundled example kernels are analysed."
        ),
    )
    parser.add_argument("file", nargs="?", metavar="FILE",
                        help="input file (default: the bundled example)")
    parser.add_argument("--json", action="store_true", help="write JSON instead of text")
    parser.add_argument("--kernel", metavar="NAME",
                        help="only this kernel (PTX or demangled name)")
    parser.add_argument("--arch", metavar="SM", help="only images for this architecture")
    parser.add_argument("--functions", action="store_true",
                        help="also report device functions (.func), not only kernels")
    parser.set_defaults(func=run)


def bundled_example() -> Path:
    """Path of the example PTX shipped inside the package."""
    return Path(str(resources.files("kernelcheck") / "examples" / BUNDLED_EXAMPLE))


def run(args: argparse.Namespace) -> int:
    """Analyse ``args.file`` and print the report; returns the exit status."""
    path = args.file
    if path is None:
        path = str(bundled_example())
        if not args.json:
            print(f"(no FILE given: analysing the bundled example {BUNDLED_EXAMPLE})\n")
    loaded = load_input(path, arch=args.arch)
    reports = list(_reports(loaded, args.kernel, args.functions))
    if args.kernel is not None and not any(kernels for _, kernels in reports):
        from kernelcheck.errors import KernelcheckError

        names = sorted({f.name for m in loaded.modules for f in m.module.kernels})
        raise KernelcheckError(
            f"{path}: no kernel named {args.kernel!r} (kernels: {', '.join(names) or 'none'})"
        )
    if args.json:
        json.dump(_json_document(loaded, reports), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_text(loaded, reports)
    return 1 if loaded.errors else 0


def _reports(loaded: LoadedInput, only: str | None, functions: bool):
    from kernelcheck.binary.demangle import demangle

    for entry in loaded.modules:
        chosen = []
        for function in entry.module.functions:
            if function.body is None or not (function.is_kernel or functions):
                continue
            if only is not None and only not in (function.name, demangle(function.name)):
                continue
            chosen.append((function, kernel_structure(function, entry.module)))
        yield entry, chosen


def _json_document(loaded: LoadedInput, reports) -> dict:
    from kernelcheck.binary.demangle import demangle

    modules = []
    for entry, kernels in reports:
        module = entry.module
        items = []
        for function, structure in kernels:
            item = structure.to_json()
            item["demangled"] = demangle(function.name)
            items.append(item)
        modules.append({
            "language": entry.language,
            "arch": entry.arch,
            "origin": entry.origin,
            "note": entry.note,
            "ptx_version": module.version,
            "target": list(module.target),
            "kernels": items,
        })
    return {
        "format_version": JSON_FORMAT_VERSION,
        "kernelcheck_version": __version__,
        "file": loaded.path,
        "input_kind": loaded.kind,
        "modules": modules,
        "errors": list(loaded.errors),
    }


def _print_text(loaded: LoadedInput, reports) -> None:
    for entry, kernels in reports:
        _print_module_header(loaded, entry, len(kernels))
        for function, structure in kernels:
            _print_kernel(structure, function)
    for error in loaded.errors:
        print(f"error: {error}")


def _print_module_header(loaded: LoadedInput, entry: LoadedModule, count: int) -> None:
    module = entry.module
    where = "" if entry.origin == "file" else f" [{entry.origin}]"
    language = entry.language.upper()
    version = f" {module.version}" if module.version else ""
    target = ", ".join(module.target) or entry.arch or "?"
    print(f"{loaded.path}{where}: {language}{version}, target {target}, {count} kernel(s)")
    if entry.note:
        print(f"  ({entry.note})")
    print()


def _print_kernel(structure: KernelStructure, function) -> None:
    from kernelcheck.binary.demangle import demangle

    name = structure.name
    demangled = demangle(name)
    shown = name if demangled == name else f"{name}  ({demangled})"
    loops = len(structure.loops)
    print(f"{structure.kind} {shown}: {structure.instruction_count} instructions, "
          f"{len(structure.blocks)} blocks, {loops} loop{'s' if loops != 1 else ''}")
    if structure.params:
        print("  parameters:")
        width = max(len(p.name) for p in structure.params)
        for p in structure.params:
            pointer = "  pointer" if p.used_as_pointer else ""
            print(f"    {p.name:<{width}}  .{p.ptx_type:<4} {p.size:>3} B at +{p.offset}"
                  f"{pointer}")
    for loop in structure.loops:
        print(f"  loop: header {loop.header}, latch {', '.join(loop.latches)}, "
              f"{len(loop.blocks)} blocks, depth {loop.depth}")
    if structure.accesses:
        print("  memory accesses:")
        for access in structure.accesses:
            kind = access.kind if access.atomic_op is None else f"atomic {access.atomic_op}"
            width = f"{access.width} B" if access.width else "? B"
            where = ""
            if access.line is not None:
                where = f"  {Path(access.file).name if access.file else '?'}:{access.line}"
            print(f"    #{access.index:<4} {access.space:<7} {kind:<11} {width:>5}  "
                  f"{access.text}{where}")
    else:
        print("  memory accesses: none in global or shared memory")
    if structure.unknown_opcodes:
        print(f"  unknown opcodes: {', '.join(structure.unknown_opcodes)}")
    print()
