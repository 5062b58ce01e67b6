"""Bundles: create, info, import; the cache's row encoding; trust and validity rules."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from kernelcheck.bundle import (
    BundleError,
    BundleTrustError,
    create_bundle,
    import_bundle,
    read_bundle,
)
from kernelcheck.cache import AnalysisCache, image_hash
from kernelcheck.cli import main
from kernelcheck.executor import LocalExecutor

ROOT = Path(__file__).resolve().parents[2]
PTX = [ROOT / "fixtures" / "ptx" / "sm_90" / n for n in ("elementwise.ptx", "inplace.ptx")]
HOST = ROOT / "fixtures" / "exe" / "vec_add_host"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    directory = tmp_path_factory.mktemp("bundles")
    os.chmod(directory, 0o755)
    out = directory / "fixtures.kcb"
    made = create_bundle([*PTX, HOST], out, executor=LocalExecutor(1))
    return out, made


def test_create_lists_every_image_under_the_shims_key(bundle):
    path, made = bundle
    info = read_bundle(path)
    assert made.images == len(info.images) == 6 and made.images_failed == 0
    keys = {(i.image_hash, i.arch) for i in info.images}
    for ptx in PTX:
        assert (image_hash(ptx.read_bytes()), "any") in keys
    # the host program hands the driver each of its two fatbins, keyed per sm_XY
    assert {a for _, a in keys} == {"any", "sm_80", "sm_90"}
    assert info.kernels == made.kernels == info.usable and info.stale == info.orphans == 0
    assert os.stat(path).st_mode & 0o777 == 0o644


def test_bundle_rows_are_the_rows_the_cache_writes(bundle, tmp_path):
    from kernelcheck.analysis.summary import analyze_module
    from kernelcheck.ptx.parser import parse_ptx_file

    path, _ = bundle
    cache = AnalysisCache(tmp_path / "cache")
    digest = image_hash(PTX[0].read_bytes())
    cache.put_summaries(digest, "any", analyze_module(parse_ptx_file(PTX[0])))
    columns = "kernel, arch, analyzer_version, kernel_class, reasons, check_blob, layout, " \
              "param_size, summary_json"
    query = f"SELECT {columns} FROM summaries WHERE image_hash = ? ORDER BY kernel"
    ours = sqlite3.connect(path).execute(query, (digest,)).fetchall()
    theirs = sqlite3.connect(cache.path).execute(query, (digest,)).fetchall()
    assert ours and ours == theirs


def test_import_fills_an_empty_cache_with_the_same_entries(bundle, tmp_path):
    path, made = bundle
    cache = AnalysisCache(tmp_path / "cache")
    assert cache.num_kernels() == 0
    kernels, images = import_bundle(path, cache)
    assert (kernels, images) == (made.kernels, made.images)
    hit = cache.get(image_hash(PTX[1].read_bytes()), "inplace_add_one", "any")
    assert hit is not None and hit.kernel_class == "never"


def _copy(path, tmp_path, name="copy.kcb") -> Path:
    out = tmp_path / name
    shutil.copy(path, out)
    os.chmod(out, 0o644)
    return out


def test_entries_of_another_analyzer_version_are_ignored_with_one_warning(bundle, tmp_path,
                                                                          capsys):
    copy = _copy(bundle[0], tmp_path)
    with sqlite3.connect(copy) as db:
        db.execute("UPDATE summaries SET analyzer_version = '0.0.1+000000000000' WHERE "
                   "kernel = 'vec_add'")
    info = read_bundle(copy)
    assert info.stale == 3 and info.usable == info.kernels - 3
    kernels, _ = import_bundle(copy, AnalysisCache(tmp_path / "cache"))
    assert kernels == info.usable
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "3 made by analyzer version" in err[0]


def test_entries_of_unlisted_images_are_ignored(bundle, tmp_path):
    copy = _copy(bundle[0], tmp_path)
    with sqlite3.connect(copy) as db:
        db.execute("UPDATE summaries SET image_hash = ? WHERE kernel = 'saxpy'", ("f" * 64,))
    info = read_bundle(copy)
    assert info.orphans == 1
    cache = AnalysisCache(tmp_path / "cache")
    import_bundle(copy, cache)
    assert cache.get("f" * 64, "saxpy", "any") is None


@pytest.mark.parametrize("file_mode,dir_mode", [(0o664, 0o755), (0o646, 0o755),
                                                (0o644, 0o777)])
def test_a_bundle_others_can_write_is_refused(bundle, tmp_path, file_mode, dir_mode):
    directory = tmp_path / "shared"
    directory.mkdir()
    copy = _copy(bundle[0], directory)
    os.chmod(copy, file_mode)
    os.chmod(directory, dir_mode)
    with pytest.raises(BundleTrustError, match="refusing to use it"):
        read_bundle(copy)
    with pytest.raises(BundleTrustError):
        import_bundle(copy, AnalysisCache(tmp_path / "cache"))


def test_a_sticky_shared_directory_is_accepted(bundle, tmp_path):
    directory = tmp_path / "sticky"
    directory.mkdir()
    copy = _copy(bundle[0], directory)
    os.chmod(directory, 0o1777)
    assert read_bundle(copy).kernels == bundle[1].kernels


def test_a_cache_file_is_not_a_bundle(tmp_path):
    cache = AnalysisCache(tmp_path / "cache")
    os.chmod(cache.path, 0o644)
    with pytest.raises(BundleError, match="application id"):
        read_bundle(cache.path)


def test_bundle_commands(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KERNELCHECK_CACHE_DIR", str(tmp_path / "cache"))
    os.chmod(tmp_path, 0o755)
    out = tmp_path / "cli.kcb"
    assert main(["bundle", "create", str(PTX[0]), "-o", str(out), "--jobs", "1"]) == 0
    assert "5 kernel(s) from 1 image(s), 0 image(s) failed" in capsys.readouterr().out
    assert main(["bundle", "info", str(out)]) == 0
    text = capsys.readouterr().out
    assert "5 usable by this analyzer" in text and "elementwise.ptx" in text
    assert main(["bundle", "info", "--json", str(out)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["usable"] == 5 and document["images"][0]["arch"] == "any"
    assert main(["bundle", "import", str(out)]) == 0
    assert "5 kernel(s) of 1 image(s) imported" in capsys.readouterr().out
    assert AnalysisCache().num_kernels() == 5
