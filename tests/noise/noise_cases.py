"""The real-line noise families under test, with what an independent check needs to know about each.

Shared by the parametrized harness (``test_noise_continuous.py``). Every expected number here comes from
outside the code under test: scipy.stats, closed forms from the notes, or the moment rule of the family.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from scipy import stats

from smoothdp.noise import Gaussian, GeneralizedCauchy, Laplace, NoiseDistribution, PolyPlace, StudentT


@dataclass(frozen=True)
class Case:
    """One distribution with its independent facts."""

    id: str
    dist: NoiseDistribution
    #: Points where the density changes formula (the quadrature splits there, and at 0).
    breakpoints: tuple[float, ...] = ()
    #: Whether the variance is finite (the family's moment rule, not the code).
    finite_var: bool = True
    #: Whether the mean exists.
    has_mean: bool = True
    #: A scipy.stats frozen law with the same distribution, when scipy has one.
    reference: Callable[[], object] | None = None
    #: Heavy tails: also gets the χ² test on equal-probability bins.
    heavy: bool = False
    #: Same family with a wrong shape parameter (the χ² test must reject it, body-matched by IQR).
    twin: Callable[[], NoiseDistribution] | None = field(default=None)


def polyplace_case(scale: float, shape: float, heavy: bool = False, twin_shape: float | None = None) -> Case:
    return Case(
        id=f"polyplace-s{scale:g}-a{shape:g}",
        dist=PolyPlace(scale, shape),
        breakpoints=(-scale / shape, scale / shape),
        finite_var=shape > 2,
        heavy=heavy,
        twin=None if twin_shape is None else (lambda: PolyPlace(scale, twin_shape)),
    )


CASES: list[Case] = [
    Case("laplace", Laplace(1.3), reference=lambda: stats.laplace(scale=1.3)),
    Case("gaussian", Gaussian(0.7), reference=lambda: stats.norm(scale=0.7)),
    Case(
        "student_t-3",
        StudentT(3, 2.0),
        reference=lambda: stats.t(3, scale=2.0),
        heavy=True,
        twin=lambda: StudentT(4.5, 2.0),
    ),
    Case(
        "student_t-1.5",
        StudentT(1.5, 1.0),
        finite_var=False,
        reference=lambda: stats.t(1.5),
        heavy=True,
        twin=lambda: StudentT(2.0, 1.0),
    ),
    Case(
        "student_t-0.7",
        StudentT(0.7, 0.5),
        finite_var=False,
        has_mean=False,
        reference=lambda: stats.t(0.7, scale=0.5),
    ),
    Case(
        "gen_cauchy-4",
        GeneralizedCauchy(4, 1.5),
        heavy=True,
        twin=lambda: GeneralizedCauchy(5, 1.5),
    ),
    Case("student_t-30", StudentT(30, 1.0), reference=lambda: stats.t(30)),
    Case("gen_cauchy-6", GeneralizedCauchy(6, 0.8)),
    Case("gen_cauchy-50", GeneralizedCauchy(50, 1.0)),
    Case(
        "gen_cauchy-2",
        GeneralizedCauchy(2, 1.0),
        finite_var=False,
        has_mean=False,
        reference=lambda: stats.cauchy(),
        heavy=True,
        twin=lambda: GeneralizedCauchy(2.5, 1.0),
    ),
    Case("gen_cauchy-1.5", GeneralizedCauchy(1.5, 2.0), finite_var=False, has_mean=False),
    polyplace_case(1.0, 1.5, heavy=True, twin_shape=2.0),
    polyplace_case(2.0, 3.0, heavy=True, twin_shape=4.0),
    polyplace_case(1.0, 2.2),
    polyplace_case(0.5, 10.0),
    polyplace_case(3.0, 1.05),
]


def case_ids() -> list[str]:
    return [c.id for c in CASES]
