"""Scale-out: exact order statistics in rank windows, on one machine or on Dask (docs/scale.md)."""
