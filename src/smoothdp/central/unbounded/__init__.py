"""Quantiles and ranges with no bounds, or bounds found with part of the budget.

* :mod:`.ladder`: AboveThreshold over a geometric ladder of thresholds (a quantile, a range);
* :mod:`.scale_free`: the exponential-mechanism quantile with a scale-free base measure on the whole line;
* :mod:`.private_bounds`: symmetric bounds (−G, G) from part of the budget (``bounds="private"``);
* :mod:`.two_stage`: a bounded mechanism released inside a privately found range (basic composition).

Proofs: docs/theory/unbounded.md and docs/theory/quantiles.md#private-bounds.
"""
