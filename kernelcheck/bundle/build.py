"""``create_bundle``: analyse every image of some files, over an executor, into a bundle.

Each image (:func:`~kernelcheck.bundle.images.shipped_images`) is one keyed task, analysed
exactly as the shim's helper analyses an image it meets at run time (``load_input`` +
``analyze_module``, the first summary of each kernel name kept), so a node using the bundle
gets the verdicts it would have computed itself. An image whose analysis fails is recorded
as failed with the reason (its kernels stay not proven), like a failed image in the cache;
a task whose workers keep dying is recorded the same way.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from kernelcheck.bundle.images import shipped_images
from kernelcheck.bundle.store import BundleWriter
from kernelcheck.errors import KernelcheckError
from kernelcheck.executor import LocalExecutor, Progress, Task

__all__ = ["BundleCreated", "analyse_shipped_image", "create_bundle"]

_SUFFIX = {"ptx": ".ptx", "cubin": ".cubin", "fatbin": ".fatbin"}


class _Discard(Exception):
    """Leave the unfinished bundle unwritten (some images failed)."""


@dataclass(frozen=True, slots=True)
class BundleCreated:
    """What :func:`create_bundle` wrote: images (and how many failed) and kernels."""

    path: str
    images: int
    images_failed: int
    kernels: int
    failures: tuple[str, ...]


def analyse_shipped_image(data: bytes, kind: str, arch: str) -> tuple[str, str, list]:
    """``(status, detail, summaries)`` of one image; never raises for the input's sake."""
    from kernelcheck.analysis.summary import analyze_module
    from kernelcheck.inputs import load_input

    with tempfile.NamedTemporaryFile(suffix=_SUFFIX.get(kind, ".bin")) as handle:
        handle.write(data)
        handle.flush()
        try:
            loaded = load_input(handle.name, arch=arch if arch.startswith("sm_") else None)
            summaries: dict = {}
            for entry in loaded.modules:
                for summary in analyze_module(entry.module):
                    summaries.setdefault(summary.name, summary)
        except Exception as error:  # noqa: BLE001 - the image fails, its kernels stay unproven
            return "failed", f"{type(error).__name__}: {error}", []
    return "done", "; ".join(loaded.errors), list(summaries.values())


def create_bundle(files: Sequence[str | os.PathLike], out: str | os.PathLike, *,
                  arch: str | None = None, executor=None, progress: bool | None = None,
                  keep_failed: bool = True) -> BundleCreated:
    """Analyse every image of ``files`` and write the bundle ``out``.

    Parameters
    ----------
    files : sequence of path
        ``.ptx``, ``.cubin``, fatbins, host executables or shared libraries.
    out : path
        The bundle to write (replaced atomically when complete).
    arch : str, optional
        Only fatbin entries for this architecture.
    executor : LocalExecutor or DaskExecutor, optional
        Where images are analysed (default: a local pool over every core).
    progress : bool, optional
        Progress on stderr (default: when stderr is a terminal).
    keep_failed : bool
        Write the bundle even when some images failed (they are recorded as failed);
        without it such a bundle is not written, and ``BundleCreated.path`` is ``""``.

    Returns
    -------
    BundleCreated

    Raises
    ------
    KernelcheckError
        An input cannot be read, is of no known kind, or holds a corrupt fatbin; nothing
        is written.
    """
    images = {}
    for file in files:
        for image in shipped_images(file, arch):
            images.setdefault((image.image_hash, image.arch, image.file, image.origin), image)
    tasks = [Task(f"image-{n}-{os.path.basename(i.file)}:{i.origin}:{i.arch}",
                  analyse_shipped_image, (i.data, i.kind, i.arch))
             for n, i in enumerate(images.values())]
    by_key = dict(zip((t.key for t in tasks), images.values(), strict=True))
    meter = Progress(len(tasks), "images", **({} if progress is None else {"enabled": progress}))
    own = executor is None
    executor = executor or LocalExecutor()
    kernels, failures = 0, []
    try:
        with BundleWriter(out, arch) as writer:
            if not tasks:
                raise KernelcheckError(f"{', '.join(map(os.fspath, files))}: no device image "
                                       f"to analyse" + (f" for {arch}" if arch else ""))
            for result in executor.run(tasks):
                image = by_key[result.key]
                if result.ok:
                    status, detail, summaries = result.value
                else:
                    status, detail, summaries = "failed", f"WorkerDied: {result.lost}", []
                if status != "done":
                    failures.append(f"{image.file} {image.origin} {image.arch}: {detail}")
                kernels += writer.add(image, status, detail, summaries)
                meter.step()
            if failures and not keep_failed:
                raise _Discard()
    except _Discard:
        return BundleCreated("", len(tasks), len(failures), kernels, tuple(failures))
    finally:
        meter.finish()
        if own:
            executor.close()
    return BundleCreated(str(out), len(tasks), len(failures), kernels, tuple(failures))
