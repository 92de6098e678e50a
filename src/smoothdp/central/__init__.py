"""smoothdp.central: central differential privacy with instance-adaptive noise.

* :mod:`.statistics`: median, quantiles, trimmed mean, min, max (``"substitution"``) and mean
  (``"add_remove"``), with their local sensitivity at distance k and their exact smooth sensitivity;
* :mod:`.mechanisms`: the smooth-sensitivity mechanism (PolyPlace, Student's T, Cauchy, Laplace noise);
* :mod:`.ptr`: propose-test-release; :mod:`.sample_aggregate`: sample-and-aggregate;
* :mod:`.quantiles`: exponential-mechanism quantiles (one, recursive, JointExp), sampled exactly;
  :mod:`.private_bounds`: private range finding; :mod:`.choose`: the public method / β choices;
* :mod:`.unbounded`, :mod:`.scale_free`, :mod:`.no_bounds`: quantiles and ranges with no bounds
  (AboveThreshold on a ladder, the scale-free exponential mechanism);
  :mod:`.inverse_sensitivity`, :mod:`.piecewise_laplace`: the reach mechanisms;
* :mod:`.bounded_ls`: privately bounded local sensitivity; :mod:`.ratio`: private ratios;
* :mod:`.baselines`: the global-sensitivity baselines (Laplace, and a ρ-zCDP Gaussian mean);
* :mod:`.counting`: ``count``, ``sum``, ``histogram`` with exact integer noise (discrete Laplace or discrete
  Gaussian); :mod:`.counting_batch`: their vectorized building blocks (all groups of a table in one call);
* :mod:`.moments`, :mod:`.range_sweep`, :mod:`.range_moments`, :mod:`.noisy_moments`: the mean, variance and
  standard deviation (global sensitivity on the declared bounds or on a private range, staircase noise;
  noisy sums under add/remove), with their entry points in :mod:`.moments_api`;
  :mod:`.api`: numpy-style entry points.

Every mechanism is a :class:`smoothdp.mechanism.Mechanism`: keyword-only privacy parameters, a guarantee
with its neighbour relation, a proof section of docs/theory, and ``release(data, *, accountant=None,
rng=None)``, which charges the accountant before any noise is drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from smoothdp._lazy import attach

# Eager: the function `quantiles` shares its name with the module `quantiles`, which would hide it once
# imported; api is what every use of the package loads anyway.
from smoothdp.central.api import median, quantile, quantiles, trimmed_mean

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
    "BoundedLocalSensitivity": "smoothdp.central.bounded_ls",
    "bounded_local_sensitivity": "smoothdp.central.bounded_ls",
    "count_interval_halfwidth": "smoothdp.central.bounded_ls",
    "private_count_interval": "smoothdp.central.bounded_ls",
    "ClippedMean": "smoothdp.central.moments",
    "ClippedVariance": "smoothdp.central.moments",
    "mean": "smoothdp.central.moments_api",
    "std": "smoothdp.central.moments_api",
    "var": "smoothdp.central.moments_api",
    "NoisyMoments": "smoothdp.central.noisy_moments",
    "RangeMean": "smoothdp.central.range_moments",
    "RangeVariance": "smoothdp.central.range_moments",
    "SweepRange": "smoothdp.central.range_sweep",
    "NoisyCount": "smoothdp.central.counting",
    "NoisyHistogram": "smoothdp.central.counting",
    "NoisySum": "smoothdp.central.counting",
    "count": "smoothdp.central.counting",
    "histogram": "smoothdp.central.counting",
    "sum": "smoothdp.central.counting",
    "InverseSensitivity": "smoothdp.central.inverse_sensitivity",
    "PiecewiseLaplace": "smoothdp.central.piecewise_laplace",
    "ScaleFreeQuantile": "smoothdp.central.scale_free",
    "UnboundedQuantile": "smoothdp.central.unbounded",
    "UnboundedRange": "smoothdp.central.unbounded",
    "private_range": "smoothdp.central.no_bounds",
    "unbounded_quantile": "smoothdp.central.no_bounds",
    "PrivateClipMean": "smoothdp.central.means",
    "private_clip_mean": "smoothdp.central.means",
    "SmoothSensitivityMechanism": "smoothdp.central.mechanisms",
    "PrivateRange": "smoothdp.central.private_bounds",
    "ProposeTestRelease": "smoothdp.central.ptr",
    "distance_to_instability": "smoothdp.central.ptr",
    "propose_test_release": "smoothdp.central.ptr",
    "ExponentialQuantile": "smoothdp.central.quantiles",
    "JointQuantiles": "smoothdp.central.quantiles",
    "RecursiveQuantiles": "smoothdp.central.quantiles",
    "NestedJointQuantiles": "smoothdp.central.quantiles.nested",
    "PrivateRatio": "smoothdp.central.ratio",
    "private_ratio": "smoothdp.central.ratio",
    "ratio_local_sensitivity": "smoothdp.central.ratio",
    "ratio_sensitivity_bound": "smoothdp.central.ratio",
    "SampleAndAggregate": "smoothdp.central.sample_aggregate",
    "sample_and_aggregate": "smoothdp.central.sample_aggregate",
    "Max": "smoothdp.central.statistics",
    "Mean": "smoothdp.central.statistics",
    "Median": "smoothdp.central.statistics",
    "Min": "smoothdp.central.statistics",
    "OrderStatistic": "smoothdp.central.statistics",
    "PreparedData": "smoothdp.central.statistics",
    "Quantile": "smoothdp.central.statistics",
    "Statistic": "smoothdp.central.statistics",
    "TrimmedMean": "smoothdp.central.statistics",
}
#: The package's modules, reachable as attributes once imported on first access.
_SUBMODULES = (
    "_pairs",
    "api",
    "baselines",
    "bounded_ls",
    "choose",
    "counting",
    "counting_batch",
    "counting_noise",
    "inverse_sensitivity",
    "means",
    "mechanisms",
    "moment_sums",
    "moments",
    "moments_api",
    "no_bounds",
    "noisy_moments",
    "piecewise_laplace",
    "private_bounds",
    "ptr",
    "quantiles",
    "range_moments",
    "range_sweep",
    "ratio",
    "sample_aggregate",
    "scale_free",
    "statistics",
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
    from smoothdp.central.bounded_ls import (
        BoundedLocalSensitivity,
        bounded_local_sensitivity,
        count_interval_halfwidth,
        private_count_interval,
    )
    from smoothdp.central.counting import NoisyCount, NoisyHistogram, NoisySum, count, histogram, sum
    from smoothdp.central.inverse_sensitivity import InverseSensitivity
    from smoothdp.central.means import PrivateClipMean, private_clip_mean
    from smoothdp.central.mechanisms import SmoothSensitivityMechanism
    from smoothdp.central.moments import ClippedMean, ClippedVariance
    from smoothdp.central.moments_api import mean, std, var
    from smoothdp.central.no_bounds import private_range, unbounded_quantile
    from smoothdp.central.noisy_moments import NoisyMoments
    from smoothdp.central.piecewise_laplace import PiecewiseLaplace
    from smoothdp.central.private_bounds import PrivateRange
    from smoothdp.central.ptr import ProposeTestRelease, distance_to_instability, propose_test_release
    from smoothdp.central.quantiles import ExponentialQuantile, JointQuantiles, RecursiveQuantiles
    from smoothdp.central.quantiles.nested import NestedJointQuantiles
    from smoothdp.central.range_moments import RangeMean, RangeVariance
    from smoothdp.central.range_sweep import SweepRange
    from smoothdp.central.ratio import (
        PrivateRatio,
        private_ratio,
        ratio_local_sensitivity,
        ratio_sensitivity_bound,
    )
    from smoothdp.central.sample_aggregate import SampleAndAggregate, sample_and_aggregate
    from smoothdp.central.scale_free import ScaleFreeQuantile
    from smoothdp.central.statistics import (
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
    from smoothdp.central.unbounded import UnboundedQuantile, UnboundedRange
