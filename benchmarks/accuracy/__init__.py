"""Accuracy benchmark of private medians and quantiles: smoothdp against diffprivlib and OpenDP (issue 12).

Run ``python -m benchmarks.accuracy`` (see ``benchmarks/accuracy/README.md``): it writes
``benchmarks/results/accuracy.{md,csv,json}`` and the generated page ``docs/which-mechanism.md``.
"""
