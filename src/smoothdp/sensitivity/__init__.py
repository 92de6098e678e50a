"""Smooth sensitivity: growth functions and generic smooth sensitivity (Hamming and metric spaces)."""

from smoothdp.sensitivity.growth import GROWTHS, Growth, growth, log_growth
from smoothdp.sensitivity.hamming import hamming_smooth_sensitivity, smooth_sensitivity_of_profile
from smoothdp.sensitivity.metric import (
    GridLipschitzBound,
    NumericSmoothSensitivity,
    convex_ramp_lipschitz,
    convex_ramp_smooth_sensitivity,
    numeric_pointwise_lipschitz,
    numeric_smooth_sensitivity,
    smoothness_violation,
)
from smoothdp.sensitivity.rounding import ROUND_UP, round_up

__all__ = [
    "GROWTHS",
    "ROUND_UP",
    "GridLipschitzBound",
    "Growth",
    "NumericSmoothSensitivity",
    "convex_ramp_lipschitz",
    "convex_ramp_smooth_sensitivity",
    "growth",
    "hamming_smooth_sensitivity",
    "log_growth",
    "numeric_pointwise_lipschitz",
    "numeric_smooth_sensitivity",
    "round_up",
    "smooth_sensitivity_of_profile",
    "smoothness_violation",
]
