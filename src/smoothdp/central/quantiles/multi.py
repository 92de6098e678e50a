"""What the several-quantile mechanisms share: the list of quantiles, the recursion depth and the base class
:class:`MultiQuantile` (parameters, data policy, release).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.central.quantiles.em_samplers import check_width, prepare_data
from smoothdp.exact import OutputGrid, check_numerics, sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP, check_neighbours
from smoothdp.release import NotPrivate, Release
from smoothdp.validation import as_float_array, check_bool, check_bounds, check_epsilon

__all__ = [
    "MultiQuantile",
    "check_quantile_list",
    "recursive_levels",
]


def check_quantile_list(qs: Any) -> NDArray[np.float64]:
    """qs as a 1-D float array of values in [0, 1] (any order, duplicates allowed)."""
    arr = np.atleast_1d(as_float_array(qs, "qs"))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"qs must be a non-empty 1-D sequence of quantiles in [0, 1]; got {qs!r}")
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError(f"qs must lie in [0, 1]; got {qs!r}")
    return arr


def recursive_levels(m: int) -> int:
    """Depth of the recursion on m sorted quantiles (middle first): ⌊log2 m⌋ + 1."""
    return m.bit_length()


class MultiQuantile(Mechanism):
    """Shared parameters of the several-quantile mechanisms (qs: any order, duplicates allowed); abstract (not
    registered): each mechanism defines its own draw."""

    def __init__(
        self,
        qs: ArrayLike,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
        neighbours: str = "substitution",
    ) -> None:
        self.qs = check_quantile_list(qs)
        self.unique_qs, self.inverse = np.unique(self.qs, return_inverse=True)
        self.epsilon = check_epsilon(epsilon)
        self.lower, self.upper = check_bounds(bounds, name="bounds (lower, upper)")
        self.width = check_width(self.lower, self.upper)
        self.clip = check_bool("clip", clip)
        self.clamp = check_bool("clamp", clamp)
        self.numerics = check_numerics(numerics)
        self.grid = OutputGrid.for_bounds(self.lower, self.upper)
        relation = check_neighbours(neighbours, allowed=("substitution", "add_remove"))
        self.guarantee = PureDP(self.epsilon, neighbours=relation)
        self.calibration = None

    @property
    def statistic_name(self) -> str:
        return f"quantiles({', '.join(f'{q:g}' for q in self.qs)})"

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_data(data, self.lower, self.upper, clip=self.clip)

    @abstractmethod
    def _sorted_sample(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        """The sorted outputs of the distinct quantiles (each mechanism's own draw)."""

    def sample(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        """One output (in the order of ``qs``) on prepared data, no accountant (simulations, tests)."""
        out = self._sorted_sample(sorted_x, rng)
        if self.clamp:
            out = np.clip(out, self.lower, self.upper)
        return out[self.inverse]

    def _details(self) -> dict[str, Any]:
        return {"bounds": (self.lower, self.upper), "clip": self.clip, "clamp": self.clamp}

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        return self._make_release(
            self.sample(prepared, rng),
            sampler=sampler_label(self.numerics),
            details=self._details(),
            not_private=NotPrivate(),
        )


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
