"""The ``analyze`` report for people (text) and as one JSON document (``--format json``).

The text report gives, per module, each kernel's structure (parameters, loops, memory
accesses with their source lines), its idempotency class with the conditions or reasons,
the verdict of the ``--instance`` when one was given, and with ``--regions`` its
re-executable regions. Kernels are named by their short name (Nsight Compute's style) unless
``--full-names`` is given; a short name two kernels share is given with its template
arguments.
"""

from __future__ import annotations

from pathlib import Path

from kernelcheck import __version__
from kernelcheck.inputs import LoadedInput, LoadedModule
from kernelcheck.structure import KernelStructure

#: Version of the JSON document ``--format json`` writes (docs/json-schema.md).
JSON_FORMAT_VERSION = 1

__all__ = ["JSON_FORMAT_VERSION", "json_document", "add_regions", "print_text",
           "print_regions", "kernel_regions"]

def json_document(loaded: LoadedInput, reports, verdicts=None, instance=None) -> dict:
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


def kernel_labels(names, full_names: bool = False) -> dict[str, str]:
    """How the text report names each kernel: its short name, or its template signature
    (``axpby<float>``) when two kernels share the short name, or with ``full_names`` the
    demangled signature."""
    from collections import Counter

    from kernelcheck.names import MAX_SHORT, name_forms, short_name

    names = list(dict.fromkeys(names))
    if full_names:
        return {n: name_forms(n)[0] for n in names}
    counts = Counter(short_name(n) for n in names)
    labels = {}
    for name in names:
        label = short_name(name)
        if counts[label] > 1:
            label = name_forms(name)[1]
            if len(label) > MAX_SHORT:
                label = label[:MAX_SHORT - 1] + "…"
        labels[name] = label
    return labels


def print_text(loaded: LoadedInput, reports, verdicts=None, instance=None,
               labels: dict[str, str] | None = None) -> None:
    verdicts = verdicts or {}
    labels = labels or {}
    for entry, kernels in reports:
        _print_module_header(loaded, entry, len(kernels))
        for function, structure, summary in kernels:
            _print_kernel(structure, function, summary, verdicts.get(id(function)),
                          instance, labels.get(function.name), entry.language)
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
                  instance=None, label: str | None = None, language: str = "ptx") -> None:
    shown = label or structure.name
    loops = len(structure.loops)
    print(f"{structure.kind} {shown}: {structure.instruction_count} instructions, "
          f"{len(structure.blocks)} blocks, {loops} loop{'s' if loops != 1 else ''}")
    if structure.params:
        print("  parameters:")
        # nvcc names a C++ kernel's parameters after its mangled name: param_N (accepted by
        # --instance, like pN) names the same parameter readably.
        names = [f"param_{k}" if structure.name.startswith("_Z") else p.name
                 for k, p in enumerate(structure.params)]
        width = max(len(n) for n in names)
        for p, name in zip(structure.params, names, strict=True):
            pointer = "  pointer" if p.used_as_pointer else ""
            print(f"    {name:<{width}}  .{p.ptx_type:<4} {p.size:>3} B at +{p.offset}"
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
            print(f"    {_instruction_id(function, access.index, language):<5} "
                  f"{access.space:<7} {kind:<11} {width:>5}  {access.text}{where}")
    else:
        print("  memory accesses: none in global or shared memory")
    if structure.unknown_opcodes:
        print(f"  unknown opcodes: {', '.join(structure.unknown_opcodes)}")
    if summary is not None:
        _print_summary(summary)
    if verdict is not None:
        _print_verdict(verdict, instance)
    print()


def _instruction_id(function, index: int, language: str) -> str:
    """``#15`` (the PTX instruction index) or ``/*00d0*/`` (the SASS offset, as nvdisasm
    prints it)."""
    if language != "ptx":
        instructions = function.instructions
        if 0 <= index < len(instructions) and instructions[index].pos is not None:
            return f"/*{instructions[index].pos.line:04x}*/"
    return f"#{index}"


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


def kernel_regions(entry: LoadedModule, function):
    """The re-executable regions of a kernel (PTX only), or ``None`` for the rest."""
    from kernelcheck.regions import kernel_regions

    if entry.language != "ptx" or not function.is_kernel:
        return None
    return kernel_regions(entry.module, function)


def add_regions(document: dict, reports) -> None:
    """Put a ``regions`` field in every kernel item of a ``--json`` document."""
    for (entry, kernels), module in zip(reports, document["modules"], strict=True):
        for (function, _structure, _summary), item in zip(kernels, module["kernels"],
                                                          strict=True):
            regions = kernel_regions(entry, function)
            if regions is not None:
                item["regions"] = regions.to_json()
            elif function.is_kernel:
                item["regions"] = {"status": "not_proven",
                                   "reason": "regions are placed on PTX; this image has "
                                             "only SASS"}


def print_regions(reports) -> None:
    """The ``--regions`` section of the text report."""
    from kernelcheck.regions import format_regions

    for entry, kernels in reports:
        for function, _structure, _summary in kernels:
            regions = kernel_regions(entry, function)
            if regions is None:
                continue
            print(f"regions of {function.name}:")
            print(format_regions(regions))
            print()
