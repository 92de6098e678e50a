"""``smoothdp budget init|show|verify|export|migrate``: a persistent privacy budget, the library's ledger
(:meth:`smoothdp.Accountant.create`, :meth:`~smoothdp.Accountant.open`; docs/ledger.md), shared by every
``smoothdp release ... --budget LEDGER`` (how a release is charged: :mod:`smoothdp.cli.budgeted`).

A ledger is a SQLite file or a ``postgresql://`` URL. ``--key-file`` gives the secret of a keyed (HMAC)
ledger. ``init --neighbours`` is what the budget protects: ``substitution`` and ``add_remove`` count the
central releases, ``metric`` the geo-privacy ones (ε per unit of distance).
"""

from __future__ import annotations

import argparse
from typing import Any

from smoothdp.cli.budgeted import open_ledger, read_key
from smoothdp.cli.output import num
from smoothdp.cli.parsing import EXIT_OK, CliError, CliParser, first_line, subcommand

__all__ = ["BUDGET_RELATIONS", "add_parsers"]

#: The neighbour relations a ``smoothdp budget init`` ledger can count: the central releases' two, and
#: geo-privacy (``metric``: ε per unit of Euclidean distance).
BUDGET_RELATIONS = ("substitution", "add_remove", "metric")
EXAMPLE = (
    "smoothdp budget init budget.db --epsilon 3\n"
    "  smoothdp release median people.csv --column age --epsilon 1 --bounds 0 125 --budget budget.db\n"
    "  smoothdp budget show budget.db\n"
    "  smoothdp budget verify budget.db --anchor N:HEX   # the head a release printed"
)
WHERE = "a ledger: a SQLite file (a path) or a postgresql://…[#name] URL"
KEY_HELP = "the secret key of a keyed (HMAC) ledger: the file's bytes, less one final newline"


def add_parsers(commands: Any) -> None:
    """``smoothdp budget init|show|verify|export|migrate``."""
    budget = subcommand(
        commands,
        "budget",
        help="a persistent privacy budget shared by 'release --budget LEDGER' invocations",
        example=EXAMPLE,
    )
    budget.set_defaults(run=_run)
    actions = budget.add_subparsers(
        dest="budget_command",
        parser_class=CliParser,
        required=True,
        metavar="{init,show,verify,export,migrate}",
    )
    init = actions.add_parser("init", help="create a ledger with its total (never over an existing one)")
    init.add_argument("file", metavar="LEDGER", help=f"{WHERE}, to create")
    init.add_argument("--epsilon", required=True, type=float, metavar="E", help="the total ε > 0")
    init.add_argument(
        "--delta", type=float, default=0.0, metavar="D", help="the total δ in [0, 1) (default 0)"
    )
    init.add_argument(
        "--neighbours",
        default="substitution",
        choices=BUDGET_RELATIONS,
        help=(
            "what the budget protects (default substitution: it also counts add/remove releases, such as "
            "'release mean --neighbours add_remove', at 2ε by group privacy; add_remove takes only "
            "add/remove releases; metric: geo-privacy, ε per unit of distance, for 'release geo-...')"
        ),
    )
    init.add_argument(
        "--slack",
        type=float,
        default=0.0,
        metavar="S",
        help="δ' in [0, delta] reserved for advanced composition and zCDP (default 0: basic composition)",
    )
    init.add_argument(
        "--key-file", metavar="FILE", help=f"make a keyed ledger (HMAC-SHA-256 chain); {KEY_HELP}"
    )
    show = actions.add_parser("show", help="print the total, what is spent and left, and every charge")
    show.add_argument("file", metavar="LEDGER", help=WHERE)
    show.add_argument("--json", action="store_true", help="print the ledger as one JSON object")
    show.add_argument("--key-file", metavar="FILE", help=KEY_HELP)
    verify = actions.add_parser(
        "verify", help="check the whole hash chain (and an anchor kept elsewhere); exit 2 when it fails"
    )
    verify.add_argument("file", metavar="LEDGER", help=WHERE)
    verify.add_argument(
        "--anchor",
        action="append",
        default=[],
        metavar="N:HEX",
        help="a chain head printed by an earlier release: charge N must still have that digest (repeatable)",
    )
    verify.add_argument("--key-file", metavar="FILE", help=KEY_HELP)
    export = actions.add_parser("export", help="print the ledger as JSON, with its chain (for migrate)")
    export.add_argument("file", metavar="LEDGER", help=WHERE)
    export.add_argument("--key-file", metavar="FILE", help=KEY_HELP)
    migrate = actions.add_parser(
        "migrate", help="move an old JSON budget file (or an export) into a new ledger"
    )
    migrate.add_argument("source", metavar="OLD.json", help="the JSON budget file or export")
    migrate.add_argument("file", metavar="NEW", help=f"{WHERE}, to create")
    migrate.add_argument(
        "--key-file", metavar="FILE", help=f"the key of a keyed export, or of the new ledger; {KEY_HELP}"
    )


