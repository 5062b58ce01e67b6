"""Mutated fixture PTX either parses or raises PtxSyntaxError; both engines agree."""

from __future__ import annotations

import os
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelcheck.errors import PtxSyntaxError
from kernelcheck.ptx.parser import parse_ptx
from tests.conftest import FIXTURES

SOURCES = [
    (FIXTURES / "ptx/sm_90/elementwise.ptx").read_text(),
    (FIXTURES / "ptx/sm_80/structs_calls.ptx").read_text(),
    (FIXTURES / "ptx/triton/" / sorted(p.name for p in (FIXTURES / "ptx/triton").glob("*.ptx"))[0]
     ).read_text(),
]
TOKEN = re.compile(r"\S+")


@st.composite
def mutated_ptx(draw):
    text = draw(st.sampled_from(SOURCES))
    unit = draw(st.sampled_from(["line", "token"]))
    pieces = text.split("\n") if unit == "line" else TOKEN.findall(text)
    joiner = "\n" if unit == "line" else " "
    for _ in range(draw(st.integers(1, 3))):
        if len(pieces) < 2:
            break
        k = draw(st.integers(0, len(pieces) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "swap"]))
        if action == "delete":
            del pieces[k]
        elif action == "duplicate":
            pieces.insert(k, pieces[k])
        else:
            j = draw(st.integers(0, len(pieces) - 1))
            pieces[k], pieces[j] = pieces[j], pieces[k]
    return joiner.join(pieces)


def _outcome(text, engine):
    try:
        return ("ok", parse_ptx(text, engine=engine))
    except PtxSyntaxError as error:
        return ("error", (error.line, error.column))


#: More examples on demand: KERNELCHECK_MUTATIONS=2000 pytest tests/ptx/test_mutations.py
EXAMPLES = int(os.environ.get("KERNELCHECK_MUTATIONS", "150"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_ptx())
def test_mutations_parse_or_raise_our_error(text):
    fast = _outcome(text, "fast")
    lark = _outcome(text, "lark")
    assert fast[0] == lark[0]
    if fast[0] == "ok":
        assert fast[1] == lark[1]
