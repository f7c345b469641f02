"""Deterministic rule module: validate, resize, classify, commands. Pure functions, no I/O.

Typical use (the assistant and the CLI):

    config = build_config(record, ["tp=2"], version="0.6.0", dataset="squad")
    findings = validate(config, arch, cluster, "0.6.0", launcher)
    result = resize(record, arch, cluster, goal=None, seq_len=32768)
    cmds = commands("0.6.0", record, result.plan, cluster, dataset, launcher, result.overrides)
"""

from assistant.rules.classify import classify
from assistant.rules.commands import Commands, choose_dataset, commands
from assistant.rules.config import EffectiveConfig, build_config, parse_overrides
from assistant.rules.fit import FitVerdict, estimate_fit
from assistant.rules.resize import ResizeResult, resize
from assistant.rules.validate import has_errors, validate

__all__ = [
    "Commands",
    "EffectiveConfig",
    "FitVerdict",
    "ResizeResult",
    "build_config",
    "choose_dataset",
    "classify",
    "commands",
    "estimate_fit",
    "has_errors",
    "parse_overrides",
    "resize",
    "validate",
]
