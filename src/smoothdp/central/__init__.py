"""smoothdp.central: central differential privacy with instance-adaptive noise.

* :mod:`.statistics`: median, quantiles, trimmed mean, min, max (``"substitution"``) and mean
  (``"add_remove"``), with their local sensitivity at distance k and their exact smooth sensitivity;
* :mod:`.mechanisms`: the smooth-sensitivity mechanism (PolyPlace, Student's T, Cauchy, Laplace noise);
* :mod:`.ptr`: propose-test-release; :mod:`.sample_aggregate`: sample-and-aggregate;
* :mod:`.quantiles`: exponential-mechanism quantiles (one, recursive, JointExp), sampled exactly;
  :mod:`.private_bounds`: private range finding; :mod:`.choose`: the public method / β choices;
* :mod:`.bounded_ls`: privately bounded local sensitivity; :mod:`.ratio`: private ratios;
* :mod:`.baselines`: the global-sensitivity baselines (Laplace, and a ρ-zCDP Gaussian mean);
  :mod:`.api`: numpy-style entry points.

Every mechanism is a :class:`smoothdp.mechanism.Mechanism`: keyword-only privacy parameters, a guarantee
with its neighbour relation, a proof section of docs/theory, and ``release(data, *, accountant=None,
rng=None)``, which charges the accountant before any noise is drawn.
"""

from smoothdp.central.api import mean, median, quantile, quantiles, trimmed_mean
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
from smoothdp.central.means import PrivateClipMean, private_clip_mean
from smoothdp.central.mechanisms import SmoothSensitivityMechanism
from smoothdp.central.private_bounds import PrivateRange
from smoothdp.central.ptr import ProposeTestRelease, distance_to_instability, propose_test_release
from smoothdp.central.quantiles import ExponentialQuantile, JointQuantiles, RecursiveQuantiles
from smoothdp.central.ratio import (
    PrivateRatio,
    private_ratio,
    ratio_local_sensitivity,
    ratio_sensitivity_bound,
)
from smoothdp.central.sample_aggregate import SampleAndAggregate, sample_and_aggregate
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

__all__ = [
    "BoundedLocalSensitivity",
    "ExponentialQuantile",
    "GaussianMean",
    "GlobalSensitivityMean",
    "GlobalSensitivityMedian",
    "JointQuantiles",
    "Max",
    "Mean",
    "Median",
    "Min",
    "OrderStatistic",
    "PreparedData",
    "PrivateClipMean",
    "PrivateRange",
    "PrivateRatio",
    "ProposeTestRelease",
    "Quantile",
    "RecursiveQuantiles",
    "SampleAndAggregate",
    "SmoothSensitivityMechanism",
    "Statistic",
    "TrimmedMean",
    "bounded_local_sensitivity",
    "count_interval_halfwidth",
    "distance_to_instability",
    "gaussian_mean",
    "global_sensitivity_mean",
    "global_sensitivity_median",
    "mean",
    "median",
    "private_clip_mean",
    "private_count_interval",
    "private_ratio",
    "propose_test_release",
    "quantile",
    "quantiles",
    "ratio_local_sensitivity",
    "ratio_local_sensitivity_laplace",
    "ratio_sensitivity_bound",
    "sample_and_aggregate",
    "trimmed_mean",
]
