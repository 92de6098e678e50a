"""Smooth sensitivity: growth functions and generic smooth sensitivity (metric spaces)."""

from smoothdp.sensitivity.growth import (
    GROWTHS,
    Growth,
    check_growth,
    growth,
    log_growth,
    smoothness_violation,
)
from smoothdp.sensitivity.numeric import (
    GridLipschitzBound,
    NumericSmoothSensitivity,
    numeric_pointwise_lipschitz,
    numeric_smooth_sensitivity,
)
from smoothdp.sensitivity.ramps import convex_ramp_lipschitz, convex_ramp_smooth_sensitivity
from smoothdp.sensitivity.rounding import ROUND_UP, round_up

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
