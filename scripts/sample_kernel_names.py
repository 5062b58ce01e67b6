#!/usr/bin/env python3
"""Write a sample of the mangled kernel names of a CUDA library, as demangler test data.

    python scripts/sample_kernel_names.py LIB.so --count 300 --out tests/binary/data/NAME.txt

Every cubin entry of LIB.so is read with kernelcheck's own binary reader (compressed entries
decompressed), the kernel symbols of all of them are collected, de-duplicated and sorted, and
``--count`` names are taken at even steps over that sorted list, so the sample spans the
library's namespaces (at::native, cutlass, flash, cub, ...). The output starts with comment
lines saying where the names came from. Tests never run this script.
"""

from __future__ import annotations

import argparse
import hashlib
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library")
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--source", default="", help="provenance line: where LIB.so came from")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    from kernelcheck.binary.image import open_binary

    with open(args.library, "rb") as handle:
        data = handle.read()
    image = open_binary(data, filename=args.library)
    names: set[str] = set()
    for embedded in image.images:
        if embedded.kind != "cubin":
            continue
        try:
            names.update(k.name for k in embedded.cubin().iter_kernels())
        except Exception as error:  # noqa: BLE001 - a corrupt entry only shrinks the pool
            print(f"skipped {embedded.origin.describe()}: {error}", file=sys.stderr)
    ordered = sorted(names)
    step = max(len(ordered) / args.count, 1.0)
    sample = [ordered[int(k * step)] for k in range(min(args.count, len(ordered)))]
    digest = hashlib.sha256(data).hexdigest()
    with open(args.out, "w") as out:
        out.write(f"# {len(sample)} of the {len(ordered)} distinct kernel names of "
                  f"{args.library.rsplit('/', 1)[-1]} (sha256 {digest[:16]}...)\n")
        if args.source:
            out.write(f"# source: {args.source}\n")
        out.write("# taken at even steps over the sorted names by "
                  "scripts/sample_kernel_names.py\n")
        out.writelines(name + "\n" for name in sample)
    print(f"{args.out}: {len(sample)} of {len(ordered)} names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
