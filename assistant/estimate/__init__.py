"""Memory and throughput estimators. Pure functions over records passed in, no I/O.

Entry points: estimate_memory and estimate_throughput, each taking the model (ModelArch), the layout
(Plan), the GPU (GpuSpec) and one RunSettings record (run.py). The GPU table and the fitted constants
(Calibration, MemoryOverheads) are data that assistant/kb.py reads; ingest/calibration_fit.py fits them
offline. The parallelism search that combines these estimates with the rules is assistant/planning/.
"""
