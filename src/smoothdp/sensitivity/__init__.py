"""Smooth sensitivity: growth functions and generic smooth sensitivity (metric spaces)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from smoothdp._lazy import attach

# Eager: the function `growth` shares its name with the module `growth`, which would hide it once imported.
from smoothdp.sensitivity.growth import (
    GROWTHS,
    Growth,
    check_growth,
    growth,
    log_growth,
    smoothness_violation,
)

__all__ = [
    "GROWTHS",
    "ROUND_UP",
    "GridLipschitzBound",
    "Growth",
    "NumericSmoothSensitivity",
    "check_growth",
    "convex_ramp_lipschitz",
    "convex_ramp_smooth_sensitivity",
    "growth",
    "log_growth",
    "numeric_pointwise_lipschitz",
    "numeric_smooth_sensitivity",
    "round_up",
    "smoothness_violation",
]

_EXPORTS = {
    "GridLipschitzBound": "smoothdp.sensitivity.numeric",
    "NumericSmoothSensitivity": "smoothdp.sensitivity.numeric",
    "numeric_pointwise_lipschitz": "smoothdp.sensitivity.numeric",
    "numeric_smooth_sensitivity": "smoothdp.sensitivity.numeric",
    "convex_ramp_lipschitz": "smoothdp.sensitivity.ramps",
    "convex_ramp_smooth_sensitivity": "smoothdp.sensitivity.ramps",
    "ROUND_UP": "smoothdp.sensitivity.rounding",
    "round_up": "smoothdp.sensitivity.rounding",
}
#: The package's modules, reachable as attributes once imported on first access.
_SUBMODULES = ("growth", "numeric", "ramps", "rounding")

__getattr__, __dir__ = attach(__name__, _EXPORTS, _SUBMODULES)

if TYPE_CHECKING:
    from smoothdp.sensitivity.numeric import (
        GridLipschitzBound,
        NumericSmoothSensitivity,
        numeric_pointwise_lipschitz,
        numeric_smooth_sensitivity,
    )
    from smoothdp.sensitivity.ramps import (
        convex_ramp_lipschitz,
        convex_ramp_smooth_sensitivity,
    )
    from smoothdp.sensitivity.rounding import ROUND_UP, round_up
