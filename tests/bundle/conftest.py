"""The shim tests' built libraries and stand-in environment, for the bundle tests."""

from tests.shim.conftest import env, libraries  # noqa: F401
