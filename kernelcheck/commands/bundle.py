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


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``bundle`` sub-command and its actions."""
    from kernelcheck.executor import add_executor_options

    parser = subparsers.add_parser(
        "bundle", help="create, inspect or import an analysis bundle (.kcb)",
        description="Analysis bundles: the analyses of every kernel of some binaries in one "
                    "file, made once and shipped to every node.")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="analyse FILES into a bundle")
    create.add_argument("files", nargs="+", metavar="FILE",
                        help=".ptx, .cubin, fatbin, executable or shared library")
    create.add_argument("-o", "--output", required=True, metavar="NAME.kcb",
                        help="the bundle to write")
    create.add_argument("--arch", metavar="SM", help="only fatbin entries for this "
                                                      "architecture")
    add_executor_options(create)
    create.set_defaults(func=_create)
    info = actions.add_parser("info", help="show a bundle's manifest")
    info.add_argument("bundle", metavar="NAME.kcb")
    info.add_argument("--json", action="store_true", help="write JSON")
    info.set_defaults(func=_info)
    imp = actions.add_parser("import", help="copy a bundle into the user's analysis cache")
    imp.add_argument("bundle", metavar="NAME.kcb")
    imp.set_defaults(func=_import)


def _create(args: argparse.Namespace) -> int:
    from kernelcheck.bundle import create_bundle
    from kernelcheck.executor import executor_from_args

    with executor_from_args(args) as executor:
        made = create_bundle(args.files, args.output, arch=args.arch, executor=executor)
    print(f"{made.path}: {made.kernels} kernel(s) from {made.images} image(s), "
          f"{made.images_failed} image(s) failed")
    for failure in made.failures:
        print(f"  failed: {failure}")
    return 1 if made.failures else 0


def _info(args: argparse.Namespace) -> int:
    from kernelcheck.bundle import read_bundle
    from kernelcheck.bundle.store import warn_ignored

    info = read_bundle(args.bundle)
    warning = warn_ignored(info)
    if warning:
        print(warning, file=sys.stderr)
    if args.json:
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
