"""``kernelcheck analyze FILE``: per kernel, what it is made of and what is proven about it.

Without FILE, the bundled example (``elementwise.ptx``, five small kernels compiled for
sm_90) is analysed, so the command shows what it does on a fresh install.

Each kernel gets its structural report (:mod:`kernelcheck.structure`) and its idempotency
class (:mod:`kernelcheck.analysis.summary`): ``always``, ``never``, ``conditional`` (with the
condition in words) or ``not_proven`` (with the reason). ``--instance`` with ``--kernel``,
``--grid`` and ``--block`` decides one kernel instance with its LaunchCheck.
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
    parser.add_argument("--prefer", choices=("sass", "ptx", "both"), default="sass",
                        help="where a binary holds both a cubin and PTX for an "
                             "architecture, analyse the SASS (default: it is what runs), "
                             "the PTX, or both")
    parser.add_argument("--jsonl", metavar="OUT",
                        help="analyse every image over a process pool and stream one JSON "
                             "line per kernel to OUT ('-' for stdout); a summary follows")
    parser.add_argument("--jobs", type=int, metavar="N",
                        help="worker processes for --jsonl (default: all cores)")
    from kernelcheck.executor import add_executor_options

    add_executor_options(parser, with_jobs=False)
    parser.add_argument("--instance", metavar="PARAMS",
                        help="decide one instance of --kernel: 'name=value,...' with PTX "
                             "parameter names or p0..pN; integers (0x...), floats, or "
                             "hex:<bytes> for an aggregate")
    parser.add_argument("--grid", metavar="X[,Y,Z]", default="1",
                        help="grid dimensions of the instance (default 1)")
    parser.add_argument("--block", metavar="X[,Y,Z]", default="1",
                        help="block dimensions of the instance (default 1)")
    parser.add_argument("--allocations", metavar="BASE:SIZE,...",
                        help="live device allocations, for accesses whose address depends "
                             "on memory contents")
    parser.add_argument("--regions", action="store_true",
                        help="also place re-executable region boundaries in each kernel "
                             "(docs/regions.md): instruction ranges, source lines, the "
                             "clobber each boundary cuts, live state in bytes")
    parser.add_argument("--warm-cache", action="store_true",
                        help="store the analysis of FILE (.ptx, .cubin or fatbin) in the "
                             "analysis cache that `kernelcheck run` reads")
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
    if getattr(args, "warm_cache", False):
        from kernelcheck.cache.warm import warm_cache_command

        return warm_cache_command(path, args.arch)
    if getattr(args, "jsonl", None):
        return _run_jsonl(path, args)
    if getattr(args, "cluster", None) or getattr(args, "scheduler", None):
        from kernelcheck.errors import KernelcheckError

        raise KernelcheckError("--cluster and --scheduler apply to library-scale runs: add "
                               "--jsonl OUT")
    instance = _instance_arguments(args)
    loaded = load_input(path, arch=args.arch, prefer=getattr(args, "prefer", "sass"))
    reports = list(_reports(loaded, args.kernel, args.functions))
    if args.kernel is not None and not any(kernels for _, kernels in reports):
        from kernelcheck.errors import KernelcheckError

        names = sorted({f.name for m in loaded.modules for f in m.module.kernels})
        raise KernelcheckError(
            f"{path}: no kernel named {args.kernel!r} (kernels: {', '.join(names) or 'none'})"
        )
    verdicts = _decide(reports, instance) if instance is not None else {}
    if args.json:
        document = _json_document(loaded, reports, verdicts, instance)
        if getattr(args, "regions", False):
            _add_regions(document, reports)
        json.dump(document, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_text(loaded, reports, verdicts, instance)
        if getattr(args, "regions", False):
            _print_regions(reports)
    return 1 if loaded.errors else 0


def _instance_arguments(args: argparse.Namespace):
    """``(values, grid, block, allocations)`` from the command line, or ``None``."""
    from kernelcheck.launch.params import InstanceInputError, parse_dims, parse_instance_text

    if args.instance is None:
        if args.allocations is not None:
            raise InstanceInputError("--allocations needs --instance")
        return None
    if args.kernel is None:
        raise InstanceInputError("--instance needs --kernel NAME")
    values = parse_instance_text(args.instance)
    grid = parse_dims(args.grid, "--grid")
    block = parse_dims(args.block, "--block")
    allocations = None
    if args.allocations is not None:
        allocations = []
        for item in args.allocations.split(","):
            base, sep, size = item.partition(":")
            try:
                allocations.append((int(base, 0), int(size, 0)))
            except ValueError:
                raise InstanceInputError(f"malformed allocation {item!r} (expected "
                                         f"BASE:SIZE, e.g. 0x7f0000000000:4096)") from None
            if not sep or allocations[-1][1] <= 0:
                raise InstanceInputError(f"malformed allocation {item!r} (expected "
                                         f"BASE:SIZE with SIZE > 0)")
    return values, grid, block, allocations


def _decide(reports, instance) -> dict:
    """Per analysed kernel (by ``id`` of its function), the instance verdict."""
    from kernelcheck.launch.evaluate import evaluate
    from kernelcheck.launch.params import param_buffer

    values, grid, block, allocations = instance
    out = {}
    for _entry, kernels in reports:
        for function, _structure, summary in kernels:
            if summary is None:
                continue
            params = param_buffer(function, values)
            out[id(function)] = evaluate(summary.launch_check, params, grid, block,
                                         allocations)
    return out


def _reports(loaded: LoadedInput, only: str | None, functions: bool):
    from kernelcheck.binary.demangle import demangle

    for entry in loaded.modules:
        chosen = []
        for function in entry.module.functions:
            if function.body is None or not (function.is_kernel or functions):
                continue
            if only is not None and only not in (function.name, demangle(function.name)):
                continue
            chosen.append((function, kernel_structure(function, entry.module),
                           _summary(entry, function)))
        yield entry, chosen


def _summary(entry: LoadedModule, function):
    """The idempotency analysis of ``function`` (SASS kernels are lifted first)."""
    from kernelcheck.analysis.summary import analyze_kernel

    if not function.is_kernel:
        return None
    if entry.language != "ptx":
        from kernelcheck.sass.analysis import analyze_sass_kernel

        return analyze_sass_kernel(entry.module, function)
    return analyze_kernel(entry.module, function)


def _json_document(loaded: LoadedInput, reports, verdicts=None, instance=None) -> dict:
    from kernelcheck.binary.demangle import demangle

    verdicts = verdicts or {}
    modules = []
    for entry, kernels in reports:
        module = entry.module
        items = []
        for function, structure, summary in kernels:
            item = structure.to_json()
            item["demangled"] = demangle(function.name)
            if summary is not None:
                _merge_summary(item, summary)
            verdict = verdicts.get(id(function))
            if verdict is not None:
                item["instance"] = _instance_json(instance, verdict)
                item.update({"verdict": verdict.verdict, "decided_by": verdict.decided_by,
                             "detail": verdict.detail,
                             "clobbered": None if verdict.clobbered is None
                             else verdict.clobbered.to_json()})
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


def _merge_summary(item: dict, summary) -> None:
    """Add the analysis fields to a kernel's structural JSON item.

    Analysed accesses of the kernel's own instructions extend the structural access entry
    of the same instruction; accesses inlined from device functions are appended, with the
    callee in ``function`` and the call instructions in ``call_path``.
    """
    data = summary.to_json()
    item["class"] = data["class"]
    item["reasons"] = data["reasons"]
    item["conditions"] = data["conditions"]
    item["launch_check"] = data["launch_check"]
    own = {a["instruction"]: a for a in item["accesses"]}
    for access, analysed in zip(summary.accesses, data["accesses"], strict=True):
        fields = {"address": analysed["address"], "guard": analysed["guard"],
                  "base": analysed["base"], "byte_range": analysed["byte_range"],
                  "rule": analysed["rule"], "call_path": analysed["call_path"],
                  "function": analysed["function"]}
        if not access.call_path and access.index in own:
            own[access.index].update(fields)
            continue
        item["accesses"].append({
            "instruction": access.index, "text": access.instruction, "space": access.space,
            "width": access.width, "kind": access.kind, "atomic_op": None,
            "line": access.line, "file": None, **fields})


def _instance_json(instance, verdict) -> dict:
    values, grid, block, allocations = instance
    return {"params": {k: (f"hex:{v.hex()}" if isinstance(v, bytes) else v)
                       for k, v in values.items()},
            "grid": list(grid), "block": list(block),
            "allocations": None if allocations is None else [list(a) for a in allocations]}


def _print_text(loaded: LoadedInput, reports, verdicts=None, instance=None) -> None:
    verdicts = verdicts or {}
    for entry, kernels in reports:
        _print_module_header(loaded, entry, len(kernels))
        for function, structure, summary in kernels:
            _print_kernel(structure, function, summary, verdicts.get(id(function)),
                          instance)
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


def _print_kernel(structure: KernelStructure, function, summary=None, verdict=None,
                  instance=None) -> None:
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
    if summary is not None:
        _print_summary(summary)
    if verdict is not None:
        _print_verdict(verdict, instance)
    print()


_CLASS_TEXT = {
    "always": "always idempotent (every instance)",
    "never": "never idempotent (no instance)",
    "conditional": "conditionally idempotent (depends on the arguments)",
    "not_proven": "not proven",
}


def _print_summary(summary) -> None:
    print(f"  idempotency: {_CLASS_TEXT.get(summary.kernel_class, summary.kernel_class)}")
    if summary.kernel_class == "conditional":
        for condition in summary.conditions:
            print(f"    - {condition}")
    else:
        for reason in summary.reasons:
            print(f"    - {reason}")


def _print_verdict(verdict, instance) -> None:
    values, grid, block, _ = instance
    dims = f"grid {'x'.join(map(str, grid))}, block {'x'.join(map(str, block))}"
    print(f"  instance ({dims}): {verdict.verdict.replace('_', ' ')} "
          f"(decided by {verdict.decided_by})")
    if verdict.detail:
        print(f"    {verdict.detail}")
    if verdict.clobbered:
        ranges = ", ".join(f"[{a:#x}, {b:#x})" for a, b in verdict.clobbered.ranges[:8])
        more = len(verdict.clobbered.ranges) - 8
        print(f"    clobbered bytes ({len(verdict.clobbered)}): {ranges}"
              f"{f' and {more} more ranges' if more > 0 else ''}")


def _run_jsonl(path: str, args: argparse.Namespace) -> int:
    """The library-scale run: an executor (local pool or Dask), JSON lines as kernels
    finish, a summary."""
    from kernelcheck.corpus import run_corpus

    sink = sys.stdout if args.jsonl == "-" else open(args.jsonl, "w")  # noqa: SIM115
    only = args.kernel

    def write(record) -> None:
        if only is not None and record.kernel is not None and only not in (
                record.kernel, record.to_json()["demangled"]):
            return
        sink.write(json.dumps(record.to_json()) + "\n")
        sink.flush()

    from kernelcheck.executor import executor_from_args

    try:
        with executor_from_args(args) as executor:
            summary = run_corpus(path, arch=args.arch, prefer=args.prefer, on_record=write,
                                 executor=executor)
    finally:
        if sink is not sys.stdout:
            sink.close()
    report = sys.stderr if args.jsonl == "-" else sys.stdout
    ok = summary.kernels - summary.kernels_failed
    print(f"{path}: {summary.images} image(s), {summary.kernels} kernel(s): {ok} analysed, "
          f"{summary.kernels_failed} failed, {summary.images_failed} image(s) failed, "
          f"in {summary.seconds:.1f} s", file=report)
    for cause, count in summary.causes.most_common():
        print(f"  {count} failed: {cause}", file=report)
    for error in summary.input_errors:
        print(f"error: {error}", file=report)
    return 1 if summary.causes or summary.input_errors else 0


def _kernel_regions(entry: LoadedModule, function):
    """The re-executable regions of a kernel (PTX only), or ``None`` for the rest."""
    from kernelcheck.regions import kernel_regions

    if entry.language != "ptx" or not function.is_kernel:
        return None
    return kernel_regions(entry.module, function)


def _add_regions(document: dict, reports) -> None:
    """Put a ``regions`` field in every kernel item of a ``--json`` document."""
    for (entry, kernels), module in zip(reports, document["modules"], strict=True):
        for (function, _structure, _summary), item in zip(kernels, module["kernels"],
                                                          strict=True):
            regions = _kernel_regions(entry, function)
            if regions is not None:
                item["regions"] = regions.to_json()
            elif function.is_kernel:
                item["regions"] = {"status": "not_proven",
                                   "reason": "regions are placed on PTX; this image has "
                                             "only SASS"}


def _print_regions(reports) -> None:
    """The ``--regions`` section of the text report."""
    from kernelcheck.regions import format_regions

    for entry, kernels in reports:
        for function, _structure, _summary in kernels:
            regions = _kernel_regions(entry, function)
            if regions is None:
                continue
            print(f"regions of {function.name}:")
            print(format_regions(regions))
            print()
