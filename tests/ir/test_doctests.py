"""The examples in the docstrings of the graph modules run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["operands", "cfg", "dominance", "loops", "dataflow", "export"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"kernelcheck.ir.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
