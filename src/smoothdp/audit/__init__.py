"""smoothdp.audit (in progress)."""
