"""`python -m bench` (or `make bench`): measure the running app on this machine and write
docs/benchmarks.md and docs/benchmarks.json. Not part of the tests."""
