"""kernelcheck works as installed, the way a newcomer installs it.

A copy of the checkout, a fresh ``HOME`` and a fresh venv: the README's first command (install
with ``pip install .``, not editable, then analyse the bundled kernels) is run exactly as
written, then ``kernelcheck run`` on a bundled cuda-python program from outside the source
tree must give a verdict for every launch on the first run, and with no C compiler it must
refuse in one line. Under the running interpreter, and under Debian's ``/usr/bin/python3``
(3.11.2 on Debian 12) when the machine has it.

Needs the package index that ``pip install`` uses (CI has it: it installs the test extra the
same way).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEBIAN_PYTHON = Path("/usr/bin/python3")


def readme_install_command() -> str:
    """The README's first console command (install and analyse)."""
    text = (ROOT / "README.md").read_text()
    match = re.search(r"```console[^\n]*\n\$ ([^\n]+)\n```", text)
    assert match, "README.md has no console block"
    return match.group(1)


def _copy_checkout(destination: Path) -> None:
    """The files of the checkout (tracked, and new files git does not ignore)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT, capture_output=True)
    if listed.returncode != 0:
        shutil.copytree(ROOT, destination, symlinks=True,
                        ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__"))
        return
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if not os.path.lexists(source):
            continue  # deleted in the working tree
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)


def _interpreters() -> list:
    found = [pytest.param(sys.executable, id="running-python")]
    if DEBIAN_PYTHON.exists() and os.path.realpath(DEBIAN_PYTHON) != os.path.realpath(
            sys.executable):
        found.append(pytest.param(str(DEBIAN_PYTHON), id="usr-bin-python3"))
    return found


def _clean_env(home: Path, python_dir: Path) -> dict[str, str]:
    """A newcomer's environment: fresh HOME, ``python3`` is the chosen interpreter, no venv,
    nothing of kernelcheck's set."""
    path = [str(python_dir)] + [p for p in os.environ.get("PATH", "").split(os.pathsep)
                                if p and not p.startswith(sys.prefix)]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KERNELCHECK_", "PYTHON", "VIRTUAL_ENV", "LD_", "XDG_"))}
    env.update(HOME=str(home), PATH=os.pathsep.join(path))
    return env


@pytest.mark.parametrize("python", _interpreters())
def test_readme_install_then_first_run_gives_verdicts(tmp_path, python):
    source, home, python_dir = tmp_path / "kernelcheck", tmp_path / "home", tmp_path / "bin"
    home.mkdir()
    python_dir.mkdir()
    (python_dir / "python3").symlink_to(os.path.realpath(python))
    _copy_checkout(source)
    env = _clean_env(home, python_dir)

    command = readme_install_command()
    assert command.startswith("python3 -m venv .venv") and "pip install ." in command
    install = subprocess.run(["bash", "-c", command], cwd=source, env=env,
                             capture_output=True, text=True, timeout=1200)
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-3000:]
    assert "vec_add" in install.stdout  # `kernelcheck analyze` on the bundled PTX

    venv_bin = source / ".venv" / "bin"
    env["PATH"] = os.pathsep.join([str(venv_bin), env["PATH"]])
    installed = subprocess.run([str(venv_bin / "python"), "-c",
                                "import kernelcheck; print(kernelcheck.__file__)"],
                               cwd=home, env=env, capture_output=True, text=True)
    assert "site-packages" in installed.stdout, installed.stdout  # the wheel, not the tree

    report = home / "report.json"
    run = subprocess.run([str(venv_bin / "kernelcheck"), "run", "--report", str(report), "--",
                          str(venv_bin / "python"), "-m", "kernelcheck.demos.vector_add"],
                         cwd=home, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "both launches correct" in run.stdout
    summary = json.loads(report.read_text())
    assert (summary["idempotent"], summary["not_idempotent"], summary["not_proven"]) == (1, 1, 0)
    assert summary["without_analysis"] == 0
    cache = home / ".cache" / "kernelcheck"
    for directory in (home / ".cache", cache, cache / "build"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory

    # With no C compiler and nothing built yet, `run` refuses in one line, exit status 2.
    bare = dict(env, PATH=str(venv_bin), CC="/nonexistent/cc",
                KERNELCHECK_BUILD_DIR=str(tmp_path / "no-build"))
    refused = subprocess.run([str(venv_bin / "kernelcheck"), "run", "--",
                              str(venv_bin / "python"), "-c", "print('ran')"], cwd=home,
                             env=bare, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2
    assert "ran" not in refused.stdout
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "no C compiler" in refused.stderr

    version = subprocess.run([str(venv_bin / "python"), "-m", "kernelcheck", "--version"],
                             cwd=home, env=env, capture_output=True, text=True)
    assert version.returncode == 0
    assert "CUDA driver:" in version.stdout and str(cache) in version.stdout
