"""Text and JSON-ready descriptions of binaries, for the command line (``kernelcheck list``)."""

from __future__ import annotations

from kernelcheck.binary.cubin import CubinFile, CubinKernel
from kernelcheck.binary.image import BinaryImage, EmbeddedImage
from kernelcheck.errors import BinaryFormatError

__all__ = ["describe_kernel", "describe_image", "describe_binary", "format_binary"]


def describe_kernel(kernel: CubinKernel) -> dict:
    """A kernel as a JSON-ready dict: names, parameter layout, base, exits, resources."""
    return {
        "name": kernel.name,
        "demangled": kernel.demangled,
        "text_size": len(kernel.text),
        "param_base": kernel.param_base,
        "param_size": kernel.param_size,
        "params": [
            {"ordinal": p.ordinal, "offset": p.offset, "size": p.size} for p in kernel.params
        ],
        "exit_offsets": list(kernel.exit_offsets),
        "regcount": kernel.regcount,
        "frame_size": kernel.frame_size,
        "max_threads": list(kernel.max_threads) if kernel.max_threads else None,
        "num_barriers": kernel.num_barriers,
    }


def describe_image(index: int, image: EmbeddedImage) -> dict:
    """An embedded image as a JSON-ready dict; a cubin that fails to parse gets ``error``."""
    entry = {
        "index": index,
        "kind": image.kind,
        "arch": image.arch,
        "size": len(image.data),
        "stored_size": image.stored_size,
        "compressed": image.compressed,
        "compression": image.compression,
        "origin": image.origin.describe(),
    }
    if image.kind == "cubin":
        try:
            cubin: CubinFile = image.cubin()
        except BinaryFormatError as error:
            entry["error"] = str(error)
            entry["kernels"] = []
        else:
            entry["kernels"] = [describe_kernel(k) for k in cubin.iter_kernels()]
        entry["num_kernels"] = len(entry["kernels"])
    return entry


def describe_binary(binary: BinaryImage) -> dict:
    """The whole listing: input kind, every image, and the errors met."""
    return {
        "file": binary.filename,
        "kind": binary.kind,
        "images": [describe_image(i, image) for i, image in enumerate(binary.images)],
        "errors": [str(error) for error in binary.errors],
    }


def format_binary(description: dict, *, kernels: bool = True) -> str:
    """Render :func:`describe_binary` output as aligned text."""
    lines = [
        f"{description['file'] or '<input>'}: {description['kind']}, "
        f"{len(description['images'])} image(s)"
    ]
    for image in description["images"]:
        packed = (
            f" {image['compression']}-compressed ({image['stored_size']} stored)"
            if image["compressed"]
            else ""
        )
        count = f" {image['num_kernels']} kernel(s)" if image["kind"] == "cubin" else ""
        lines.append(
            f"  [{image['index']}] {image['kind']:5} {image['arch']:12} "
            f"{image['size']:8} bytes{packed}{count}  {image['origin']}"
        )
        if "error" in image:
            lines.append(f"      error: {image['error']}")
        if kernels:
            for kernel in image.get("kernels", ()):
                params = ", ".join(f"{p['offset']}:{p['size']}" for p in kernel["params"])
                base = f"0x{kernel['param_base']:x}" if kernel["param_base"] is not None else "?"
                lines.append(f"      {kernel['demangled']}  [params @{base}: {params}]")
    for error in description["errors"]:
        lines.append(f"  error: {error}")
    return "\n".join(lines)
