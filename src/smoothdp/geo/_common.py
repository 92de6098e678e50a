"""What every geo-privacy mechanism shares: the estimate, the variance report and user chunking."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.geo._query import GeoQuery
from smoothdp.privacy import Guarantee, compose
from smoothdp.rng import SeedLike
from smoothdp.validation import check_data, check_int

__all__ = ["GeoEstimate", "GeoMechanism", "GeoVariance"]

#: Users per block on the fast paths: small enough for the CPU cache, large enough to amortize numpy.
USER_BLOCK = 1 << 16


@dataclass(frozen=True)
class GeoEstimate:
    """The analyst's estimate from the users' reports.

    Attributes
    ----------
    mean
        Estimate of (1/n) Σ_i f(x_i), shape ``param_shape``.
    total
        Estimate of Σ_i f(x_i) (= n·mean).
    n
        Number of users.
    """

    mean: NDArray[np.float64]
    total: NDArray[np.float64]
    n: int


@dataclass(frozen=True)
class GeoVariance:
    """Exact variance of the reports.

    Attributes
    ----------
    per_user
        Var of each user's contribution, shape ``param_shape + U`` (``None`` when not asked for).
    total
        Σ_i Var: the variance of the estimated sum, shape ``param_shape``.
    of_mean
        total / n²: the variance of the estimated mean.
    """

    per_user: NDArray[np.float64] | None
    total: NDArray[np.float64]
    of_mean: NDArray[np.float64]


def user_blocks(x: NDArray[np.float64], dimension: int, block: int) -> Iterator[tuple[slice, NDArray]]:
    """Blocks of users of a flattened (n,) or (n, 2) array."""
    n = x.shape[0]
    for start in range(0, n, block):
        yield slice(start, min(start + block, n)), x[start : start + block]


class GeoMechanism(ABC):
    """A local geo-privacy mechanism: each user sends one report per query; the analyst averages them.

    Subclasses implement :meth:`privatize`, :meth:`_user_variance` (checked input, shape P + U) and set
    ``guarantee`` and ``source``.
    """

    query: GeoQuery
    guarantee: Guarantee
    source: str = ""
    name: str = "geo mechanism"

    @property
    def epsilon(self) -> float:
        return self.guarantee.epsilon

    @property
    def delta(self) -> float:
        return self.guarantee.delta

    def total_guarantee(self) -> Guarantee:
        """What one user spends when answering every query of the grid (basic composition).

        Raises ``ValueError`` (from :class:`~smoothdp.privacy.GeoPrivacy`) when the δ's add up to 1 or
        more: such a grid has no guarantee left.
        """
        count = int(np.prod(self.query.param_shape, dtype=np.int64))
        return compose(*([self.guarantee] * count))

    @abstractmethod
    def privatize(self, x: ArrayLike, rng: SeedLike = None) -> NDArray[np.float64]:
        """One report per user (and per query); ``rng=None``: the secure generator."""

    def estimate(self, reports: ArrayLike) -> GeoEstimate:
        """Unbiased estimate of the mean and sum of f over users from their reports (shape P + U)."""
        r = check_data(reports, "reports")
        p_ndim = len(self.query.param_shape)
        if r.shape[:p_ndim] != self.query.param_shape:
            raise ValueError(
                f"reports must have shape param_shape + users = {self.query.param_shape} + (n, ...); "
                f"got {r.shape}"
            )
        axes = tuple(range(p_ndim, r.ndim))
        n = int(np.prod(r.shape[p_ndim:], dtype=np.int64))
        total = r.sum(axis=axes)
        return GeoEstimate(mean=total / n, total=total, n=n)

    def variance(self, x: ArrayLike, *, per_user: bool = True, block: int = USER_BLOCK) -> GeoVariance:
        """Exact variance of each report and of the estimated sum and mean.

        With ``per_user=False`` users are processed in blocks and only the totals are kept (memory
        O(|P|·block)), the way to evaluate a large grid of queries over many users.
        """
        pts = self.query.check_points(x)
        users = self.query.user_shape(pts)
        n = int(np.prod(users, dtype=np.int64))
        if per_user:
            var = self._user_variance(pts)
            total = var.reshape((*self.query.param_shape, -1)).sum(axis=-1)
            return GeoVariance(per_user=var, total=total, of_mean=total / n**2)
        flat = pts.reshape((-1, 2) if self.query.dimension == 2 else (-1,))
        # Bound the working set to ~256k values (param_shape × block, cache-sized) whatever the grid size.
        n_params = int(np.prod(self.query.param_shape, dtype=np.int64))
        blk = max(1, min(check_int("block", block, minimum=1), (1 << 18) // max(1, n_params)))
        total = np.zeros(self.query.param_shape)
        for _, chunk in user_blocks(flat, self.query.dimension, blk):
            total += self._user_variance(chunk).sum(axis=-1)
        return GeoVariance(per_user=None, total=total, of_mean=total / n**2)

    @abstractmethod
    def _user_variance(self, x: NDArray[np.float64]) -> NDArray[np.float64]: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.query.name}, {self.guarantee})"
