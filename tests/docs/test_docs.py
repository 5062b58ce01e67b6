"""The documentation stays true: its links resolve and its commands work.

Every relative link and anchor of README.md and docs/*.md must point to a file and heading that
exist. Every command shown in a ```console block is checked: untagged blocks are run, in order,
in a scratch directory holding the repository's fixtures, with a private analysis cache and the
stand-in ``libcuda.so.1`` first on ``LD_LIBRARY_PATH`` (as tests/shim/conftest.py sets up), and
each command must end with exit status 0 or the status its ``# exit status N`` comment
documents. Blocks tagged for what CI lacks (tests/docs/markdown.py, TAGS) are checked as far
as CI can: the program exists, the ``kernelcheck`` sub-command and every ``--option`` named are
in its ``--help``, scripts parse. The convention is in docs/user-guide.md.
"""

from __future__ import annotations

import functools
import os
import py_compile
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.markdown import (
    TAGS,
    Block,
    Command,
    anchors,
    blocks,
    commands,
    inline_code,
    links,
    long_options,
    simple_commands,
    synopsis_forms,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
BIN = Path(sys.executable).parent
#: Shell words that are not programs to look up.
BUILTINS = {"cd", "export", "echo", "source", ".", "set", "test", "[", "unset", "true"}
#: What a scratch directory links to in the repository (commands name these paths).
LINKED = ("fixtures", "bench", "scripts", "tests", "kernelcheck", "grammars", "pyproject.toml",
          "README.md", ".ci")


def _id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _console_blocks() -> list[Block]:
    return [b for doc in DOCS for b in blocks(doc) if b.language == "console"]


def _checked_items() -> list:
    """(command, reason) for every command and usage form, with the reason in the id."""
    items = []
    for block in _console_blocks():
        tags = block.tags
        reason = "; ".join(TAGS.get(t, f"unknown tag {t!r}") for t in tags) or "run"
        found = synopsis_forms(block) if "synopsis" in tags else commands(block)
        for command in found:
            items.append(pytest.param(command, id=f"{command.where} [{reason}]"))
    return items


# -- links ------------------------------------------------------------------------------------

@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_every_relative_link_and_anchor_resolves(doc):
    broken = []
    for target in links(doc):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path_part, _, anchor = target.partition("#")
        path = (doc.parent / path_part).resolve() if path_part else doc
        if not path.exists():
            broken.append(f"{target}: no file {path}")
            continue
        if anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading with anchor #{anchor} in {path.name}")
    assert not broken, f"{_id(doc)}: " + "; ".join(broken)


# -- the convention ---------------------------------------------------------------------------

@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_commands_follow_the_console_convention(doc):
    """Shell commands are in ```console blocks with known tags, so the tests below see them."""
    problems = []
    for block in blocks(doc):
        if block.language == "console":
            unknown = [t for t in block.tags if t not in TAGS]
            if unknown:
                problems.append(f"line {block.line}: unknown tag(s) {unknown}")
            if "synopsis" not in block.tags and not commands(block):
                problems.append(f"line {block.line}: console block without a '$ ' command")
            continue
        if block.language in {"bash", "sh", "shell", "shell-session"}:
            problems.append(f"line {block.line}: ```{block.language} block (use ```console)")
        for text in block.lines:
            if text.startswith(("$ kernelcheck", "kernelcheck ", "$ python", "$ pytest")):
                problems.append(f"line {block.line}: command {text.strip()!r} outside a "
                                "```console block")
                break
    assert not problems, f"{_id(doc)}: " + "; ".join(problems)


# -- what every command is checked for, tagged or not -----------------------------------------

@functools.cache
def _help(*words: str) -> str:
    done = subprocess.run([*words, "--help"], capture_output=True, text=True, timeout=120,
                          env=_base_env(), cwd=ROOT)
    assert done.returncode == 0, f"{' '.join(words)} --help failed: {done.stderr[-2000:]}"
    return done.stdout


def _files_written_before(command: Command) -> set[str]:
    """Files the doc's ```python file=NAME blocks provide."""
    return {b.option("file") for b in blocks(command.block.path) if b.option("file")}


def _check_words(words: list[str], command: Command) -> list[str]:
    """Why this simple command cannot be right, as far as it can be told without running it."""
    program = words[0]
    if program in BUILTINS:
        return []
    if program == "kernelcheck":
        if not (BIN / "kernelcheck").exists() and not shutil.which("kernelcheck"):
            return ["the kernelcheck executable is not installed"]
        rest = [w for w in words[1:] if not w.startswith("-")]
        sub = [rest[0]] if rest else []
        if sub == ["bundle"] and len(rest) > 1:
            sub.append(rest[1])
        text = _help("kernelcheck", *sub)
        return [f"kernelcheck {' '.join(sub)}: no option {o} in --help"
                for o in long_options(words[1:]) if o not in text]
    if program in {"python", "python3"}:
        args = words[1:]
        if args[:2] == ["-m", "pytest"]:
            return _check_words(["pytest", *args[2:]], command)
        if args[:1] in (["-m"], ["-c"]) or not args:
            return []
        script = args[0]
        if script in _files_written_before(command):
            return []
        path = ROOT / script
        if not path.exists():
            return [f"no script {script}"]
        py_compile.compile(str(path), doraise=True)
        source = path.read_text()
        return [f"{script}: no option {o}" for o in long_options(args[1:])
                if f'"{o}"' not in source and f"'{o}'" not in source]
    if program == "pytest":
        # pytest's --help lists --junit-xml; --junitxml is its other spelling.
        text = _help(sys.executable, "-m", "pytest").replace("--junit-xml", "--junitxml")
        return [f"pytest: no option {o}" for o in long_options(words[1:])
                if o.split("=")[0] not in text]
    if program == "bash" or program.endswith(".sh"):
        script = words[1] if program == "bash" else program
        done = subprocess.run(["bash", "-n", str(ROOT / script)], capture_output=True,
                              text=True)
        return [] if done.returncode == 0 else [f"bash -n {script}: {done.stderr}"]
    if shutil.which(program) or (BIN / program).exists():
        return []
    return [f"no program {program!r} on PATH"]


@pytest.mark.parametrize("command", _checked_items())
def test_command_names_existing_programs_and_options(command):
    problems = []
    for words in simple_commands(command.text):
        problems += _check_words(words, command)
    assert not problems, f"{command.where}: {command.text!r}: " + "; ".join(problems)


#: Programs whose inline mentions (`kernelcheck ...`, `python bench/x.py ...`) are checked.
_INLINE_PROGRAMS = ("kernelcheck ", "python bench/", "python scripts/", "pytest ", "bash ")


def _inline_commands():
    items = []
    for doc in DOCS:
        for span in inline_code(doc):
            words = simple_commands(span.replace("[", " ").replace("]", " "))
            words = words[0] if words else []
            text = " ".join(words)
            if (text.startswith(_INLINE_PROGRAMS) and len(words) > 1
                    and re.match(r"^[\w./-]+$", words[1]) and words[1] != "..."):
                items.append(pytest.param(doc, words, id=f"{doc.name}: {span}"))
    return items


@pytest.mark.parametrize(("doc", "words"), _inline_commands())
def test_inline_commands_name_existing_programs_and_options(doc, words):
    """Commands quoted in the prose (`kernelcheck run --log FILE`, `python bench/x.py --n 5`)
    name sub-commands, scripts, test files and options that exist."""
    if words[0] == "kernelcheck" and not words[1].startswith("-"):
        subs = _help("kernelcheck")
        assert f"    {words[1]} " in subs or f"    {words[1]}\n" in subs, (
            f"{doc.name}: no sub-command {words[1]!r}")
    if words[0] == "pytest":
        missing = [w for w in words[1:] if w.startswith("tests/") and not (ROOT / w).exists()]
        assert not missing, f"{doc.name}: no test file {missing}"
    problems = _check_words(words, Command(Block(doc, 0, (), ()), 0, " ".join(words)))
    assert not problems, f"{doc.name}: `{' '.join(words)}`: " + "; ".join(problems)


# -- running the untagged commands ------------------------------------------------------------

@functools.cache
def _base_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(BIN), env.get("PATH", "")])
    env.pop("LD_PRELOAD", None)
    env["MPLBACKEND"] = "Agg"
    return env


