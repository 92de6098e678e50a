"""smoothdp.experiments (in progress)."""
