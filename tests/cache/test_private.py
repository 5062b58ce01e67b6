"""The private directories kernelcheck keeps state in: made 0700 whatever the umask, a
merely readable one tightened with a notice, a writable or foreign one refused."""

from __future__ import annotations

import os
import stat

import pytest

from kernelcheck.cache.private import (
    CachePermissionError,
    ensure_private_dir,
    private_cache_file,
)


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def umask():
    """Set a umask for the test and restore the old one."""
    saved = os.umask(0o022)
    yield os.umask
    os.umask(saved)


@pytest.mark.parametrize("mask", [0o000, 0o002, 0o022, 0o077])
def test_missing_directories_are_made_private_whatever_the_umask(tmp_path, umask, mask):
    umask(mask)
    leaf = tmp_path / "home" / ".cache" / "kernelcheck" / "build"
    ensure_private_dir(leaf)
    for path in (leaf, leaf.parent, leaf.parent.parent, leaf.parent.parent.parent):
        assert _mode(path) == 0o700, (path, oct(_mode(path)))


@pytest.mark.parametrize("mode", [0o755, 0o750, 0o705, 0o711])
def test_a_readable_directory_is_tightened_with_one_notice(tmp_path, capsys, mode):
    directory = tmp_path / f"cache-{mode:o}"
    directory.mkdir()
    os.chmod(directory, mode)
    ensure_private_dir(directory)
    assert _mode(directory) == 0o700
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "notice" in err and str(directory) in err
    assert f"{mode:04o} -> 0700" in err
    ensure_private_dir(directory)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("mode", [0o775, 0o757, 0o777, 0o720, 0o702])
def test_a_directory_others_may_write_is_refused(tmp_path, mode):
    directory = tmp_path / "cache"
    directory.mkdir()
    os.chmod(directory, mode)
    with pytest.raises(CachePermissionError) as caught:
        ensure_private_dir(directory)
    message = str(caught.value)
    assert "\n" not in message
    assert str(directory) in message and "planted" in message
    assert "KERNELCHECK_CACHE_DIR" in message
    assert _mode(directory) == mode  # left as it was


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory away needs root")
def test_a_directory_of_another_user_is_refused(tmp_path):
    directory = tmp_path / "cache"
    directory.mkdir(mode=0o700)
    os.chown(directory, 65534, 65534)
    with pytest.raises(CachePermissionError, match="belongs to uid 65534"):
        ensure_private_dir(directory)


def test_a_file_or_a_link_in_its_place_is_refused(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(CachePermissionError, match="not a directory"):
        ensure_private_dir(tmp_path / "file")
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(CachePermissionError, match="not a directory"):
        ensure_private_dir(tmp_path / "link")


def test_grammar_caches_never_fall_back_to_a_shared_place(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared))
    (shared / "kernelcheck").mkdir()
    os.chmod(shared / "kernelcheck", 0o777)
    assert private_cache_file("ptx-grammar.lark-cache") is None
    from kernelcheck.ptx import parser

    assert parser._cache_file() is None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "mine"))
    path = private_cache_file("ptx-grammar.lark-cache")
    assert path == str(tmp_path / "mine" / "kernelcheck" / "ptx-grammar.lark-cache")
    assert _mode(tmp_path / "mine" / "kernelcheck") == 0o700
