"""Check that the default mean, var and std are charged the ε the caller passed (issue 22, "done when").

    .venv/bin/python -m benchmarks.accuracy.charged_epsilon

For each of ``smoothdp.mean``, ``smoothdp.var`` and ``smoothdp.std`` with every argument default: a fresh
substitution budget ``Accountant(epsilon=1)``, one release at ``epsilon=1`` (must fit, no ``BudgetError``),
then the budget must be spent exactly (ε spent = 1, remaining 0) and a second release at any ε must be
refused. Prints one line per statistic and exits non-zero on the first mismatch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ChargeCheck", "check_charges"]


@dataclass(frozen=True)
class ChargeCheck:
    statistic: str
    epsilon_passed: float
    epsilon_in_release: float
    spent: float
    remaining: float
    second_refused: bool

    @property
    def ok(self) -> bool:
        return (
            self.epsilon_in_release == self.epsilon_passed
            and self.spent == self.epsilon_passed
            and self.remaining == 0.0
            and self.second_refused
        )

    def line(self) -> str:
        return (
            f"smoothdp.{self.statistic}(x, epsilon={self.epsilon_passed:g}, bounds=(0, 125), "
            f"accountant=Accountant(epsilon={self.epsilon_passed:g})): "
            f"release ε = {self.epsilon_in_release:g}, "
            f"spent ε = {self.spent:g}, remaining ε = {self.remaining:g}, a second release refused: "
            f"{self.second_refused} -> {'OK' if self.ok else 'MISMATCH'}"
        )


def check_charges(epsilon: float = 1.0, seed: int = 2026) -> list[ChargeCheck]:
    """One default release of each statistic on a fresh substitution budget of exactly ``epsilon``."""
    import smoothdp
    from smoothdp.accounting import Accountant
    from smoothdp.rng import default_rng

    x = np.random.default_rng(seed).uniform(18.0, 90.0, 500)
    out = []
    for name in ("mean", "var", "std"):
        fn = getattr(smoothdp, name)
        budget = Accountant(epsilon=epsilon)  # neighbours="substitution" by default
        release = fn(x, epsilon=epsilon, bounds=(0.0, 125.0), rng=default_rng(seed), accountant=budget)
        try:
            fn(x, epsilon=1e-3, bounds=(0.0, 125.0), rng=default_rng(seed), accountant=budget)
            refused = False
        except Exception as exc:  # BudgetError: the budget is spent
            refused = type(exc).__name__ == "BudgetError"
        out.append(
            ChargeCheck(
                statistic=name,
                epsilon_passed=epsilon,
                epsilon_in_release=float(release.guarantee.epsilon),
                spent=float(budget.spent.epsilon),
                remaining=float(budget.remaining.epsilon),
                second_refused=refused,
            )
        )
    return out


def main() -> int:
    checks = check_charges()
    for c in checks:
        print(c.line())
    return 0 if all(c.ok for c in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
