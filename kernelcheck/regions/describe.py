"""Text for people: the regions and boundaries of a kernel, as ``analyze --regions`` prints."""

from __future__ import annotations

from kernelcheck.regions.build import KernelRegions

__all__ = ["format_regions"]


def _ranges(ranges) -> str:
    return ", ".join(f"#{a}" if a == b else f"#{a}-#{b}" for a, b in ranges)


def _lines(lines) -> str:
    if not lines:
        return "no source lines"
    return "source lines " + ", ".join(str(n) for n in lines)


def format_regions(regions: KernelRegions, indent: str = "  ") -> str:
    """The regions of a kernel as indented text lines.

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> from kernelcheck.regions import kernel_regions
    >>> m = parse_ptx(".version 8.0\\n.target sm_80\\n.address_size 64\\n"
    ...     ".visible .entry k(.param .u64 p) { .reg .b64 %rd<3>;"
    ...     " ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd2, %rd1;"
    ...     " st.global.u32 [%rd2], 7; ret; }")
    >>> print(format_regions(kernel_regions(m, m.kernels[0])))
      regions: one region (no clobber antidependence and no non-idempotent atomic)
        region 1 from #0: #0-#3, no source lines
    """
    out = []
    if regions.status == "not_proven":
        return f"{indent}regions: not proven ({regions.reason})"
    count = len(regions.boundaries)
    if regions.status == "one_region":
        head = f"one region ({regions.reason})"
    else:
        quality = ("minimum" if regions.optimal
                   else f"greedy; at least {regions.lower_bound} needed")
        head = f"{count} boundar{'y' if count == 1 else 'ies'} ({quality}); {regions.reason}"
    out.append(f"{indent}regions: {head}")
    if regions.shared_bytes or regions.local_bytes:
        out.append(f"{indent}  a resume also restores {regions.shared_bytes} bytes of static "
                   f"shared memory per block (plus the launch's dynamic shared memory) and "
                   f"{regions.local_bytes} bytes of local memory per thread")
    for number, region in enumerate(regions.regions, 1):
        flags = []
        if region.atomic:
            flags.append("holds non-idempotent atomic " + ", ".join(
                f"#{a}" for a in region.atomic) + " (never repeated: a boundary follows it)")
        if region.uncut:
            flags.append("NOT re-executable: " + "; ".join(region.uncut))
        extra = f" [{'; '.join(flags)}]" if flags else ""
        where = (f"#{region.start}" if len(region.start_site) < 2 else
                 f"#{region.start_site[-1]} via call #{region.start}")
        out.append(f"{indent}  region {number} from {where}: "
                   f"{_ranges(region.ranges)}, {_lines(region.lines)}{extra}")
    for b in regions.boundaries:
        line = f" (line {b.line})" if b.line is not None else ""
        live = ", ".join(b.live_registers) or "none"
        if len(b.frames) > 1:
            live = "; ".join(f"{f}: {', '.join(r) or 'none'}" for f, r in b.frames)
            live += "; and the call-scope .param variables of every frame"
        out.append(f"{indent}  boundary before {b.where()} {b.text}{line}: live state "
                   f"{b.live_bytes} bytes per thread ({live})")
        for cut in b.cuts:
            out.append(f"{indent}    cuts {cut}")
    return "\n".join(out)
