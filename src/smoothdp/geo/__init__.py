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

from __future__ import annotations

from typing import TYPE_CHECKING

from smoothdp._lazy import attach

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

_EXPORTS = {
    "GeoEstimate": "smoothdp.geo._common",
    "GeoMechanism": "smoothdp.geo._common",
    "GeoVariance": "smoothdp.geo._common",
    "GeoQuery": "smoothdp.geo._query",
    "GeoError": "smoothdp.geo.baselines",
    "GlobalLipschitz": "smoothdp.geo.baselines",
    "LocalDP": "smoothdp.geo.baselines",
    "NoiseAPriori": "smoothdp.geo.baselines",
    "quadrant_fractions": "smoothdp.geo.baselines",
    "threshold_fractions": "smoothdp.geo.baselines",
    "GaussianKDE": "smoothdp.geo.kde",
    "kde_lipschitz_profile": "smoothdp.geo.kde",
    "kde_smooth_profile": "smoothdp.geo.kde",
    "LipschitzQuery": "smoothdp.geo.lipschitz",
    "SmoothSensitivityMechanism": "smoothdp.geo.mechanisms",
    "BoundedRange": "smoothdp.geo.thresholds",
    "SoftThreshold": "smoothdp.geo.thresholds",
    "TwoWayThreshold": "smoothdp.geo.thresholds",
}
#: The package's modules, reachable as attributes once imported on first access.
_SUBMODULES = (
    "_common",
    "_exact",
    "_laplace_moments",
    "_query",
    "baselines",
    "kde",
    "lipschitz",
    "mechanisms",
    "thresholds",
)

__getattr__, __dir__ = attach(__name__, _EXPORTS, _SUBMODULES)

if TYPE_CHECKING:
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
