"""``kernelcheck bundle create|info|import``: analysis bundles to ship to every node.

``create FILES... -o NAME.kcb`` analyses every image of the files (``--jobs``, ``--cluster``
or ``--scheduler`` choose where) into one bundle; ``info NAME.kcb`` prints its manifest;
``import NAME.kcb`` copies its usable entries into the user's analysis cache. A program run
with ``KERNELCHECK_BUNDLES=a.kcb:b.kcb`` under ``kernelcheck run`` uses bundles without
importing them (docs/scale-out.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from kernelcheck.commands.common import add_quiet, examples
from kernelcheck.commands.exitcodes import EXIT_OK
from kernelcheck.errors import KernelcheckError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``bundle`` sub-command and its actions."""
    from kernelcheck.executor import add_executor_options

    parser = subparsers.add_parser(
        "bundle", help="create, inspect or import an analysis bundle (.kcb)",
        epilog=examples("kernelcheck bundle create -o app.kcb build/libapp.so"),
        description="Analysis bundles: the analyses of every kernel of some binaries in one "
                    "file, made once and shipped to every node.")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser(
        "create", help="analyse FILES into a bundle",
        description="Analyse every image of the FILEs into one bundle, written whole or not "
                    "at all.",
        epilog=examples("kernelcheck bundle create -o app.kcb --jobs 8 build/libapp.so"))
    create.add_argument("files", nargs="+", metavar="FILE",
                        help=".ptx, .cubin, fatbin, executable or shared library files, "
                             "directories or quoted globs")
    create.add_argument("-o", "--output", required=True, metavar="NAME.kcb",
                        help="the bundle to write")
    create.add_argument("--arch", metavar="SM", help="only fatbin entries for this "
                                                      "architecture")
    create.add_argument("--keep-failed", action="store_true",
                        help="write the bundle even when some images fail to analyse (they "
                             "are recorded as failed, their kernels not proven); without it "
                             "no bundle is written and the exit status is 2")
    add_executor_options(create)
    add_quiet(create)
    create.set_defaults(func=_create)
    info = actions.add_parser("info", help="show a bundle's manifest",
                              epilog=examples("kernelcheck bundle info app.kcb --format json"))
    info.add_argument("bundle", metavar="NAME.kcb")
    info.add_argument("--format", choices=("text", "json"), default="text",
                      help="how the manifest is written")
    info.add_argument("--json", action="store_true",
                      help="same as --format json (kept for one release)")
    info.set_defaults(func=_info)
    imp = actions.add_parser("import", help="copy a bundle into the user's analysis cache",
                             epilog=examples("kernelcheck bundle import app.kcb"))
    imp.add_argument("bundle", metavar="NAME.kcb")
    imp.set_defaults(func=_import)


def _create(args: argparse.Namespace) -> int:
    from kernelcheck.bundle import create_bundle
    from kernelcheck.executor import executor_from_args
    from kernelcheck.inputs import expand_inputs
    from kernelcheck.output.files import check_writable
    from kernelcheck.output.progress import progress_enabled

    check_writable(args.output, "--output")
    files = [item.path for item in expand_inputs(args.files)]
    if any(path == "<stdin>" for path in files):
        raise KernelcheckError("bundle create reads files, not standard input")
    with executor_from_args(args) as executor:
        made = create_bundle(files, args.output, arch=args.arch, executor=executor,
                             progress=progress_enabled(args.quiet),
                             keep_failed=args.keep_failed)
    if not made.path:
        for failure in made.failures[:5]:
            print(f"  failed: {failure}")
        raise KernelcheckError(f"{args.output} not written: {made.images_failed} of "
                               f"{made.images} image(s) failed to analyse (listed above; "
                               f"--keep-failed writes the bundle anyway)")
    print(f"{made.path}: {made.kernels} kernel(s) from {made.images} image(s), "
          f"{made.images_failed} image(s) failed")
    for failure in made.failures:
        print(f"  failed: {failure}")
    return EXIT_OK


def _info(args: argparse.Namespace) -> int:
    from kernelcheck.bundle import read_bundle
    from kernelcheck.bundle.store import warn_ignored

    info = read_bundle(args.bundle)
    warning = warn_ignored(info)
    if warning:
        print(warning, file=sys.stderr)
    if args.json or args.format == "json":
        json.dump(info.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    created = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(info.created))
    print(f"{info.path}: bundle format {info.format_version}, analyzer "
          f"{info.analyzer_version} (kernelcheck {info.kernelcheck_version}), created "
          f"{created}")
    print(f"{info.kernels} kernel(s): {info.usable} usable by this analyzer, {info.stale} "
          f"of another analyzer version, {info.orphans} of unlisted images")
    arches = sorted({i.arch for i in info.images})
    print(f"{len(info.images)} image(s), architectures: {', '.join(arches) or 'none'}")
    for image in info.images:
        line = (f"  {image.image_hash[:16]} {image.arch:6} {image.kind:6} {image.kernels:5} "
                f"kernel(s)  {image.file} {image.origin}")
        if image.status != "done":
            line += f"  [{image.status}: {image.detail}]"
        print(line)
    return 0


def _import(args: argparse.Namespace) -> int:
    from kernelcheck.bundle import import_bundle
    from kernelcheck.cache import AnalysisCache

    cache = AnalysisCache()
    try:
        kernels, images = import_bundle(args.bundle, cache)
    finally:
        cache.close()
    print(f"{args.bundle}: {kernels} kernel(s) of {images} image(s) imported into "
          f"{cache.path}")
    return 0
