"""``kernelcheck list FILE...``: the device images in binaries and the kernels in each.

FILE may be several files, a directory (searched recursively for device code), a quoted
glob or ``-`` (standard input). Exit status 0, or 2 when an input or a part of one cannot be
read (the parts that can are still listed).
"""

from __future__ import annotations

import argparse
import json
from contextlib import redirect_stdout

from kernelcheck.binary import describe_binary, open_binary
from kernelcheck.binary.describe import format_binary
from kernelcheck.commands.common import UsageError, add_output, examples, say
from kernelcheck.commands.exitcodes import EXIT_ERROR, EXIT_OK


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``list`` sub-command."""
    parser = subparsers.add_parser(
        "list",
        help="list the device images and kernels of cubin, fatbin, host ELF or PTX files",
        description="List every embedded device image (kind, architecture, size, "
        "compression, kernel count) and the kernels of each cubin.",
        epilog=examples("kernelcheck list build/libkernels.so --no-kernels",
                        "kernelcheck list build/ --format json -o images.json"),
    )
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="cubin, fatbin, executable, shared library or PTX files, "
                             "directories, quoted globs, or '-' for standard input")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="how the listing is written")
    add_output(parser, "the listing")
    parser.add_argument("--no-kernels", action="store_true", help="images only")
    parser.add_argument("--json", action="store_true",
                        help="same as --format json (kept for one release)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """List the files; exit status 2 when parts of them could not be read, else 0."""
    from kernelcheck.inputs import expand_inputs
    from kernelcheck.output.files import check_writable, open_output

    if args.json:
        if args.format != "text" and args.format != "json":
            raise UsageError("--json and --format disagree", "kernelcheck list")
        args.format = "json"
    if args.output not in (None, "-"):
        check_writable(args.output, "--output")
    descriptions = []
    for item in expand_inputs(args.files):
        source = item.data if item.data is not None else item.path
        description = describe_binary(open_binary(source, filename=item.path))
        if args.no_kernels:
            for image in description["images"]:
                image.pop("kernels", None)
        descriptions.append(description)
    with open_output(args.output) as out, redirect_stdout(out):
        if args.format == "json":
            whole = descriptions[0] if len(descriptions) == 1 else descriptions
            print(json.dumps(whole, indent=2))
        else:
            print("\n\n".join(format_binary(d, kernels=not args.no_kernels)
                              for d in descriptions))
    status = EXIT_OK
    for d in descriptions:
        unreadable = len(d["errors"]) + sum("error" in i for i in d["images"])
        if unreadable:
            say(f"kernelcheck: error: {d.get('file', '?')}: {unreadable} part(s) could not "
                f"be read (listed above as errors)")
            status = EXIT_ERROR
        elif not d["images"]:
            say(f"kernelcheck: error: {d.get('file', '?')}: no device image in this file")
            status = EXIT_ERROR
    return status
