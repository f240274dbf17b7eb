"""The creator-sync benchmark harness behind ``benchmarks/run`` (see benchmarks/README.md)."""
