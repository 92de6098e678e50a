"""smoothdp.data (in progress)."""
