"""smoothdp.smoothed (in progress)."""
