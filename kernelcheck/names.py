"""Kernel names as people write and read them: short names and ``--kernel`` matching.

Compiled kernels carry mangled names (``_Z5axpbyIfEvPT_PKS0_S3_S0_S0_i``) whose demangled
form can run to hundreds of characters (templates of templates, numba's ABI tags). Reports
show the **short name**, the way Nsight Compute shows a kernel by default: return type,
template arguments and parameter list elided, the last component of the qualified name kept
(``void at::native::elementwise_kernel<128, 4, ...>(int, ...)`` → ``elementwise_kernel``).
``--full-names`` shows the demangled name instead.

``--kernel PATTERN`` selects kernels by any of the names a person may have at hand, tried in
this order: the mangled name, the full demangled signature, the signature without its
parameter list (``axpby<float>``, ``kc::detail::copy_n<int>``), the qualified or short name
without template arguments (``kc::scale_shift_inplace``, ``axpby``); when none of those
names a kernel, PATTERN is a regular expression searched in the mangled and the demangled
names (``gemm.*128x64``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["short_name", "display_name", "name_forms", "match_kernels"]

#: Longest short name shown before it is cut with an ellipsis.
MAX_SHORT = 80

_OPEN = {"<": ">", "(": ")", "[": "]", "{": "}"}


def _top_level_cut(text: str, opener: str) -> int:
    """Index of the first ``opener`` at bracket depth 0, or -1."""
    depth = 0
    for k, ch in enumerate(text):
        if ch == opener and depth == 0:
            return k
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}" and depth > 0:
            depth -= 1
    return -1


def _strip_brackets(text: str, opener: str) -> str:
    """``text`` with every ``opener...closer`` group (nested included) removed."""
    closer = _OPEN[opener]
    out = []
    depth = 0
    for ch in text:
        if ch == opener:
            depth += 1
            continue
        if ch == closer and depth:
            depth -= 1
            continue
        if not depth:
            out.append(ch)
    return "".join(out)


def _without_return_type(text: str) -> str:
    """``void ns::f<int>`` → ``ns::f<int>``: the part after the last top-level space."""
    depth = 0
    cut = -1
    for k, ch in enumerate(text):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}" and depth:
            depth -= 1
        elif ch == " " and depth == 0:
            cut = k
    return text[cut + 1:] if cut >= 0 else text


@lru_cache(maxsize=4096)
def name_forms(mangled: str) -> tuple[str, str, str, str]:
    """``(demangled, signature_without_parameters, qualified, short)`` of a kernel name.

    Examples
    --------
    >>> name_forms("_Z5axpbyIfEvPT_PKS0_S3_S0_S0_i")
    ('void axpby<float>(float*, float const*, float const*, float, float, int)', \
'axpby<float>', 'axpby', 'axpby')
    >>> name_forms("vec_add")
    ('vec_add', 'vec_add', 'vec_add', 'vec_add')
    """
    from kernelcheck.binary.demangle import demangle

    full = demangle(mangled)
    text = full.replace("(anonymous namespace)", "{anonymous}")
    params = _top_level_cut(text, "(")
    head = text[:params] if params > 0 else text
    # numba's ABI tags ([abi:v2][abi:cw51c...]) and clone suffixes are not part of the name
    # a person types.
    head = re.sub(r"\[abi:[^\]]*\]", "", head)
    signature = _without_return_type(head.strip())
    qualified = _strip_brackets(signature, "<").strip()
    qualified = _strip_brackets(qualified, "(")
    short = qualified.rsplit("::", 1)[-1] or qualified
    signature = signature.replace("{anonymous}", "(anonymous namespace)")
    qualified = qualified.replace("{anonymous}", "(anonymous namespace)")
    return full, signature, qualified, short


def short_name(mangled: str) -> str:
    """The Nsight Compute style name: no return type, templates or parameters.

    Examples
    --------
    >>> short_name("_ZN2kc6detail6copy_nIiEEvPT_PKS2_i")
    'copy_n'
    """
    short = name_forms(mangled)[3]
    return short if len(short) <= MAX_SHORT else short[:MAX_SHORT - 1] + "…"


def display_name(mangled: str, full: bool = False) -> str:
    """The name reports show: the short name, or with ``full`` the demangled one."""
    return name_forms(mangled)[0] if full else short_name(mangled)


def _normalise(text: str) -> str:
    return re.sub(r"\s+", "", text)


def match_kernels(pattern: str, names: Iterable[str]) -> list[str]:
    """The names of ``names`` (mangled) that ``pattern`` selects, in their order.

    Exact forms win over a regular expression: ``axpby`` selects both ``axpby<float>`` and
    ``axpby<double>`` (their short name), ``axpby<float>`` only the first.

    Examples
    --------
    >>> names = ["_Z5axpbyIfEvPT_PKS0_S3_S0_S0_i", "_Z5axpbyIdEvPT_PKS0_S3_S0_S0_i", "vec_add"]
    >>> match_kernels("axpby<float>", names)
    ['_Z5axpbyIfEvPT_PKS0_S3_S0_S0_i']
    >>> len(match_kernels("axpby", names))
    2
    >>> match_kernels("^vec", names)
    ['vec_add']
    """
    names = list(dict.fromkeys(names))
    wanted = _normalise(pattern)
    for level in range(5):
        found = []
        for name in names:
            forms = (name, *name_forms(name))
            if _normalise(forms[level]) == wanted:
                found.append(name)
        if found:
            return found
    try:
        expression = re.compile(pattern)
    except re.error:
        return []
    return [name for name in names
            if expression.search(name) or expression.search(name_forms(name)[0])]
