"""Every recipe of every bundled catalog goes through check, resize and commands without an exception.

Runs the rules on the real extracted catalogs and bundled model architectures: recipes at their own
GPU count, and every plan (when one exists) passes validate() and yields parseable commands.
"""

from __future__ import annotations

import pytest

from assistant.kb import knowledge_base
from assistant.planning.resize import resize
from assistant.records import Cluster
from assistant.rules.commands import choose_dataset, commands
from assistant.rules.config import build_config
from assistant.rules.validate import has_errors, validate
from tests.test_rules_fixtures import CATALOG_DIR, VERSIONS


@pytest.mark.integration  # every recipe of a catalog
@pytest.mark.parametrize("version", VERSIONS)
def test_every_recipe_checks_plans_and_launches(version):
    if not (CATALOG_DIR / f"{version}.json").exists():
        pytest.skip(f"catalog {version} not built")
    from assistant.catalog import load_catalog
    from assistant.models import load_model_arch

    catalog = load_catalog(version)
    plans = 0
    for record in catalog.recipes:
        arch = load_model_arch(record.hf_model_id, kb=knowledge_base()) if record.hf_model_id else None
        gpu = record.gpu_type if record.gpu_type in knowledge_base().hardware else "h100"
        cluster = Cluster(
            num_gpus=record.encoded_gpus or record.min_gpus or 8,
            gpu_type=gpu,
            gpus_per_node=4 if gpu in ("gb200", "gb300") else 8,
        )
        findings = validate(
            build_config(record, [], version=version),
            arch,
            cluster,
            version,
            catalog.launcher,
            gpu=knowledge_base().gpu_spec(cluster.gpu_type),
        )
        assert all(item.message and item.message_zh for item in findings)
        result = resize(record, arch, cluster, None, None, version=version, kb=knowledge_base())
        if result.plan is None:
            assert has_errors(result.findings), record.name
            continue
        plans += 1
        assert not has_errors(
            validate(result.config, arch, cluster, version, gpu=knowledge_base().gpu_spec(cluster.gpu_type))
        ), record.name
        dataset = choose_dataset(version, record.mode, catalog.launcher, vlm=bool(arch and arch.is_vlm))
        cmds = commands(version, record, result.plan, cluster, dataset, catalog.launcher, result.overrides)
        assert cmds.multinode or cmds.notes
    assert plans > 0
