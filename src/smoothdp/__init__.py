"""smoothdp: instance-adaptive differential privacy.

Release statistics with noise fitted to the data at hand (smooth sensitivity), under central
differential privacy and under geo-privacy in the local model, and analyse mechanisms under smoothed DP.

Every mechanism follows one contract (:mod:`smoothdp.mechanism`): keyword-only privacy parameters
(``epsilon``, ``delta``, ``beta``, ``rng``), ``bounds=(lower, upper)``, a guarantee that records its
neighbour relation, a proof in this project's docs, and an optional :class:`Accountant` charged before
any noise is drawn.

The public names are imported on first use (``smoothdp.median`` loads :mod:`smoothdp.central`), so
``import smoothdp`` is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from smoothdp._lazy import attach

__version__ = "0.3.0"

__all__ = [
    "ZCDP",
    "Accountant",
    "ApproxDP",
    "Budget",
    "BudgetError",
    "GeoPrivacy",
    "Guarantee",
    "Mechanism",
    "NotPrivate",
    "PureDP",
    "Release",
    "TableRelease",
    "__version__",
    "aggregate",
    "audit",
    "calibrate",
    "central",
    "compose",
    "count",
    "default_rng",
    "describe",
    "geo",
    "histogram",
    "mean",
    "median",
    "noise",
    "private_clip_mean",
    "quantile",
    "quantiles",
    "sensitivity",
    "smoothed_dp",
    "std",
    "sum",
    "tables",
    "trimmed_mean",
    "var",
]

_EXPORTS = {
    "Accountant": "smoothdp.accounting",
    "Budget": "smoothdp.accounting",
    "BudgetError": "smoothdp.accounting",
    "calibrate": "smoothdp.calibration",
    "count": "smoothdp.central.counting.queries",
    "histogram": "smoothdp.central.counting.queries",
    "sum": "smoothdp.central.counting.queries",
    "mean": "smoothdp.central.moments_api",
    "std": "smoothdp.central.moments_api",
    "var": "smoothdp.central.moments_api",
    "median": "smoothdp.central.api",
    "quantile": "smoothdp.central.quantile_api",
    "quantiles": "smoothdp.central.quantile_api",
    "trimmed_mean": "smoothdp.central.api",
    "private_clip_mean": "smoothdp.central.moments.private_clip",
    "Mechanism": "smoothdp.mechanism",
    "ZCDP": "smoothdp.privacy",
    "ApproxDP": "smoothdp.privacy",
    "GeoPrivacy": "smoothdp.privacy",
    "Guarantee": "smoothdp.privacy",
    "PureDP": "smoothdp.privacy",
    "compose": "smoothdp.privacy",
    "NotPrivate": "smoothdp.release",
    "Release": "smoothdp.release",
    "default_rng": "smoothdp.rng",
    "aggregate": "smoothdp.tables.grouped_release",
    "describe": "smoothdp.tables.summary",
    "TableRelease": "smoothdp.tables.release",
}
# Packages in __all__, then the other modules reachable as attributes (``smoothdp.exact``).
_SUBMODULES = (
    "audit",
    "central",
    "geo",
    "noise",
    "sensitivity",
    "smoothed_dp",
    "tables",
    "accounting",
    "calibration",
    "cli",
    "data",
    "exact",
    "experiments",
    "mechanism",
    "noise_std",
    "privacy",
    "release",
    "rng",
    "validation",
)

__getattr__, __dir__ = attach(__name__, _EXPORTS, _SUBMODULES)

if TYPE_CHECKING:
    from smoothdp import audit, central, geo, noise, sensitivity, smoothed_dp, tables
    from smoothdp.accounting import Accountant, Budget, BudgetError
    from smoothdp.calibration import calibrate
    from smoothdp.central.api import median, trimmed_mean
    from smoothdp.central.counting.queries import count, histogram, sum
    from smoothdp.central.moments.private_clip import private_clip_mean
    from smoothdp.central.moments_api import mean, std, var
    from smoothdp.central.quantile_api import quantile, quantiles
    from smoothdp.mechanism import Mechanism
    from smoothdp.privacy import ZCDP, ApproxDP, GeoPrivacy, Guarantee, PureDP, compose
    from smoothdp.release import NotPrivate, Release
    from smoothdp.rng import default_rng
    from smoothdp.tables.grouped_release import aggregate
    from smoothdp.tables.release import TableRelease
    from smoothdp.tables.summary import describe
