"""The examples in the docstrings of the term, guard, counterexample, budget and unrolling
modules run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["kernelcheck.analysis.terms", "kernelcheck.analysis.lower",
                                  "kernelcheck.analysis.refute", "kernelcheck.analysis.budget",
                                  "kernelcheck.analysis.unroll"])
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