@pytest.fixture(scope="module")
def standin_dir(tmp_path_factory):
    from kernelcheck.shim.build import ShimBuildError

    try:
        from kernelcheck.standin import standin_library_dir

        return standin_library_dir()
    except ShimBuildError as error:  # pragma: no cover - no C compiler
        pytest.skip(f"cannot build the stand-in driver: {error}")


def _scratch(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    for name in LINKED:
        if (ROOT / name).exists():
            (work / name).symlink_to(ROOT / name)
    (work / "docs").mkdir()
    return work


def _script(doc: Path, tags: set[str]) -> tuple[str, list[Command]]:
    """A bash script running the doc's commands of blocks with exactly these tags in order,
    writing each ```python file=NAME block first, stopping at the first wrong status."""
    lines = ["set -u"]
    ran: list[Command] = []
    for block in blocks(doc):
        name = block.option("file")
        if name:
            lines.append(f"cat > {name} <<'KC_DOCS_EOF'\n" + "\n".join(block.lines)
                         + "\nKC_DOCS_EOF")
            continue
        if block.language != "console" or set(block.tags) != tags:
            continue
        for command in commands(block):
            k = len(ran)
            ran.append(command)
            lines.append(f"echo '::kc-docs {k}' >&2")
            lines.append(command.text)
            lines.append(f"kc_rc=$?; if [ $kc_rc -ne {command.status} ]; then "
                         f"echo \"::kc-docs-failed {k} $kc_rc\" >&2; exit 97; fi")
    return "\n".join(lines) + "\n", ran


def _run_doc(doc: Path, tags: set[str], tmp_path: Path, standin: Path, timeout: int):
    script, ran = _script(doc, tags)
    if not ran:
        pytest.skip("no such commands")
    work = _scratch(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = dict(_base_env())
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(standin), env.get("LD_LIBRARY_PATH")) if p)
    env["KERNELCHECK_CACHE_DIR"] = str(cache)
    done = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True,
                          text=True, timeout=timeout)
    if done.returncode == 0:
        return
    failed = [line.split() for line in done.stderr.splitlines()
              if line.startswith("::kc-docs-failed")]
    if failed:
        k, rc = int(failed[-1][1]), failed[-1][2]
        command = ran[k]
        pytest.fail(f"{command.where}: `{command.text}` exited {rc} (documented: "
                    f"{command.status})\nstdout tail:\n{done.stdout[-3000:]}\n"
                    f"stderr tail:\n{done.stderr[-3000:]}")
    pytest.fail(f"{_id(doc)}: the commands' script failed ({done.returncode}):\n"
                f"{done.stderr[-3000:]}")


def _docs_with(tags: set[str]) -> list[Path]:
    return [doc for doc in DOCS if any(
        b.language == "console" and set(b.tags) == tags for b in blocks(doc))]


@pytest.mark.parametrize("doc", _docs_with(set()), ids=_id)
def test_untagged_commands_run(doc, tmp_path, standin_dir):
    _run_doc(doc, set(), tmp_path, standin_dir, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("doc", _docs_with({"slow"}), ids=_id)
def test_slow_commands_run(doc, tmp_path, standin_dir):
    _run_doc(doc, {"slow"}, tmp_path, standin_dir, timeout=7200)


# -- README and CI ----------------------------------------------------------------------------

def test_readme_test_command_is_what_ci_runs():
    readme = [c.text for b in blocks(ROOT / "README.md") if b.language == "console"
              for c in commands(b)]
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith("#")
          and not line.startswith(("set ", "cd "))]
    assert ci and ci[-1] in readme, (ci, readme)
    assert any("pip install ." in c and c.endswith("kernelcheck analyze") for c in readme)
