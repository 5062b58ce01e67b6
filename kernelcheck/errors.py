"""The exception hierarchy of kernelcheck.

Every error kernelcheck raises on purpose derives from :class:`KernelcheckError`. Errors from
the libraries we build on (lark, pyelftools, z3, cuda-python) are converted where they cross
into our code and chained with ``from``. "Not proven" is a verdict with a reason, never an
exception.
"""

from __future__ import annotations

__all__ = [
    "KernelcheckError",
    "PtxSyntaxError",
    "SassSyntaxError",
    "BinaryFormatError",
    "UnsupportedFeature",
    "AnalysisError",
]


class KernelcheckError(Exception):
    """Root of every error kernelcheck raises on purpose."""


class _SourceSyntaxError(KernelcheckError):
    """A syntax error in a text input, with its position and an excerpt with a caret."""

    language = "source"

    def __init__(
        self,
        message: str,
        *,
        filename: str | None = None,
        line: int = 0,
        column: int = 0,
        text_line: str | None = None,
        expected: tuple[str, ...] = (),
    ) -> None:
        self.message = message
        self.filename = filename
        self.line = line
        self.column = column
        self.text_line = text_line
        self.expected = tuple(expected)
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """The error as one line: ``file:line:column: message (expected ...)``."""
        where = f"{self.filename or '<input>'}:{self.line}:{self.column}"
        text = f"{where}: {self.message}"
        if self.expected:
            shown = ", ".join(self.expected[:12])
            more = f" and {len(self.expected) - 12} more" if len(self.expected) > 12 else ""
            text += f" (expected one of: {shown}{more})"
        return text

    def excerpt(self) -> str:
        """The offending line with a caret under the column, or '' when unknown."""
        if self.text_line is None or self.column <= 0:
            return ""
        shown = self.text_line[:200]
        caret_at = min(self.column - 1, len(shown))
        return f"{shown}\n{' ' * caret_at}^"


class PtxSyntaxError(_SourceSyntaxError):
    """Malformed PTX text: names the file, line, column and the tokens that were expected."""

    language = "PTX"


class SassSyntaxError(_SourceSyntaxError):
    """Malformed SASS text (as printed by nvdisasm)."""

    language = "SASS"


class BinaryFormatError(KernelcheckError):
    """A truncated, corrupt or foreign binary (ELF, .nv.info, fatbin), with section and offset."""

    def __init__(
        self,
        message: str,
        *,
        filename: str | None = None,
        section: str | None = None,
        offset: int | None = None,
    ) -> None:
        self.message = message
        self.filename = filename
        self.section = section
        self.offset = offset
        parts = [filename or "<input>"]
        if section:
            parts.append(f"section {section}")
        if offset is not None:
            parts.append(f"offset 0x{offset:x}")
        super().__init__(f"{': '.join(parts)}: {message}")


class UnsupportedFeature(KernelcheckError):
    """A feature kernelcheck does not model, with what it is and where it was found."""

    def __init__(self, what: str, where: str = "") -> None:
        self.what = what
        self.where = where
        super().__init__(f"{where}: unsupported: {what}" if where else f"unsupported: {what}")


class AnalysisError(KernelcheckError):
    """A fault inside kernelcheck's own analysis (a bug, not a property of the input)."""
