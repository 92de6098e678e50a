"""Statistics with their smooth sensitivity, and the mechanism that releases them.

* :mod:`.statistics`: median, quantiles, trimmed mean, min, max (``"substitution"``) and mean
  (``"add_remove"``), with their local sensitivity at distance k and their exact smooth sensitivity
  (docs/theory/smooth-sensitivity.md);
* :mod:`._pairs`: the pair form of the smooth sensitivity of order statistics and trimmed means;
* :mod:`.mechanism`: the smooth-sensitivity mechanism, f(x) + S_β(x)·Z (PolyPlace, Student's T, Cauchy,
  Laplace noise; docs/theory/smooth-sensitivity.md#the-smooth-sensitivity-mechanism).
"""
