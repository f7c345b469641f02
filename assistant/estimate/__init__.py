"""Memory and throughput estimators and the parallelism search. Pure functions, no I/O.

Entry points: estimate_memory, estimate_throughput, search_layouts, nearest_fit. Hardware and fitted
constants are data (knowledge_base/hardware.json, knowledge_base/calibration/fit.json) read by
assistant.hardware_data.
"""
