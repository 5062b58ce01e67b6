"""What the docs test reads from the Markdown files: fenced blocks, links, headings, commands.

The convention the documentation follows (stated in docs/user-guide.md, "Commands in these
pages"):

- shell commands live in ```console blocks: a line starting ``$ `` is a command, a line
  starting ``> `` continues it (a heredoc, or a line ended by ``\\``), every other line is
  output, shown abridged;
- a command expected to fail ends with the comment ``# exit status N``;
- ```console TAG marks blocks CI cannot run as they are; TAGS says why for each tag;
- in a ```console synopsis block each unindented line is a usage form (indented lines
  continue it), checked against the program's ``--help``, not run;
- a ```python file=NAME block is a file the commands after it use: it is written to the
  scratch directory under NAME before they run.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

#: Tags of ```console blocks that are not run by the default test, with the reason (the
#: reason is part of the test id).
TAGS = {
    "gpu": "needs an NVIDIA GPU and driver",
    "cluster": "needs a Dask scheduler or a Slurm cluster",
    "network": "downloads packages from the network",
    "slow": "runs for minutes (pytest -m slow runs it)",
    "synopsis": "usage forms, checked against --help",
}

#: An opening or closing fence, possibly indented inside a list item.
_FENCE = re.compile(r"^( {0,4})(`{3,}|~{3,})\s*(.*?)\s*$")
_STATUS = re.compile(r"\s+#\s*exit status (\d+)\s*$")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block: the file, the line of its opening fence, its info words, its text."""

    path: Path
    line: int
    info: tuple[str, ...]
    lines: tuple[str, ...]

    @property
    def language(self) -> str:
        return self.info[0] if self.info else ""

    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(word for word in self.info[1:] if "=" not in word)

    def option(self, key: str) -> str | None:
        for word in self.info[1:]:
            if word.startswith(key + "="):
                return word.split("=", 1)[1]
        return None


@dataclass(frozen=True, slots=True)
class Command:
    """One shell command of a console block (continuation lines joined) and its status."""

    block: Block
    line: int
    text: str
    status: int = 0

    @property
    def where(self) -> str:
        return f"{self.block.path.name}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, in order."""
    found: list[Block] = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, info = match.groups()
        start = i + 1
        i += 1
        body: list[str] = []
        while i < len(lines) and not (lines[i].strip().startswith(fence)
                                      and not lines[i].strip().strip(fence[0])):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        found.append(Block(path, start, tuple(info.split()), tuple(body)))
        i += 1
    return found


def prose(path: Path) -> str:
    """The text of a Markdown file outside fenced blocks, with inline code removed."""
    out: list[str] = []
    inside = None
    for line in path.read_text().splitlines():
        match = _FENCE.match(line)
        if match and inside is None:
            inside = match.group(2)[0]
            continue
        if inside is not None:
            if line.strip() and line.strip().strip(inside) == "":
                inside = None
            continue
        out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def inline_code(path: Path) -> list[str]:
    """Inline code spans outside fenced blocks."""
    spans: list[str] = []
    inside = None
    for line in path.read_text().splitlines():
        match = _FENCE.match(line)
        if match and inside is None:
            inside = match.group(2)[0]
            continue
        if inside is not None:
            if line.strip() and line.strip().strip(inside) == "":
                inside = None
            continue
        spans.extend(re.findall(r"`([^`]+)`", line))
    return spans


def links(path: Path) -> list[str]:
    """Targets of the inline links and images of a Markdown file (outside code)."""
    return re.findall(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", prose(path))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file, with GitHub's -1, -2 for repeated ones."""
    seen: dict[str, int] = {}
    result: set[str] = set()
    for line in _heading_lines(path):
        base = slug(line)
        count = seen.get(base, 0)
        result.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return result


def _heading_lines(path: Path) -> list[str]:
    headings: list[str] = []
    inside = None
    for line in path.read_text().splitlines():
        match = _FENCE.match(line)
        if match and inside is None:
            inside = match.group(2)[0]
            continue
        if inside is not None:
            if line.strip() and line.strip().strip(inside) == "":
                inside = None
            continue
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            headings.append(heading.group(1))
    return headings


def commands(block: Block) -> list[Command]:
    """The commands of a console block: ``$ `` lines with their ``> `` continuations."""
    found: list[Command] = []
    current: list[str] | None = None
    start = 0
    heredoc: str | None = None
    for offset, line in enumerate(block.lines):
        if current is not None and (line.startswith("> ") or line == ">"):
            body = line[2:]
            current.append(body)
            if heredoc is not None and body.strip() == heredoc:
                heredoc = None
            continue
        if current is not None:
            found.append(_command(block, start, current))
            current = None
        if line.startswith("$ "):
            current = [line[2:]]
            start = block.line + 1 + offset
            match = _HEREDOC.search(line)
            heredoc = match.group(2) if match else None
    if current is not None:
        found.append(_command(block, start, current))
    return found


def _command(block: Block, line: int, parts: list[str]) -> Command:
    text = "\n".join(parts)
    status = 0
    match = _STATUS.search(parts[0])
    if match:
        status = int(match.group(1))
        text = _STATUS.sub("", parts[0]) + "".join("\n" + p for p in parts[1:])
    return Command(block, line, text, status)


def synopsis_forms(block: Block) -> list[Command]:
    """The usage forms of a synopsis block (indented lines continue the form above)."""
    forms: list[Command] = []
    for offset, line in enumerate(block.lines):
        text = re.sub(r"\s+#.*$", "", line)
        if not text.strip():
            continue
        if line[:1].isspace() and forms:
            last = forms[-1]
            forms[-1] = Command(block, last.line, last.text + " " + text.strip())
        else:
            forms.append(Command(block, block.line + 1 + offset, text.strip()))
    return forms


def simple_commands(text: str) -> list[list[str]]:
    """The words of each simple command of a command line (split at |, &&, ||, ;), with
    leading VAR=value assignments dropped; heredoc bodies are left out."""
    first = text.split("\n", 1)[0]
    if _HEREDOC.search(first):
        first = _HEREDOC.sub("", first)
    lexer = shlex.shlex(first.replace("\\\n", " "), posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    result: list[list[str]] = []
    words: list[str] = []
    skip_next = False
    for token in lexer:
        if skip_next:
            skip_next = False
            continue
        if token in {"|", "||", "&&", ";", "&"}:
            if words:
                result.append(words)
            words = []
        elif token in {">", ">>", "<", "2>", "&>"}:
            skip_next = True
        elif not words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", token):
            continue
        else:
            words.append(token)
    if words:
        result.append(words)
    return result


def long_options(words: list[str]) -> list[str]:
    """The ``--options`` of a command line before a bare ``--`` (after it is another
    program's command line)."""
    options: list[str] = []
    for word in words:
        if word == "--":
            break
        match = re.match(r"^(--[A-Za-z][\w-]*)", word.lstrip("["))
        if match:
            options.append(match.group(1))
    return options
