"""The composition theorems the :class:`~smoothdp.accounting.Accountant` takes the tightest of.

Each function maps a list of guarantees (already counted under the accountant's relation) to a total
(ε, δ) as exact rationals, rounded up where floats are involved: basic composition, advanced composition
(Dwork, Rothblum & Vadhan, FOCS 2010) and zCDP (Bun & Steinke, TCC 2016). Proofs:
docs/theory/privacy-definitions.md#advanced-composition.
"""

from __future__ import annotations

import math
from fractions import Fraction

from smoothdp.privacy import ZCDP, Guarantee, PrivacyGuarantee, pure_as_zcdp

__all__ = [
    "advanced_composition",
    "basic_composition",
    "epsilon_delta",
    "exact_sum",
    "split_epsilon",
    "zcdp_composition",
]


def exact_sum(values: list[float]) -> Fraction:
    """Σ values, exactly (as a rational)."""
    return sum(map(Fraction, values), Fraction(0))


def split_epsilon(epsilon: float, *shares: float) -> tuple[float, ...]:
    """(ε₁, …, ε_k, rest) with ε_i = shares[i]·ε and rest = ε − ε₁ − … − ε_k, so that they sum to at most ε
    exactly: the budgets of stages composed sequentially (rest stepped down by ulps if the float subtractions
    round up). One share gives the two budgets (share·ε, the rest). The shares are public constants of the
    library: each in [0, 1] and together at most 1 (else a ValueError names them)."""
    if any(not 0.0 <= s <= 1.0 for s in shares) or sum(map(Fraction, shares)) > 1:
        raise ValueError(f"shares must each lie in [0, 1] and sum to at most 1; got {shares!r}")
    parts = [share * epsilon for share in shares]
    rest = epsilon
    for part in parts:
        rest -= part
    while sum(map(Fraction, parts), Fraction(rest)) > Fraction(epsilon):
        rest = math.nextafter(rest, 0.0)
    return (*parts, rest)


def epsilon_delta(g: PrivacyGuarantee) -> tuple[float, float]:
    """(ε, δ) of an (ε, δ) guarantee."""
    assert isinstance(g, Guarantee)
    return g.epsilon, g.delta


def basic_composition(gs: list[PrivacyGuarantee]) -> tuple[Fraction, Fraction]:
    """Σ ε_i, Σ δ_i, exactly (docs/theory/privacy-definitions.md#basic-composition)."""
    pairs = [epsilon_delta(g) for g in gs]
    return exact_sum([e for e, _ in pairs]), exact_sum([d for _, d in pairs])


def advanced_composition(gs: list[PrivacyGuarantee], slack: float) -> tuple[Fraction, Fraction]:
    """Dwork, Rothblum & Vadhan (FOCS 2010), heterogeneous form; rounded up."""
    pairs = [epsilon_delta(g) for g in gs]
    sq = math.fsum(e * e for e, _ in pairs)
    drift = math.fsum(e * math.expm1(e) for e, _ in pairs)
    eps = math.sqrt(2.0 * math.log(1.0 / slack) * sq) + drift
    eps = eps * (1.0 + 1e-12)  # covers the float error of the few operations above
    return Fraction(eps), exact_sum([d for _, d in pairs]) + Fraction(slack)


def zcdp_composition(gs: list[PrivacyGuarantee], slack: float) -> tuple[Fraction, Fraction]:
    """zCDP for the zCDP and pure charges, basic composition for the (ε, δ) ones; rounded up."""
    rho, eps_rest, delta_rest = [], [], []
    for g in gs:
        if isinstance(g, ZCDP):
            rho.append(g.rho)
        elif isinstance(g, Guarantee) and g.is_pure:
            rho.append(pure_as_zcdp(g).rho)
        else:
            e, d = epsilon_delta(g)
            eps_rest.append(e)
            delta_rest.append(d)
    eps = 0.0
    if rho:
        r = math.fsum(rho)
        eps = (r + 2.0 * math.sqrt(r * math.log(1.0 / slack))) * (1.0 + 1e-12)
    return Fraction(eps) + exact_sum(eps_rest), exact_sum(delta_rest) + (
        Fraction(slack) if rho else Fraction(0)
    )
