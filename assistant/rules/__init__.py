"""Deterministic rule module: validate, resize, classify, commands. Pure functions, no I/O."""
