"""The examples in the docstrings of the SASS modules run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import kernelcheck.sass

MODULES = sorted(m.name for m in pkgutil.iter_modules(kernelcheck.sass.__path__))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"kernelcheck.sass.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
