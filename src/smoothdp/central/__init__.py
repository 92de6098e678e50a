"""smoothdp.central: central differential privacy with instance-adaptive noise.

The user entry points live at the top: :mod:`.api` (``median``, ``trimmed_mean``), :mod:`.quantile_api`
(``quantile``, ``quantiles``), :mod:`.moments_api` (``mean``, ``var``, ``std``), :mod:`.no_bounds`
(``bounds=None``), :mod:`.baselines` (the global-sensitivity baselines) and :mod:`.choose` (the public
method / β choices). The mechanisms they run are in subpackages, one seam each:

* :mod:`.smooth_sensitivity`: the statistics with their local sensitivity at distance k and their exact smooth
  sensitivity (median, quantiles, trimmed mean, min, max, mean), and the smooth-sensitivity mechanism;
* :mod:`.quantiles`: exponential-mechanism quantiles (one, recursive, JointExp), sampled exactly;
* :mod:`.moments`: the mean, variance and standard deviation (global sensitivity on the declared bounds or
  on a private range; noisy sums under add/remove; a private clipping range);
* :mod:`.frameworks`: propose-test-release, sample-and-aggregate, privately bounded local sensitivity,
  private ratios, the reach mechanisms (inverse sensitivity, piecewise Laplace);
* :mod:`.unbounded`: quantiles and ranges with no bounds (AboveThreshold on a ladder, the scale-free
  exponential mechanism), private bounds from part of the budget;
* :mod:`.counting`: ``count``, ``sum``, ``histogram`` with exact integer noise (discrete Laplace or discrete
  Gaussian) and their vectorized building blocks.

Every mechanism is a :class:`smoothdp.mechanism.Mechanism`: keyword-only privacy parameters, a guarantee
with its neighbour relation, a proof section of docs/theory, and ``release(data, *, accountant=None,
rng=None)``, which charges the accountant before any noise is drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from smoothdp._lazy import attach

# Eager: the function `quantiles` shares its name with the module `quantiles`, which would hide it once
# imported; api is what every use of the package loads anyway.
from smoothdp.central.api import median, trimmed_mean
from smoothdp.central.quantile_api import quantile, quantiles

__all__ = [
    "BoundedLocalSensitivity",
    "ClippedMean",
    "ClippedVariance",
    "ExponentialQuantile",
    "GaussianMean",
    "GlobalSensitivityMean",
    "GlobalSensitivityMedian",
    "InverseSensitivity",
    "JointQuantiles",
    "Max",
    "Mean",
    "Median",
    "Min",
    "NestedJointQuantiles",
    "NoisyCount",
    "NoisyHistogram",
    "NoisyMoments",
    "NoisySum",
    "OrderStatistic",
    "PiecewiseLaplace",
    "PreparedData",
    "PrivateClipMean",
    "PrivateRange",
    "PrivateRatio",
    "ProposeTestRelease",
    "Quantile",
    "RangeMean",
    "RangeVariance",
    "RecursiveQuantiles",
    "SampleAndAggregate",
    "ScaleFreeQuantile",
    "SmoothSensitivityMechanism",
    "Statistic",
    "SweepRange",
    "TrimmedMean",
    "UnboundedQuantile",
    "UnboundedRange",
    "bounded_local_sensitivity",
    "count",
    "count_interval_halfwidth",
    "distance_to_instability",
    "gaussian_mean",
    "global_sensitivity_mean",
    "global_sensitivity_median",
    "histogram",
    "mean",
    "median",
    "private_clip_mean",
    "private_count_interval",
    "private_range",
    "private_ratio",
    "propose_test_release",
    "quantile",
    "quantiles",
    "ratio_local_sensitivity",
    "ratio_local_sensitivity_laplace",
    "ratio_sensitivity_bound",
    "sample_and_aggregate",
    "std",
    "sum",
    "trimmed_mean",
    "unbounded_quantile",
    "var",
]

_EXPORTS = {
    "GaussianMean": "smoothdp.central.baselines",
    "GlobalSensitivityMean": "smoothdp.central.baselines",
    "GlobalSensitivityMedian": "smoothdp.central.baselines",
    "gaussian_mean": "smoothdp.central.baselines",
    "global_sensitivity_mean": "smoothdp.central.baselines",
    "global_sensitivity_median": "smoothdp.central.baselines",
    "ratio_local_sensitivity_laplace": "smoothdp.central.baselines",
    "BoundedLocalSensitivity": "smoothdp.central.frameworks.bounded_ls",
    "bounded_local_sensitivity": "smoothdp.central.frameworks.bounded_ls",
    "count_interval_halfwidth": "smoothdp.central.frameworks.bounded_ls",
    "private_count_interval": "smoothdp.central.frameworks.bounded_ls",
    "ClippedMean": "smoothdp.central.moments.clipped",
    "ClippedVariance": "smoothdp.central.moments.clipped",
    "mean": "smoothdp.central.moments_api",
    "std": "smoothdp.central.moments_api",
    "var": "smoothdp.central.moments_api",
    "NoisyMoments": "smoothdp.central.moments.noisy_sums",
    "RangeMean": "smoothdp.central.moments.on_private_range",
    "RangeVariance": "smoothdp.central.moments.on_private_range",
    "SweepRange": "smoothdp.central.moments.range_sweep",
    "NoisyCount": "smoothdp.central.counting.queries",
    "NoisyHistogram": "smoothdp.central.counting.queries",
    "NoisySum": "smoothdp.central.counting.queries",
    "count": "smoothdp.central.counting.queries",
    "histogram": "smoothdp.central.counting.queries",
    "sum": "smoothdp.central.counting.queries",
    "InverseSensitivity": "smoothdp.central.frameworks.inverse_sensitivity",
    "PiecewiseLaplace": "smoothdp.central.frameworks.piecewise_laplace",
    "ScaleFreeQuantile": "smoothdp.central.unbounded.scale_free",
    "UnboundedQuantile": "smoothdp.central.unbounded.ladder",
    "UnboundedRange": "smoothdp.central.unbounded.ladder",
    "private_range": "smoothdp.central.no_bounds",
    "unbounded_quantile": "smoothdp.central.no_bounds",
    "PrivateClipMean": "smoothdp.central.moments.private_clip",
    "private_clip_mean": "smoothdp.central.moments.private_clip",
    "SmoothSensitivityMechanism": "smoothdp.central.smooth_sensitivity.mechanism",
    "PrivateRange": "smoothdp.central.unbounded.private_bounds",
    "ProposeTestRelease": "smoothdp.central.frameworks.ptr",
    "distance_to_instability": "smoothdp.central.frameworks.ptr",
    "propose_test_release": "smoothdp.central.frameworks.ptr",
    "ExponentialQuantile": "smoothdp.central.quantiles",
    "JointQuantiles": "smoothdp.central.quantiles",
    "RecursiveQuantiles": "smoothdp.central.quantiles",
    "NestedJointQuantiles": "smoothdp.central.quantiles_nested",
    "PrivateRatio": "smoothdp.central.frameworks.ratio",
    "private_ratio": "smoothdp.central.frameworks.ratio",
    "ratio_local_sensitivity": "smoothdp.central.frameworks.ratio",
    "ratio_sensitivity_bound": "smoothdp.central.frameworks.ratio",
    "SampleAndAggregate": "smoothdp.central.frameworks.sample_aggregate",
    "sample_and_aggregate": "smoothdp.central.frameworks.sample_aggregate",
    "Max": "smoothdp.central.smooth_sensitivity.statistics",
    "Mean": "smoothdp.central.smooth_sensitivity.statistics",
    "Median": "smoothdp.central.smooth_sensitivity.statistics",
    "Min": "smoothdp.central.smooth_sensitivity.statistics",
    "OrderStatistic": "smoothdp.central.smooth_sensitivity.statistics",
    "PreparedData": "smoothdp.central.smooth_sensitivity.statistics",
    "Quantile": "smoothdp.central.smooth_sensitivity.statistics",
    "Statistic": "smoothdp.central.smooth_sensitivity.statistics",
    "TrimmedMean": "smoothdp.central.smooth_sensitivity.statistics",
}
#: The package's modules, reachable as attributes once imported on first access.
_SUBMODULES = (
    "api",
    "baselines",
    "choose",
    "counting",
    "frameworks",
    "moments",
    "moments_api",
    "no_bounds",
    "quantile_api",
    "quantiles",
    "smooth_sensitivity",
    "unbounded",
)

__getattr__, __dir__ = attach(__name__, _EXPORTS, _SUBMODULES)

if TYPE_CHECKING:
    from smoothdp.central.baselines import (
        GaussianMean,
        GlobalSensitivityMean,
        GlobalSensitivityMedian,
        gaussian_mean,
        global_sensitivity_mean,
        global_sensitivity_median,
        ratio_local_sensitivity_laplace,
    )
    from smoothdp.central.counting.queries import NoisyCount, NoisyHistogram, NoisySum, count, histogram, sum
    from smoothdp.central.frameworks.bounded_ls import (
        BoundedLocalSensitivity,
        bounded_local_sensitivity,
        count_interval_halfwidth,
        private_count_interval,
    )
    from smoothdp.central.frameworks.inverse_sensitivity import InverseSensitivity
    from smoothdp.central.frameworks.piecewise_laplace import PiecewiseLaplace
    from smoothdp.central.frameworks.ptr import (
        ProposeTestRelease,
        distance_to_instability,
        propose_test_release,
    )
    from smoothdp.central.frameworks.ratio import (
        PrivateRatio,
        private_ratio,
        ratio_local_sensitivity,
        ratio_sensitivity_bound,
    )
    from smoothdp.central.frameworks.sample_aggregate import SampleAndAggregate, sample_and_aggregate
    from smoothdp.central.moments.clipped import ClippedMean, ClippedVariance
    from smoothdp.central.moments.noisy_sums import NoisyMoments
    from smoothdp.central.moments.on_private_range import RangeMean, RangeVariance
    from smoothdp.central.moments.private_clip import PrivateClipMean, private_clip_mean
    from smoothdp.central.moments.range_sweep import SweepRange
    from smoothdp.central.moments_api import mean, std, var
    from smoothdp.central.no_bounds import private_range, unbounded_quantile
    from smoothdp.central.quantiles import ExponentialQuantile, JointQuantiles, RecursiveQuantiles
    from smoothdp.central.quantiles_nested import NestedJointQuantiles
    from smoothdp.central.smooth_sensitivity.mechanism import SmoothSensitivityMechanism
    from smoothdp.central.smooth_sensitivity.statistics import (
        Max,
        Mean,
        Median,
        Min,
        OrderStatistic,
        PreparedData,
        Quantile,
        Statistic,
        TrimmedMean,
    )
    from smoothdp.central.unbounded.ladder import UnboundedQuantile, UnboundedRange
    from smoothdp.central.unbounded.private_bounds import PrivateRange
    from smoothdp.central.unbounded.scale_free import ScaleFreeQuantile
