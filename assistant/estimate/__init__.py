"""Memory and throughput estimators and the parallelism search. Pure functions, no I/O.

Entry points: estimate_memory and estimate_throughput (one RunSettings record each, run.py),
search_layouts, nearest_fit. Hardware and fitted
constants are data (knowledge_base/hardware.json, knowledge_base/calibration/fit.json) read by
assistant.hardware_data; the offline fitting of those constants lives in ingest/calibration_fit.py.
"""
