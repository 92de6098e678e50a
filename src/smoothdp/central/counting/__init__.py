"""The counting queries ``count``, ``sum`` and ``histogram`` with exact integer noise.

* :mod:`.queries`: the mechanisms and their entry points;
* :mod:`.batch`: their vectorized building blocks (one column, or all groups of a table at once);
* :mod:`.noise`: the exact integer noise (discrete Laplace, discrete Gaussian) and its calibration.

Proofs: docs/theory/counting-queries.md.
"""