def _run(args: argparse.Namespace) -> int:
    from smoothdp.ledger import LedgerError

    commands = {
        "init": _init,
        "show": _show,
        "verify": _verify,
        "export": _export,
        "migrate": _migrate,
    }
    try:
        return commands[args.budget_command](args)
    except LedgerError as error:
        raise CliError(f"budget {args.file}: {first_line(error)}") from None


def _init(args: argparse.Namespace) -> int:
    from smoothdp.accounting import Accountant

    try:
        accountant = Accountant.create(
            args.file,
            args.epsilon,
            args.delta,
            neighbours=args.neighbours,
            slack=args.slack,
            key=read_key(args.key_file),
        )
    except (ValueError, TypeError) as error:
        raise CliError(first_line(error)) from None
    with accountant:
        total, head = accountant.total, accountant.head
    print(
        f"created {args.file}: total ε = {num(total.epsilon)}, δ = {num(total.delta)} "
        f"(neighbours: {accountant.neighbours}); chain head {head}"
    )
    return EXIT_OK


def _show(args: argparse.Namespace) -> int:
    import json

    with open_ledger(args.file, read_key(args.key_file)) as accountant:
        payload = accountant.to_dict()  # one transaction: the totals and charges agree
    if args.json:
        print(json.dumps({"file": args.file, **payload}, ensure_ascii=False))
        return EXIT_OK
    total, spent, left = payload["total"], payload["spent"], payload["remaining"]
    print(f"budget:      {args.file} ({accountant.location})")
    print(
        f"total:       ε = {num(total['epsilon'])}, δ = {num(total['delta'])}   "
        f"(neighbours: {accountant.neighbours})"
    )
    charges = payload["charges"]
    amount = f"ε = {num(spent['epsilon'])}, δ = {num(spent['delta'])}"
    print(f"spent:       {amount} in {len(charges)} charge(s)")
    print(f"remaining:   ε = {num(left['epsilon'])}, δ = {num(left['delta'])}")
    head = payload["ledger"]["head"]
    print(f"chain head:  {head['charges']}:{head['digest']}")
    for charge in charges:
        amount = (
            f"ε = {num(charge['epsilon'])}, δ = {num(charge['delta'])}"
            if "epsilon" in charge
            else json.dumps(charge["counted"])
        )
        how = (
            ""
            if charge["counted"] == charge["guarantee"]
            else f"   (declared {_guarantee_text(charge['guarantee'])}, counted by group privacy)"
        )
        label = charge["label"] or "(no label)"
        print(f"  #{charge['seq']:<4} {charge['time'] or 'no time':<20}  {amount:<24}  {label}{how}")
    return EXIT_OK


def _guarantee_text(fields: dict[str, Any]) -> str:
    from smoothdp.ledger.records import guarantee_from_dict

    return str(guarantee_from_dict(fields))


def _verify(args: argparse.Namespace) -> int:
    with open_ledger(args.file, read_key(args.key_file)) as accountant:  # opening verifies the whole chain
        try:
            head = accountant.verify()
            for anchor in args.anchor:
                accountant.verify(anchor=anchor)
        except ValueError as error:
            raise CliError(first_line(error)) from None
        spent = accountant.spent
    anchors = f"; anchor(s) {', '.join(args.anchor)} hold" if args.anchor else ""
    print(
        f"verified {args.file}: the chain holds {head.charges if head else 0} charge(s), head {head}; "
        f"spent ε = {num(spent.epsilon)}, δ = {num(spent.delta)}{anchors}"
    )
    return EXIT_OK


def _export(args: argparse.Namespace) -> int:
    import json

    with open_ledger(args.file, read_key(args.key_file)) as accountant:
        payload = accountant.to_dict()
    print(json.dumps(payload, indent=2, ensure_ascii=False))
    return EXIT_OK


def _migrate(args: argparse.Namespace) -> int:
    from smoothdp.ledger import migrate

    try:
        accountant = migrate(args.source, args.file, key=read_key(args.key_file))
    except (ValueError, TypeError) as error:
        raise CliError(f"cannot migrate {args.source}: {first_line(error)}") from None
    with accountant:
        spent, head, n = accountant.spent, accountant.head, len(accountant)
    print(
        f"migrated {n} charge(s) from {args.source} into {args.file}: spent ε = {num(spent.epsilon)}, "
        f"δ = {num(spent.delta)}; chain head {head}"
    )
    return EXIT_OK
