"""Private range finding: bounds for the data from part of the budget (``bounds="private"``).

:class:`PrivateRange` releases symmetric bounds (−G, G) with G a power of two times a public,
data-independent scale hint s. On the log-magnitudes ℓ_i = log2 |x_i| clamped to [log2 s − K, log2 s + K]
it draws the exponential-mechanism ``coverage``-quantile y over that continuum
(:func:`smoothdp.central.quantiles.sample_em_quantile`, exact), then G = s·2^(⌈y − log2 s⌉ + 2): two
octaves above it, so that the tails are kept. Like privately bounded local sensitivity (Harrison 2024),
the bounds are private outputs, covered by the guarantee, and the second stage treats them as public.

Guarantee: pure ε-DP under substitution: two exponential mechanisms over public candidates with a
rank utility of sensitivity 1 on the magnitudes (docs/theory/quantiles.md#private-bounds).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles import log_weight_margin, sample_em_quantile
from smoothdp.exact import OutputGrid, check_numerics, sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP
from smoothdp.release import NotPrivate, Release
from smoothdp.validation import as_float_array, check_epsilon, check_in_range, check_int, check_positive

__all__ = ["DEFAULT_RANGE_FRACTION", "PrivateRange"]

#: The share of the budget ``bounds="private"`` spends on the range (the rest on the statistic).
DEFAULT_RANGE_FRACTION = 0.25


class PrivateRange(Mechanism):
    """Private symmetric bounds (−G, G) of the data, G on a log-scale grid around a public scale hint.

    Guarantee: pure ε-DP under substitution (docs/theory/quantiles.md#private-bounds).

    Parameters
    ----------
    epsilon
        ε > 0.
    scale
        Public, data-independent scale hint s > 0 (the order of magnitude of the data; a guess is fine:
        the grid spans s·2^-octaves … s·2^octaves).
    octaves
        K ≥ 1: extent in powers of two each side of s.
    coverage
        G is about the coverage-quantile of |x| (default: the median magnitude; a high coverage
        makes the padding above the data win at small n·ε), rounded up to a power of two times s, ×4.
    numerics
        ``"exact"`` (default) or ``"float"``.
    """

    name: ClassVar[str] = "private range (exponential mechanism on a log grid)"
    proof: ClassVar[str] = "docs/theory/quantiles.md#private-bounds"
    source = (
        "Smith, STOC 2011 (exponential-mechanism quantile) on log-magnitudes; in the spirit of Harrison 2024 "
        "(privately bounded local sensitivity)"
    )

    def __init__(
        self,
        *,
        epsilon: float,
        scale: float = 1.0,
        octaves: int = 60,
        coverage: float = 0.5,
        numerics: str = "exact",
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.scale = check_positive("scale", scale)
        self.octaves = check_int("octaves", octaves, minimum=1, maximum=500)
        self.coverage = check_in_range("coverage", coverage, 0.0, 1.0)
        self.numerics = check_numerics(numerics)
        try:
            top = math.ldexp(self.scale, self.octaves + 2)
        except OverflowError:  # math.ldexp raises instead of returning inf
            top = math.inf
        if not math.isfinite(top):
            raise ValueError(f"scale·2^octaves overflows; got scale={scale!r}, octaves={octaves!r}")
        self.guarantee = PureDP(self.epsilon, neighbours="substitution")
        self.calibration = None

    @property
    def statistic_name(self) -> str:
        return "range"

    @property
    def log_bounds(self) -> tuple[float, float]:
        """The public continuum [log2 s − K, log2 s + K] of the log-magnitudes."""
        centre = math.log2(self.scale)
        return centre - self.octaves, centre + self.octaves

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        # The library's one conversion (strings refused, None → NaN, huge ints → ±inf), then our own copy.
        arr = np.array(as_float_array(data, "x"), dtype=np.float64, copy=True)
        if arr.ndim != 1:
            raise ValueError(f"x must be 1-D (one record per person); got shape {arr.shape}")
        arr[np.isnan(arr)] = 0.0  # the public imputation value: the centre of the symmetric range
        lo, hi = self.log_bounds
        with np.errstate(divide="ignore"):
            logs = np.log2(np.abs(arr))
        return np.sort(np.clip(logs, lo, hi))

    def sample(self, sorted_logs: NDArray[np.float64], rng: np.random.Generator) -> tuple[float, float]:
        """(−G, G) on prepared data (sorted clamped log-magnitudes; no accountant)."""
        n = sorted_logs.size
        lo, hi = self.log_bounds
        eta = log_weight_margin(epsilon=self.epsilon, n=n, width=hi - lo)
        y = sample_em_quantile(
            sorted_logs,
            lower=lo,
            upper=hi,
            target=self.coverage * n,
            coef=0.5 * (self.epsilon - 4.0 * eta),
            grid=OutputGrid.for_bounds(lo, hi),
            rng=rng,
            numerics=self.numerics,
        )
        octave = min(math.ceil(y - math.log2(self.scale)) + 2, self.octaves + 2)
        top = math.ldexp(self.scale, octave)
        return -top, top

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        return self._make_release(
            self.sample(prepared, rng),
            sampler=sampler_label(self.numerics),
            details={"scale": self.scale, "octaves": self.octaves, "coverage": self.coverage},
            not_private=NotPrivate(),
        )

    def __repr__(self) -> str:
        return f"PrivateRange({self.guarantee}, scale={self.scale:g}, octaves={self.octaves})"


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
