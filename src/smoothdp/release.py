"""The object every release returns: the private value, what it cost, and, apart, what must not be published.

``repr(release)``, ``str(release)`` and :meth:`Release.to_dict` show only what the guarantee covers or
what does not depend on the data. Values computed from the private data without protection (the smooth
sensitivity, the noise scale and standard deviation that follow from it, ...) are kept for the data
holder under :attr:`Release.not_private` and are never printed.

A release drawn from a generator that :func:`smoothdp.rng.is_secure` does not vouch for (a seed, numpy's
own generators) is a **simulation** (``is_simulation=True``): its noise can be regenerated, so it protects
nothing. Its :attr:`Release.guarantee_text`, its ``str`` and its ``to_dict`` say so with
:data:`SIMULATION_NOTE`; ``guarantee`` still records what the same mechanism spends with secure
randomness, and that is what an accountant is charged, so a simulated pipeline meets the same budget
checks as the real one (docs/theory/privacy-definitions.md#randomness-and-simulations).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from smoothdp.keywords import check_keywords_of
from smoothdp.privacy import PrivacyGuarantee

__all__ = ["SIMULATION_NOTE", "NotPrivate", "Release", "jsonable"]

#: What the guarantee text of a simulation (seeded or non-cryptographic generator) says.
SIMULATION_NOTE = "SIMULATION (seeded or non-cryptographic generator): not private"


@dataclass(frozen=True, repr=False)
class NotPrivate:
    """Data-dependent values that the guarantee does **not** cover: for the data holder, never to publish.

    Attributes
    ----------
    smooth_sensitivity
        The smooth sensitivity S_β(x) used (a function of the data by design).
    noise_scale
        The scale of the noise added to the true value (S_β(x)·scale of Z).
    noise_std
        The standard deviation of that noise (``inf`` where it has none).
    extra
        Anything else of that kind (mechanism-specific).
    """

    smooth_sensitivity: float | None = None
    noise_scale: float | None = None
    noise_std: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return "NotPrivate(<data-dependent values hidden; read the attributes, do not publish them>)"


def _jsonable(value: Any) -> Any:
    """Plain JSON values: floats at full precision (non-finite as strings), arrays as lists."""
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, PrivacyGuarantee):
        return _jsonable(value.as_dict())
    return value


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON values: floats at full precision (non-finite as strings), arrays and tuples
    as lists, guarantees as their dicts (what :meth:`Release.to_dict` uses)."""
    return _jsonable(value)


@dataclass(frozen=True, repr=False)
class Release:
    """A private release.

    **Covered by ``guarantee``** (unless ``is_simulation``): ``value``, ``refused``, ``reason``.
    **Data-independent:** ``statistic``, ``mechanism``, ``source``, ``proof``, ``beta``, ``sampler``,
    ``is_simulation`` and ``details``. Both kinds are safe to
    publish, and they are all that ``repr``, ``str`` and :meth:`to_dict` show. **Not private:**
    :attr:`not_private` (the smooth sensitivity, noise scale and std), for the data holder only.

    Attributes
    ----------
    value
        The released number (an array for vector releases and local-model reports; ``None`` when the
        mechanism refused, e.g. a failed PTR test).
    guarantee
        The privacy spent, with its neighbour relation, *also when refused* (the test spends budget).
    statistic
        What was released (``"median"``, ...).
    mechanism
        Which mechanism produced it.
    source
        The papers and lemmas the guarantee rests on.
    proof
        The section of this project's docs with the proof (``docs/theory/<page>.md#<section>``).
    beta
        The smoothness of the smooth sensitivity (data-independent), for smooth-sensitivity mechanisms.
    refused, reason
        ``refused=True`` when the mechanism declined to release; ``reason`` says why (data-independent
        wording; the refusal itself is covered by the guarantee).
    sampler
        The sampling path used (see :mod:`smoothdp.noise`).
    details
        Public, data-independent, mechanism-specific values (budget split, bounds, block count, ...).
    is_simulation
        ``True`` when the noise came from a seeded or non-cryptographic generator: the value is **not
        private** (the noise can be regenerated). Set by :meth:`smoothdp.mechanism.Mechanism.release`.
    caveat
        Non-empty when the guarantee rests on an assumption the library could not check (e.g. a
        LipschitzQuery whose curvature was estimated: "HEURISTIC: ..."); printed with the guarantee.
    not_private
        :class:`NotPrivate`: data-dependent values for the data holder; never publish them.
    """

    value: Any
    guarantee: PrivacyGuarantee
    statistic: str
    mechanism: str
    source: str
    proof: str = ""
    beta: float | None = None
    refused: bool = False
    reason: str = ""
    sampler: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    not_private: NotPrivate = field(default_factory=NotPrivate)
    is_simulation: bool = False
    caveat: str = ""

    @property
    def neighbours(self) -> str:
        """The neighbour relation of the guarantee."""
        return self.guarantee.neighbours

    @property
    def guarantee_text(self) -> str:
        """The guarantee in words; for a simulation, followed by :data:`SIMULATION_NOTE`, and by the
        :attr:`caveat` when the guarantee rests on an unproved assumption (e.g. a heuristic bound)."""
        text = str(self.guarantee)
        if self.caveat:
            text += f" — {self.caveat}"
        if self.is_simulation:
            text += f" — {SIMULATION_NOTE}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """The public fields as JSON-ready values (full precision); ``not_private`` is left out."""
        return _jsonable(
            {
                "value": self.value,
                "refused": self.refused,
                "reason": self.reason,
                "statistic": self.statistic,
                "guarantee": self.guarantee,
                "guarantee_text": self.guarantee_text,
                "is_simulation": self.is_simulation,
                "caveat": self.caveat,
                "neighbours": self.neighbours,
                "mechanism": self.mechanism,
                "source": self.source,
                "proof": self.proof,
                "beta": self.beta,
                "sampler": self.sampler,
                "details": self.details,
            }
        )

    def __float__(self) -> float:
        if self.value is None:
            raise ValueError(f"the release was refused: {self.reason}")
        return float(self.value)

    def __str__(self) -> str:
        note = (f" — {self.caveat}" if self.caveat else "") + (
            f" — {SIMULATION_NOTE}" if self.is_simulation else ""
        )
        if self.refused:
            return f"{self.statistic}: refused ({self.reason}); spent {self.guarantee}{note}"
        value = self.value
        if isinstance(value, float | int | np.floating):
            shown = f"{value:.6g}"
        elif hasattr(value, "dask"):  # a lazy dask collection: printing must not compute it
            shown = f"a lazy {type(value).__name__} of shape {getattr(value, 'shape', '?')}"
        else:
            shown = np.array2string(np.asarray(value), precision=6, threshold=8)
        return f"{self.statistic} = {shown} ({self.guarantee}, {self.mechanism}){note}"

    def __repr__(self) -> str:
        public = ", ".join(
            f"{k}={getattr(self, k)!r}"
            for k in ("value", "guarantee", "statistic", "mechanism", "beta", "refused", "reason")
        )
        if self.is_simulation:
            public += ", is_simulation=True"
        return f"Release({public}, proof={self.proof!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython / Jupyter
        printer.text(repr(self))


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
