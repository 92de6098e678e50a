"""Smoothed differential privacy (Liu, Wang & Xia, TMLR 2023; seed 003).

* :func:`privacy_profile`: δ_{ε,M}(x), the database-dependent privacy profile (Definition 2), exact and in log
  space for anonymous mechanisms; :func:`binary_privacy_profile` for every k of a binary database at once.
* :func:`smoothed_delta`: δ_SDP by Algorithm 1 with the convex-hull reduction (Proposition 7).
* Mechanisms: :class:`SamplingHistogram` (Algorithm 2), :class:`SamplingAverage` (Algorithm 3, Theorem 4),
  :class:`QuantizedSamplingAverage` (the 8-bit SGD step of Fig. 2 right).
"""

from smoothdp.smoothed_dp.algorithm1 import SmoothedDelta, smoothed_delta
from smoothdp.smoothed_dp.hull import hull_vertices
from smoothdp.smoothed_dp.mechanisms import QuantizedSamplingAverage, SamplingAverage, SamplingHistogram
from smoothdp.smoothed_dp.profile import ProfileValue, binary_privacy_profile, privacy_profile

__all__ = [
    "ProfileValue",
    "QuantizedSamplingAverage",
    "SamplingAverage",
    "SamplingHistogram",
    "SmoothedDelta",
    "binary_privacy_profile",
    "hull_vertices",
    "privacy_profile",
    "smoothed_delta",
]
