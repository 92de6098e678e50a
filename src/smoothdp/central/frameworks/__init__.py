"""Frameworks that turn a statistic and a local-sensitivity argument into a private release.

* :mod:`.ptr`: propose-test-release (Dwork & Lei, STOC 2009);
* :mod:`.sample_aggregate`: sample-and-aggregate (Nissim, Raskhodnikova & Smith, STOC 2007);
* :mod:`.bounded_ls`: privately bounded local sensitivity (Harrison 2024); :mod:`.ratio`: private ratios;
* :mod:`.inverse_sensitivity`, :mod:`.piecewise_laplace`: the reach mechanisms (inverse sensitivity,
  piecewise Laplace).

Proofs: docs/theory/central-frameworks.md and docs/theory/instance-optimal.md.
"""
