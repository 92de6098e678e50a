r"""Smoothed differential privacy (LWX = Liu, Wang & Xia, *Smoothed Differential Privacy*, TMLR 2023).

Theory: ``docs/theory/smoothed-dp.md``.

* :func:`privacy_profile`: $\delta_{\varepsilon,M}(x)$, the database-dependent privacy profile (LWX Definition
  2), exact and in log space for anonymous mechanisms; :func:`binary_privacy_profile` for every k of a binary
  database at once.
* :func:`smoothed_delta`: $\delta_{\mathrm{SDP}}$ by LWX Algorithm 1 with the convex-hull reduction (LWX
  Proposition 7).
* Mechanisms (analysis objects, not :class:`smoothdp.mechanism.Mechanism` subclasses: their $\delta$ depends
  on the data, so nothing is charged to an accountant): :class:`SamplingHistogram` (LWX Algorithm 2),
  :class:`SamplingAverage` (LWX Algorithm 3, Theorem 4), :class:`QuantizedSamplingAverage` (the 8-bit SGD step
  of LWX Fig. 2 right). Their common base is :class:`SmoothedDPMechanism`.

Modules (their imports form a DAG, each line importing only from the lines above):

* ``_logmath``, ``hull``, ``base`` (shared pieces: base class, results, generic enumeration);
* ``histogram_profile`` (closed forms of $M_H$), ``pairs`` (the pair reduction for $m \ge 3$), ``binary``
  (Algorithm 1 for two categories); ``bracket`` (certified bracket for $m = 3$ at large n);
* ``algorithm1`` (general path and the :func:`smoothed_delta` dispatcher), ``profile``, ``quantized``;
* ``mechanisms``; then ``montecarlo``, ``theory``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from smoothdp._lazy import attach

__all__ = [
    "ProfileValue",
    "QuantizedSamplingAverage",
    "SamplingAverage",
    "SamplingHistogram",
    "SmoothedDPMechanism",
    "SmoothedDelta",
    "binary_privacy_profile",
    "hull_vertices",
    "privacy_profile",
    "smoothed_delta",
]

_EXPORTS = {
    "SmoothedDelta": "smoothdp.smoothed_dp.algorithm1",
    "smoothed_delta": "smoothdp.smoothed_dp.algorithm1",
    "SmoothedDPMechanism": "smoothdp.smoothed_dp.base",
    "hull_vertices": "smoothdp.smoothed_dp.hull",
    "QuantizedSamplingAverage": "smoothdp.smoothed_dp.mechanisms",
    "SamplingAverage": "smoothdp.smoothed_dp.mechanisms",
    "SamplingHistogram": "smoothdp.smoothed_dp.mechanisms",
    "ProfileValue": "smoothdp.smoothed_dp.profile",
    "binary_privacy_profile": "smoothdp.smoothed_dp.profile",
    "privacy_profile": "smoothdp.smoothed_dp.profile",
}
#: The package's modules, reachable as attributes once imported on first access.
_SUBMODULES = (
    "_logmath",
    "algorithm1",
    "base",
    "binary",
    "bracket",
    "histogram_profile",
    "hull",
    "mechanisms",
    "montecarlo",
    "pairs",
    "profile",
    "quantized",
    "theory",
)

__getattr__, __dir__ = attach(__name__, _EXPORTS, _SUBMODULES)

if TYPE_CHECKING:
    from smoothdp.smoothed_dp.algorithm1 import SmoothedDelta, smoothed_delta
    from smoothdp.smoothed_dp.base import SmoothedDPMechanism
    from smoothdp.smoothed_dp.hull import hull_vertices
    from smoothdp.smoothed_dp.mechanisms import QuantizedSamplingAverage, SamplingAverage, SamplingHistogram
    from smoothdp.smoothed_dp.profile import ProfileValue, binary_privacy_profile, privacy_profile
