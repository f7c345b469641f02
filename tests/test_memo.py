"""The memoised layout search answers as the search does; no caller's change to a result reaches another."""

from __future__ import annotations

from assistant.catalog import load_catalog
from assistant.kb import knowledge_base
from assistant.models import load_model_arch
from assistant.override_keys import release_fields
from assistant.planning import cached, search
from assistant.records import Cluster


def test_memoised_search_equals_the_search_and_hands_out_copies():
    arch = load_model_arch("meta-llama/Meta-Llama-3-8B", kb=knowledge_base())
    common = {"seq_length": 8192, "global_batch_size": 128, "mode": "pretrain", "kb": knowledge_base()}
    cached.search_layouts.cache_clear()
    expected = search.search_layouts(arch, Cluster(num_gpus=16), top_k=2, **common)
    first = cached.search_layouts(arch, Cluster(num_gpus=16), top_k=2, **common)
    first[0].plan.tp = 999
    first.clear()
    again = cached.search_layouts(arch, Cluster(num_gpus=16), top_k=2, **common)  # equal inputs, new objects
    assert expected and again == expected
    other = cached.search_layouts(arch, Cluster(num_gpus=32), top_k=2, **common)
    assert other == search.search_layouts(arch, Cluster(num_gpus=32), top_k=2, **common)


def test_release_fields_are_computed_once_per_loaded_catalog():
    catalog = load_catalog()
    fields = release_fields(catalog)
    assert release_fields(catalog) is fields
    assert fields == release_fields.__wrapped__(catalog) and "train.global_batch_size" in fields
