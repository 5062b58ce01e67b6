"""One record per analysed kernel: what ``--format jsonl`` writes and SARIF is made from.

Every record carries the kernel (mangled, short and demangled names), its **class**
(``always``, ``conditional``, ``never``, ``not_proven``), a **verdict** (the instance's, with
``--instance``; otherwise what the class says of every instance: ``idempotent``,
``not_idempotent``, ``depends_on_arguments``, ``not_proven``) and a **reason** (the first
condition or reason; all of them in ``reasons``), plus ``results``: one per condition or
reason with the places in the input it names, so a viewer can show it at a line:

* PTX: the PTX file and line of the instruction (or of the ``.entry``), and the CUDA source
  file and line when the PTX carries ``.loc`` information;
* SASS: the binary, the kernel and the instruction's offset in its code (``/*0120*/``), and
  the CUDA source line when the cubin was built with ``-lineinfo``.

Records are plain dicts (they cross process boundaries when a library is analysed over a
pool) in format :data:`RECORD_FORMAT_VERSION`.
"""

from __future__ import annotations

from kernelcheck.names import name_forms, short_name

__all__ = ["RECORD_FORMAT_VERSION", "CLASS_VERDICT", "kernel_record", "failure_record"]

RECORD_FORMAT_VERSION = 2

#: What a kernel's class says of all its instances.
CLASS_VERDICT = {"always": "idempotent", "never": "not_idempotent",
                 "conditional": "depends_on_arguments", "not_proven": "not_proven"}


def _instruction(module, function, access):
    """The IR instruction an analysed access names (a callee's, for inlined accesses)."""
    owner = function
    if access.function and access.function != function.name and module is not None:
        try:
            owner = module.get_function(access.function)
        except KeyError:
            return None
    instructions = owner.instructions
    if 0 <= access.index < len(instructions):
        return instructions[access.index]
    return None


def _location(file: str, language: str, module, function, instr, role: str) -> dict:
    """Where ``instr`` (or the kernel itself, for ``None``) is, in the input and the source."""
    place: dict = {"file": file, "kernel": function.name, "role": role}
    if instr is None:
        if language == "ptx" and function.pos is not None:
            place["line"] = function.pos.line
        return place
    place["instruction"] = instr.full_opcode
    if language == "ptx":
        if instr.pos is not None:
            place["line"] = instr.pos.line
    elif instr.pos is not None:
        place["offset"] = instr.pos.line
    if instr.loc is not None and module is not None:
        source = module.files.get(instr.loc.file)
        if source:
            place["source_file"] = source
            place["source_line"] = instr.loc.line
    return place


def _results(file, language, module, function, summary) -> list[dict]:
    """One result per condition (conditional kernels) or reason, with its locations."""
    place = lambda access, role: _location(  # noqa: E731
        file, language, module, function, _instruction(module, function, access), role)
    accesses = summary.accesses
    if summary.kernel_class == "conditional" and summary.conditions:
        groups: dict[tuple, tuple[list, list]] = {}
        for w, r in summary.launch_check.pairs:
            if not (0 <= w < len(accesses) and 0 <= r < len(accesses)):
                continue
            key = (accesses[w].base, accesses[r].base)
            writes, reads = groups.setdefault(key, ([], []))
            if w not in writes:
                writes.append(w)
            if r not in reads:
                reads.append(r)
        results = []
        for text, (writes, reads) in zip(summary.conditions, groups.values(), strict=False):
            results.append({"message": text,
                            "locations": [place(accesses[w], "write") for w in writes]
                            + [place(accesses[r], "read") for r in reads]})
        if len(results) == len(summary.conditions):
            return results
    results = []
    for reason in summary.reasons:
        named = [a for a in accesses if _names(reason, a, language, module, function)]
        locations = [place(a, a.kind) for a in named] or [
            _location(file, language, module, function, None, "kernel")]
        results.append({"message": reason, "locations": locations})
    return results


def _names(reason: str, access, language: str, module, function) -> bool:
    """Whether ``reason`` names ``access``'s instruction (reasons name instructions the way
    :func:`kernelcheck.analysis.summary._site` renders them)."""
    if language == "ptx":
        return f"{access.instruction} #{access.index}" in reason
    instr = _instruction(module, function, access)
    if instr is None or instr.pos is None:
        return False
    return f"/*{instr.pos.line:04x}*/" in reason


def kernel_record(*, file: str, image: str, arch: str | None, language: str, module,
                  function, summary, verdict=None, full_names: bool = False) -> dict:
    """The record of one analysed kernel (see the module documentation).

    Parameters
    ----------
    file, image, arch, language : str
        The input file, where the image was in it (``file`` for a plain .ptx or cubin), its
        architecture and ``ptx`` or ``sass``.
    module, function : Module, Function
        The kernel's IR (positions and source lines come from it).
    summary : KernelSummary
        Its analysis.
    verdict : InstanceVerdict, optional
        The verdict of the instance given with ``--instance``.
    full_names : bool
        Name the kernel by its demangled signature in ``name`` (default: short name).
    """
    demangled = name_forms(function.name)[0]
    reasons = list(summary.conditions if summary.kernel_class == "conditional"
                   and summary.conditions else summary.reasons)
    record = {
        "format_version": RECORD_FORMAT_VERSION,
        "kernel": function.name,
        "name": demangled if full_names else short_name(function.name),
        "demangled": demangled,
        "class": summary.kernel_class,
        "verdict": CLASS_VERDICT.get(summary.kernel_class, "not_proven"),
        "reason": reasons[0] if reasons else "",
        "reasons": reasons,
        "file": file,
        "image": image,
        "arch": arch,
        "language": language,
        "results": _results(file, language, module, function, summary),
    }
    if verdict is not None:
        record["verdict"] = verdict.verdict
        record["instance_reason"] = verdict.detail
        record["decided_by"] = verdict.decided_by
    return record


def failure_record(*, file: str, image: str, arch: str | None, language: str,
                   kernel: str | None, cause: str, error: str) -> dict:
    """A kernel (or a whole image, ``kernel=None``) that could not be analysed."""
    name = kernel or ""
    return {
        "format_version": RECORD_FORMAT_VERSION,
        "kernel": kernel,
        "name": short_name(name) if name else None,
        "demangled": name_forms(name)[0] if name else None,
        "class": "not_proven",
        "verdict": "not_proven",
        "reason": f"not analysed: {cause}: {error}",
        "reasons": [f"not analysed: {cause}: {error}"],
        "file": file,
        "image": image,
        "arch": arch,
        "language": language,
        "status": "failed",
        "cause": cause,
        "error": error,
        "results": [{"message": f"not analysed: {cause}: {error}",
                     "locations": [{"file": file, "kernel": kernel, "role": "kernel"}]}],
    }
