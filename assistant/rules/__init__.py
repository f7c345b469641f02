"""Deterministic rule module: validate, classify, commands, config. Pure functions, no I/O.

The GPU facts a rule needs come in as a `GpuSpec` argument (looked up by the caller in assistant/kb.py);
assistant/planning/ combines these rules with the estimators (fit, resize, search). Typical use:

    config = build_config(record, ["tp=2"], version="0.6.0", dataset="squad")
    findings = validate(config, arch, cluster, "0.6.0", launcher, gpu=kb.gpu_spec(cluster.gpu_type))
    cmds = commands("0.6.0", record, plan, cluster, dataset, launcher, overrides)

The package imports none of its modules, so importing one rule module never loads the others.
"""
