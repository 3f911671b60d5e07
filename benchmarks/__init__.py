"""Speed and memory measurements, each printing a table: run one as ``python -m benchmarks.<name>``, or all with `make bench`."""
