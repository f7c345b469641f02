"""Memory and throughput estimators and the parallelism search. Pure functions, no I/O."""
