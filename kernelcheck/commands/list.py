"""``kernelcheck list FILE``: the device images in a binary and the kernels in each."""

from __future__ import annotations

import argparse
import json

from kernelcheck.binary import describe_binary, open_binary
from kernelcheck.binary.describe import format_binary


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``list`` sub-command."""
    parser = subparsers.add_parser(
        "list",
        help="list the device images and kernels of a cubin, fatbin, host ELF or PTX file",
        description="List every embedded device image (kind, architecture, size, "
        "compression, kernel count) and the kernels of each cubin.",
    )
    parser.add_argument("file", help="cubin, fatbin, executable, shared library or PTX file")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--no-kernels", action="store_true", help="images only")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """List the file; exit status 1 when parts of it could not be read, else 0."""
    description = describe_binary(open_binary(args.file))
    if args.no_kernels:
        for image in description["images"]:
            image.pop("kernels", None)
    if args.json:
        print(json.dumps(description, indent=2))
    else:
        print(format_binary(description, kernels=not args.no_kernels))
    broken = description["errors"] or any("error" in i for i in description["images"])
    return 1 if broken else 0
