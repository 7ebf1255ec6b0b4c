"""One module a Dask test file; see ../dasktests.py."""
