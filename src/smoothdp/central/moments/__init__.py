"""The clipped mean and variance: exact sums, global-sensitivity noise on declared or private bounds.

* :mod:`.exact_sums`: exact sums of squares and variances of floats, as rationals;
* :mod:`.clipped`: the clipped mean and variance on the declared bounds (substitution, n public);
* :mod:`.range_sweep`: a private range inside public bounds by two AboveThreshold sweeps;
* :mod:`.on_private_range`: the clipped mean and variance on that private range;
* :mod:`.noisy_sums`: the variance and standard deviation under add/remove (noisy count, sum, sum of
  squares);
* :mod:`.private_clip`: a mean with a private clipping range (bounds far wider than the data).

Proofs: docs/theory/moments.md. The entry points are in :mod:`smoothdp.central.moments_api`.
"""
