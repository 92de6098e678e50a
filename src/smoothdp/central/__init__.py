"""smoothdp.central (in progress)."""
