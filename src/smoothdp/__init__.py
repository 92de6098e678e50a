"""smoothdp: instance-adaptive differential privacy.

Release statistics with noise fitted to the data at hand (smooth sensitivity), under central
differential privacy and under geo-privacy in the local model, and analyse mechanisms under smoothed DP.
"""

from smoothdp import audit, central, geo, noise, smooth, smoothed
from smoothdp.calibration import calibrate
from smoothdp.central.api import mean, median, quantile, trimmed_mean
from smoothdp.privacy import ApproxDP, GeoPrivacy, Guarantee, PureDP, compose
from smoothdp.release import Release
from smoothdp.rng import default_rng

__version__ = "0.1.0"

__all__ = [
    "ApproxDP",
    "GeoPrivacy",
    "Guarantee",
    "PureDP",
    "Release",
    "__version__",
    "audit",
    "calibrate",
    "central",
    "compose",
    "default_rng",
    "geo",
    "mean",
    "median",
    "noise",
    "quantile",
    "smooth",
    "smoothed",
    "trimmed_mean",
]
