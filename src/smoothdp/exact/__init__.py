"""Exact releases: the released float is a deterministic rounding of the ideal real-arithmetic output.

Every mechanism of smoothdp releases through :func:`add_noise` (and :func:`uniform_on_grid` for the
exponential-mechanism quantiles). The released number is **exactly** ``grid.round(c + S·Z)``, where

* ``c`` is the statistic's exact value (a float, a :class:`fractions.Fraction`) or a certified
  :class:`Enclosure` of it that can be refined;
* ``S`` is the (float, hence exact) smooth sensitivity, or 1 for plain noise;
* ``Z`` is a draw of the noise law in real arithmetic, obtained by inversion from lazily refined uniform
  bits in ball arithmetic;
* ``grid`` is a public :class:`OutputGrid`: it depends on the bounds and parameters, never on S or data.

The map from (c, S, Z) to the output is a fixed function, so the release is a post-processing of the
ideal mechanism and its proof holds verbatim (docs/theory/floating-point.md#the-exact-release-path).
``numerics="float"`` keeps the fast floating-point path, whose guarantee assumes idealized arithmetic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from smoothdp._lazy import attach

__all__ = [
    "FLOAT_SAMPLER_LABEL",
    "HARDENED_SAMPLER_LABEL",
    "NUMERICS",
    "Enclosure",
    "OutputGrid",
    "add_noise",
    "check_numerics",
    "log_uniform_on_grid",
    "sampler_label",
    "truncated_exponential_on_grid",
    "uniform_on_grid",
]

_EXPORTS = {
    "OutputGrid": "smoothdp.exact.grid",
    "FLOAT_SAMPLER_LABEL": "smoothdp.exact.release",
    "HARDENED_SAMPLER_LABEL": "smoothdp.exact.release",
    "NUMERICS": "smoothdp.exact.release",
    "Enclosure": "smoothdp.exact.release",
    "add_noise": "smoothdp.exact.release",
    "check_numerics": "smoothdp.exact.release",
    "log_uniform_on_grid": "smoothdp.exact.release",
    "truncated_exponential_on_grid": "smoothdp.exact.release",
    "sampler_label": "smoothdp.exact.release",
    "uniform_on_grid": "smoothdp.exact.release",
}
#: The package's modules, reachable as attributes once imported on first access.
_SUBMODULES = ("_core", "arithmetic", "cauchy", "engine", "grid", "laws", "release")

__getattr__, __dir__ = attach(__name__, _EXPORTS, _SUBMODULES)

if TYPE_CHECKING:
    from smoothdp.exact.grid import OutputGrid
    from smoothdp.exact.release import (
        FLOAT_SAMPLER_LABEL,
        HARDENED_SAMPLER_LABEL,
        NUMERICS,
        Enclosure,
        add_noise,
        check_numerics,
        log_uniform_on_grid,
        sampler_label,
        truncated_exponential_on_grid,
        uniform_on_grid,
    )
