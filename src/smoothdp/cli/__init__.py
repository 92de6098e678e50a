"""The ``smoothdp`` command: a thin layer over the library (parsing and printing only).

* ``smoothdp`` (no command): the usage; ``smoothdp --version``; ``smoothdp demo``: a short tour.
* ``smoothdp release STATISTIC FILE --column C --epsilon E ...``: one private statistic of a data column,
  by the library function of the same name: ``median``, ``quantile``, ``quantiles``, ``trimmed-mean``,
  ``mean`` (central DP, :mod:`smoothdp.cli.release`); ``geo-threshold``, ``geo-range`` (geo-privacy in the
  local model: each row a user, :mod:`smoothdp.cli.geo`). It prints the public fields (the value at full
  precision, the guarantee with its neighbour relation, the mechanism and its proof), then, for the data
  holder only, the values computed from the data without protection, each marked "NOT private: do not
  publish". ``FILE`` ``-`` reads standard input; ``--json`` prints one JSON object instead, for pipelines
  (public fields only, never the not-private values); ``--seed`` makes a simulation: the output starts
  with "NOT PRIVATE (simulation: seeded generator)". How the CSV is read: :mod:`smoothdp.cli.inputs`.
* ``--budget LEDGER`` on a release: a privacy budget across invocations, the library's persistent ledger,
  checked before the data is read and charged before the noise (:mod:`smoothdp.cli.budgeted`);
  ``smoothdp budget init|show|verify|export|migrate`` (:mod:`smoothdp.cli.budget`).
* ``smoothdp smoothed-delta`` and ``smoothdp privacy-profile``: the smoothed-DP analysis of the sampling
  mechanisms (:mod:`smoothdp.cli.smoothed`).
* ``smoothdp list`` and ``smoothdp reproduce``: the reproductions of the source papers
  (:mod:`smoothdp.cli.experiments`).

Exit status (:data:`~smoothdp.cli.parsing.EXIT_CODES`): 0 success (a refused release too: the status never
depends on the data); 2 a usage or parameter error (an unknown experiment, a bad ε, a missing file or
column, a missing, corrupt or mismatched budget ledger), one line on stderr; 3 the ``--budget`` cannot pay
for the release (nothing read, drawn, released or charged), one line on stderr; 1 an unexpected error (or
a failed reproduction), one line on stderr. The reference: docs/cli.md.
"""

from __future__ import annotations

from smoothdp.cli.app import main
from smoothdp.cli.output import SIMULATION_BANNER
from smoothdp.cli.parsing import EXIT_CODES

__all__ = ["EXIT_CODES", "SIMULATION_BANNER", "main"]
