"""The object every central-DP release returns: the value and everything needed to judge it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from smoothdp.privacy import Guarantee

__all__ = ["Release"]


@dataclass(frozen=True)
class Release:
    """A differentially private release.

    **Only ``value``, ``refused`` and ``reason`` are covered by ``guarantee``; they are safe to publish.**
    ``noise_scale``, ``noise_std`` and ``smooth_sensitivity`` are computed from the private data (the
    smooth sensitivity is data-dependent by design) and are *not* private: they are for the data holder,
    to judge accuracy, and must not be published beside the value. ``details["not_private"]`` lists every
    field of this kind for the release at hand. ``beta``, ``mechanism``, ``source`` and ``statistic`` are
    data-independent.

    Attributes
    ----------
    value
        The released number (``None`` when the mechanism refused, e.g. a failed PTR test).
    guarantee
        The privacy spent, *also when refused* (the test itself spends budget).
    statistic
        What was released (``"median"``, ...).
    mechanism
        Which mechanism produced it.
    source
        The paper and lemma the guarantee rests on.
    noise_scale
        The scale of the noise added to the true value (``S(x)``·scale of Z).
    noise_std
        The standard deviation of that noise (``inf`` where it has none).
    smooth_sensitivity, beta
        The smooth sensitivity used and its smoothness, for smooth-sensitivity mechanisms.
    refused, reason
        ``refused=True`` when the mechanism declined to release; ``reason`` says why.
    sampler
        The sampling path used (see :mod:`smoothdp.noise`).
    details
        Anything else mechanism-specific (budget split, block count, ...).
    """

    value: float | None
    guarantee: Guarantee
    statistic: str
    mechanism: str
    source: str
    noise_scale: float | None = None
    noise_std: float | None = None
    smooth_sensitivity: float | None = None
    beta: float | None = None
    refused: bool = False
    reason: str = ""
    sampler: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def private_fields_excluded(self) -> tuple[str, ...]:
        """Fields computed from the data that the guarantee does *not* cover (do not publish them)."""
        return tuple(self.details.get("not_private", ()))

    def __float__(self) -> float:
        if self.value is None:
            raise ValueError(f"the release was refused: {self.reason}")
        return float(self.value)

    def __str__(self) -> str:
        if self.refused:
            return f"{self.statistic}: refused ({self.reason}); spent {self.guarantee}"
        # Only data-independent fields go into the string, which is what ends up published.
        private_std = self.noise_std is not None and "noise_std" not in self.private_fields_excluded
        noise = f", noise std {self.noise_std:.4g}" if private_std else ""
        return f"{self.statistic} = {self.value:.6g} ({self.guarantee}, {self.mechanism}{noise})"
