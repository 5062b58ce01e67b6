"""The table driver's lexer: comments are skipped whole, on every Python the package supports.

CPython 3.11.0-3.11.4 mis-handle possessive quantifiers and atomic groups (gh-106052, fixed in
3.11.5); Debian 12's own ``/usr/bin/python3`` is 3.11.2. The skip pattern must use neither,
and the fixture corpus must parse under that interpreter when the machine has it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import lark
import pytest

from kernelcheck.errors import PtxSyntaxError
from kernelcheck.ptx import lalr_driver
from kernelcheck.ptx.parser import parse_ptx
from tests.conftest import ROOT, fixture_ptx_files

DEBIAN_PYTHON = Path("/usr/bin/python3")

KERNEL = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<4>;
    mov.u32 %r1, %r2 /* a comment */   ;
    add.s32 %r1, %r2, %r3; // trailing
    ret;
}
"""


def test_skip_pattern_has_no_possessive_quantifier_or_atomic_group():
    pattern = lalr_driver._SKIP
    assert "(?>" not in pattern
    # A possessive quantifier is a quantifier directly followed by '+'.
    assert not re.search(r"(?<!\\)[*+?}]\+", pattern), pattern


def test_block_comment_followed_by_blanks_parses():
    module = parse_ptx(KERNEL)
    assert [i.opcode for i in module.get_function("k").instructions] == ["mov", "add", "ret"]


def test_a_token_inside_a_comment_is_never_taken():
    # After `%r2` the parser wants ',' or ';'. The comment holds ', %r3;' but the next real
    # token is `ret`: the error must point at `ret`, not parse the comment's text.
    text = KERNEL.replace("add.s32 %r1, %r2, %r3; // trailing",
                          "add.s32 %r1, %r2 // , %r3;\n    ret;")
    with pytest.raises(PtxSyntaxError) as caught:
        parse_ptx(text)
    assert caught.value.line == text[:text.index("    ret;\n    ret")].count("\n") + 1
    block = KERNEL.replace("add.s32 %r1, %r2, %r3; // trailing",
                           "add.s32 %r1, %r2 /* , %r3; */\n    ret;")
    with pytest.raises(PtxSyntaxError):
        parse_ptx(block)


def test_unterminated_block_comment_is_an_error():
    with pytest.raises(PtxSyntaxError):
        parse_ptx(KERNEL.replace("/* a comment */", "/* a comment"))


def test_long_blank_runs_fail_in_linear_time():
    # A failing match must not try every split of a long run of blanks.
    text = KERNEL.replace("ret;", "ret" + " \t\n" * 20000 + "@")
    with pytest.raises(PtxSyntaxError):
        parse_ptx(text)


def _other_interpreters() -> list:
    """Debian's /usr/bin/python3 and any python3.12/python3.13 this machine has, other than
    the running interpreter (each must run: pyenv's shims of inactive versions do not)."""
    candidates = [DEBIAN_PYTHON]
    for name in ("python3.12", "python3.13"):
        found = shutil.which(name)
        if found:
            candidates.append(Path(found))
        candidates += sorted(Path.home().glob(f".pyenv/versions/*/bin/{name}"))
    seen, params = {os.path.realpath(sys.executable)}, []
    for path in candidates:
        real = os.path.realpath(path)
        if real in seen or not path.exists():
            continue
        try:
            version = subprocess.run([str(path), "-c", "import sys; print(sys.version.split()[0])"],
                                     capture_output=True, text=True, timeout=60)
        except OSError:
            continue
        if version.returncode != 0:
            continue
        seen.add(real)
        params.append(pytest.param(path, id=f"python-{version.stdout.strip()}"))
    return params or [pytest.param(None, id="none-present")]


@pytest.mark.parametrize("interpreter", _other_interpreters())
def test_fixture_corpus_parses_under_other_pythons(tmp_path, interpreter):
    """Every fixture parses under ``/usr/bin/python3`` (Debian 12: 3.11.2) and the other
    interpreters present, each in a fresh venv.

    The venv has no pip and nothing installed: the package's source tree and a copy of the
    pure-Python lark of the running interpreter are put on its path, all the parser needs.
    """
    if interpreter is None:
        pytest.skip("this machine has no /usr/bin/python3, python3.12 or python3.13 besides "
                    "the running interpreter")
    venv = tmp_path / "venv"
    made = subprocess.run([str(interpreter), "-m", "venv", "--without-pip", str(venv)],
                          capture_output=True, text=True, timeout=120)
    if made.returncode != 0:
        pytest.skip(f"{interpreter} cannot make a venv: {made.stderr.strip()[:200]}")
    site = tmp_path / "site"
    shutil.copytree(Path(lark.__file__).resolve().parent, site / "lark")
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from kernelcheck.ptx.parser import parse_ptx_file\n"
        "failed = []\n"
        "paths = [Path(p) for p in sys.argv[1:]]\n"
        "for path in paths:\n"
        "    try:\n"
        "        parse_ptx_file(path)\n"
        "    except Exception as error:\n"
        "        failed.append(f'{path}: {type(error).__name__}: {error}'.splitlines()[0])\n"
        "print(sys.version.split()[0], len(paths), len(failed))\n"
        "print('\\n'.join(failed))\n"
    )
    paths = [str(p) for p in fixture_ptx_files()]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(site)]),
               XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONNOUSERSITE="1")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", script, *paths],
                          capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    first, _, failures = done.stdout.partition("\n")
    interpreter_version, count, failed = first.split()
    assert int(count) == len(paths) > 0
    assert int(failed) == 0, f"under Python {interpreter_version}:\n{failures}"
