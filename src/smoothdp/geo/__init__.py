"""Geo-privacy in the local model: queries, smooth-sensitivity mechanisms and baselines.

After Liang & Yi, CCS 2024; proofs in docs/theory/geo-privacy.md.

Each user holds a private point x (a number, or a point in the plane) and sends one privatized report;
the analyst averages the reports. Privacy is ε per unit of Euclidean distance (:class:`GeoPrivacy`).

Queries (vectorized over users and over grids of query parameters): :class:`SoftThreshold`,
:class:`TwoWayThreshold`, :class:`BoundedRange`, :class:`GaussianKDE`, :class:`LipschitzQuery`.
Mechanisms (each a :class:`smoothdp.mechanism.Mechanism`: ``release(x, *, accountant=None, rng=None)``
returns the users' reports in a Release; ``privatize`` returns them as an array):
:class:`SmoothSensitivityMechanism`; baselines :class:`GlobalLipschitz`, :class:`NoiseAPriori`,
:class:`LocalDP`. Charge them to a geo accountant, ``Accountant(epsilon=..., neighbours="metric")``
(:class:`LocalDP`: ``neighbours="local"``).
"""

from smoothdp.geo._common import GeoEstimate, GeoMechanism, GeoVariance
from smoothdp.geo._query import GeoQuery
from smoothdp.geo.baselines import (
    GeoError,
    GlobalLipschitz,
    LocalDP,
    NoiseAPriori,
    quadrant_fractions,
    threshold_fractions,
)
from smoothdp.geo.kde import GaussianKDE, kde_lipschitz_profile, kde_smooth_profile
from smoothdp.geo.lipschitz import LipschitzQuery
from smoothdp.geo.mechanisms import SmoothSensitivityMechanism
from smoothdp.geo.thresholds import BoundedRange, SoftThreshold, TwoWayThreshold

__all__ = [
    "BoundedRange",
    "GaussianKDE",
    "GeoError",
    "GeoEstimate",
    "GeoMechanism",
    "GeoQuery",
    "GeoVariance",
    "GlobalLipschitz",
    "LipschitzQuery",
    "LocalDP",
    "NoiseAPriori",
    "SmoothSensitivityMechanism",
    "SoftThreshold",
    "TwoWayThreshold",
    "kde_lipschitz_profile",
    "kde_smooth_profile",
    "quadrant_fractions",
    "threshold_fractions",
]
