"""Fixtures of the experiment tests (see _exp_helpers)."""

from _exp_helpers import tiny_run  # noqa: F401  (a fixture)
