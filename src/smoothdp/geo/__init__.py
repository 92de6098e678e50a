"""smoothdp.geo (in progress)."""
