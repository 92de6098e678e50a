"""Smooth sensitivity: growth functions and generic smooth sensitivity (Hamming and metric spaces)."""

from smoothdp.smooth.growth import GROWTHS, Growth, growth, log_growth

__all__ = ["GROWTHS", "Growth", "growth", "log_growth"]
