"""Running one release, with or without a ``--budget`` ledger: the order of the steps is the guarantee.

A command describes its release as a :class:`Plan` (everything public fixed before the data is read) and
:func:`execute` runs it. Without ``--budget``: read the data, release, print. With ``--budget LEDGER``
(:meth:`smoothdp.Accountant.open`; docs/ledger.md):

1. open the ledger (its whole hash chain verified: a missing, tampered, hard-linked or old JSON file is an
   error, exit 2) and check that the guarantee the release will declare fits what is spent now, *before*
   the data is read: when it does not, nothing is read, no noise is drawn, nothing about the data is
   printed, and the exit status is 3; a release under a relation the budget cannot count (a substitution
   release on an add/remove budget, a central release on a geo-privacy budget) is an error (2);
2. read the data and run the release with the ledger's accountant, which the library charges in one
   transaction (re-read what is spent, check, record, commit) before the noise is drawn; another process
   that spent the rest in between makes this charge fail with exit 3, nothing drawn (an add/remove release
   on a substitution budget counts 2ε by group privacy);
3. confirm that the ledger the path or URL names now holds the charge as recorded (not a replaced or
   forked file), and only then print the release, the budget left and the chain head of its charge
   (``N:HEX``, to keep elsewhere: ``smoothdp budget verify LEDGER --anchor N:HEX`` later proves that the
   ledger was not rolled back or rewritten before it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smoothdp.cli.parsing import EXIT_OK, BudgetRefused, CliError, first_line

if TYPE_CHECKING:
    from smoothdp.accounting import Accountant
    from smoothdp.privacy import PrivacyGuarantee

__all__ = ["Plan", "execute", "open_ledger", "read_key"]

#: A budget summary printed with a release: the ledger, the charges made, what is left, the chain head.
Summary = dict[str, Any]


@dataclass(frozen=True)
class Plan:
    """One release as a command runs it.

    Attributes
    ----------
    label
        What the release is (``"median of age in people.csv"``): the label of its ledger charge.
    expected
        The guarantee the release will declare, from public parameters only (checked against the budget
        before the data is read).
    read
        Reads the data (called once, after the budget check).
    run
        ``run(data, accountant)``: the library's release, charged to ``accountant`` (if any) before its
        noise; returns what ``show`` prints.
    show
        ``show(result, summary)``: prints the result (``summary``: the budget, or None).
    """

    label: str
    expected: Callable[[], PrivacyGuarantee]
    read: Callable[[], Any]
    run: Callable[[Any, Accountant | None], Any]
    show: Callable[[Any, Summary | None], None]


def execute(plan: Plan, budget: str | None, key_file: str | None = None) -> int:
    """Run ``plan``, charged to the ledger ``budget`` when given (module docstring: steps 1 to 3)."""
    if budget is None:
        data = plan.read()
        plan.show(_run(plan, data, None), None)
        return EXIT_OK
    from smoothdp.ledger import LedgerError

    expected = plan.expected()
    key = read_key(key_file)
    with open_ledger(budget, key, label_prefix=f"{plan.label}: ") as accountant:
        _check_budget(accountant, expected, budget, plan.label)
        data = plan.read()  # only now is the data read
        try:
            result = _run(plan, data, accountant)  # charged before its noise (step 2)
            made = accountant.charged_here
            for charge in made:  # the ledger the path names holds it: not a replaced or forked file
                accountant.confirm(charge)
            left = accountant.remaining
        except LedgerError as error:
            raise CliError(f"budget {budget}: {first_line(error)}") from None
    summary = {
        "file": budget,
        "charged": [_amount(c.counted) for c in made],
        "remaining": {"epsilon": left.epsilon, "delta": left.delta},
        "head": f"{made[-1].seq}:{made[-1].digest}" if made else None,
    }
    plan.show(result, summary)
    return EXIT_OK


def _amount(guarantee: Any) -> dict[str, float]:
    """ε and δ of a charge as counted (a zCDP charge is counted as (ε, δ) by the accountant)."""
    return {"epsilon": float(guarantee.epsilon), "delta": float(guarantee.delta)}


def _run(plan: Plan, data: Any, accountant: Accountant | None) -> Any:
    from smoothdp.accounting import BudgetError

    try:
        return plan.run(data, accountant)
    except BudgetError as error:  # the library's own check, before its noise (step 2)
        raise BudgetRefused(str(error)) from None
    except (ValueError, TypeError) as error:
        raise CliError(first_line(error)) from None


def _check_budget(accountant: Accountant, expected: PrivacyGuarantee, target: str, label: str) -> None:
    """Refuse (exit 3) a release the budget cannot pay for, or (exit 2) one it cannot count at all."""
    from smoothdp.accounting import BudgetError
    from smoothdp.ledger import LedgerError

    try:
        accountant.check(expected, label=label)
    except BudgetError as error:
        raise BudgetRefused(f"budget {target}: {error}") from None
    except LedgerError as error:
        raise CliError(f"budget {target}: {first_line(error)}") from None
    except ValueError:
        if accountant.neighbours == "metric":
            hint = "a geo-privacy budget counts only the geo releases, smoothdp release geo-..."
        elif expected.neighbours == "metric":
            hint = "geo-privacy needs a budget made with 'smoothdp budget init ... --neighbours metric'"
        else:
            hint = "a substitution budget counts both relations"
        raise CliError(
            f"budget {target} counts neighbours={accountant.neighbours!r}; this release ({label}) is "
            f"{expected} under {expected.neighbours!r}, which it cannot count: {hint}"
        ) from None


def read_key(path: str | None) -> bytes | None:
    """The secret in ``path`` (its bytes, less one final newline), or None."""
    if path is None:
        return None
    try:
        secret = Path(path).read_bytes()
    except OSError as error:
        raise CliError(f"cannot read the key file {path}: {error.strerror}") from None
    return secret.removesuffix(b"\n").removesuffix(b"\r")


def open_ledger(target: str, key: bytes | None, *, label_prefix: str = "") -> Accountant:
    """The accountant of an existing ledger; any ledger error is one line, exit 2."""
    from smoothdp.accounting import Accountant
    from smoothdp.ledger import LedgerError

    try:
        return Accountant.open(target, key=key, label_prefix=label_prefix)
    except (LedgerError, ValueError, TypeError) as error:
        raise CliError(f"budget {target}: {first_line(error)}") from None


def run_single_release(
    args: Any,
    label: str,
    *,
    expected: Callable[[], PrivacyGuarantee],
    read: Callable[[], Any],
    run: Callable[[Any, Accountant | None], Any],
) -> int:
    """One release printed by :func:`smoothdp.cli.output.print_release`, as ``release`` and the counting
    commands run it: ``label`` marked a simulation when ``--seed`` is given, the printed release marked one
    when seeded or when the library says so, and the :class:`Plan` executed against ``--budget``."""
    from smoothdp.cli import output

    seeded = args.seed is not None

    def show(release: Any, budget: Summary | None) -> None:
        simulation = seeded or bool(getattr(release, "is_simulation", False))
        output.print_release(release, label, simulation=simulation, budget=budget, json_output=args.json)

    plan = Plan(
        label=label + (" [simulation: seeded]" if seeded else ""),
        expected=expected,
        read=read,
        run=run,
        show=show,
    )
    return execute(plan, args.budget, args.budget_key_file)
