"""The mechanism contract: what every mechanism of smoothdp declares and how it releases.

A mechanism is built from public parameters only (the budget, bounds, noise family, ...). It declares

* ``neighbours``: the neighbour relation of its guarantee (``"substitution"``, ``"add_remove"``,
  ``"local"`` or ``"metric"``, see :data:`smoothdp.privacy.NEIGHBOUR_RELATIONS`);
* ``guarantee``: what one call of :meth:`Mechanism.release` spends, fixed before any data is seen;
* ``calibration``: the :class:`~smoothdp.calibration.Calibration` behind its noise (``None`` for the
  mechanisms whose noise is not a smooth-sensitivity calibration);
* ``proof``: the section of this project's docs that proves the guarantee, as
  ``"docs/theory/<page>.md#<section>"`` (a test resolves every one);
* ``source``: the papers and lemmas it rests on, by authors, title, venue and year.

``release(data, *, accountant=None, rng=None) -> Release`` checks the input, charges the accountant
(:func:`smoothdp.accounting.charge`, which raises :class:`~smoothdp.accounting.BudgetError` and charges
nothing when the budget would be exceeded), and only then draws noise. ``rng`` is keyword-only; when the
resolved generator is not secure (:func:`smoothdp.rng.is_secure`: a seed, numpy's own generators) the
release is marked ``Release.is_simulation`` and its guarantee text says it is not private; the accountant
is charged all the same (docs/theory/privacy-definitions.md#randomness-and-simulations). Subclasses implement
:meth:`Mechanism._prepare` (input checks, no randomness) and :meth:`Mechanism._release`.

Every concrete subclass is recorded in :data:`REGISTRY`; the generic tests (``tests/mechanisms``) run the
worst-case privacy-loss check, the broken-twin check and the parameter checks over all of them, and fail
for a registered mechanism that has no test case. CONTRIBUTING.md has the template.
"""

from __future__ import annotations

import dataclasses
import inspect
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from smoothdp.accounting import Accountant, charge
from smoothdp.keywords import checked_keywords
from smoothdp.privacy import PrivacyGuarantee
from smoothdp.release import NotPrivate, Release
from smoothdp.rng import SeedLike, is_secure, resolve_rng

__all__ = ["REGISTRY", "Mechanism", "check_options", "mark_simulation"]

#: Every concrete mechanism class, by qualified name
#: (``"smoothdp.central.frameworks.ptr.ProposeTestRelease"``).
REGISTRY: dict[str, type[Mechanism]] = {}


def mark_simulation(released: Release, gen: np.random.Generator) -> Release:
    """``released`` marked as a simulation (``Release.is_simulation``) when ``gen`` is not secure (a seed,
    numpy's own generators): its noise can be regenerated, so it protects nothing."""
    if is_secure(gen) or released.is_simulation:
        return released
    return dataclasses.replace(released, is_simulation=True)


class Mechanism(ABC):
    """Base class of every mechanism (see the module docstring for the contract).

    Class attributes to set in a subclass: ``name`` (shown in releases), ``proof`` (docs section) and
    ``source`` (papers). Instance attributes set by ``__init__``: ``guarantee`` and ``calibration``.
    """

    name: ClassVar[str] = "mechanism"
    proof: ClassVar[str] = ""
    source: str = ""
    guarantee: PrivacyGuarantee
    calibration: Any = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if inspect.isfunction(init):  # a mistyped keyword is a TypeError that suggests the right one
            setattr(cls, "__init__", checked_keywords(init))  # noqa: B010 - mypy: no assignment to a method
        if not inspect.isabstract(cls) and not cls.__name__.startswith("_"):
            REGISTRY[f"{cls.__module__}.{cls.__qualname__}"] = cls

    @property
    def neighbours(self) -> str:
        """The neighbour relation of the guarantee."""
        return self.guarantee.neighbours

    @property
    def statistic_name(self) -> str:
        """What a release of this mechanism is called (``Release.statistic``)."""
        return self.name

    def release(self, data: Any, *, accountant: Accountant | None = None, rng: SeedLike = None) -> Release:
        """One private release on ``data``: check it, charge ``accountant``, then draw the noise.

        Raises :class:`~smoothdp.accounting.BudgetError` (before any noise is drawn, nothing charged)
        when ``accountant`` cannot pay for ``self.guarantee``. A generator that is not secure (a seed,
        numpy's own generators) makes the release a simulation (``Release.is_simulation``), still charged.
        """
        prepared = self._prepare(data)
        gen = resolve_rng(rng)
        charge(accountant, self.guarantee, label=f"{self.statistic_name} ({self.name})")
        return mark_simulation(self._release(prepared, gen), gen)

    def _prepare(self, data: Any) -> Any:
        """Check and prepare the input (no randomness, no budget). Default: unchanged."""
        return data

    @abstractmethod
    def _release(self, prepared: Any, rng: np.random.Generator) -> Release:
        """The release itself, on prepared input, with a resolved generator."""

    def _make_release(
        self,
        value: Any,
        *,
        not_private: NotPrivate | None = None,
        details: dict[str, Any] | None = None,
        **fields: Any,
    ) -> Release:
        """A :class:`Release` carrying this mechanism's guarantee, name, proof and source."""
        return Release(
            value=value,
            guarantee=fields.pop("guarantee", self.guarantee),
            statistic=fields.pop("statistic", self.statistic_name),
            mechanism=fields.pop("mechanism", self.name),
            source=fields.pop("source", self.source),
            proof=fields.pop("proof", self.proof),
            details={"neighbours": self.neighbours, **(details or {})},
            not_private=not_private or NotPrivate(),
            **fields,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.guarantee}, neighbours={self.neighbours!r})"


def check_options(options: dict[str, Any], allowed: tuple[str, ...], *, what: str) -> None:
    """Refuse keywords that do not apply to ``what``, naming the ones that do."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        valid = ", ".join(allowed) if allowed else "none"
        raise TypeError(f"{what} does not take {', '.join(map(repr, unknown))}; valid keywords: {valid}")
