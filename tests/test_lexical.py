"""The BM25 tokenizer and the zh->en glossary (index and query share them)."""

from __future__ import annotations

import json

import pytest

from assistant.lexical import expand_query, glossary_matches, is_chinese, load_glossary, normalize, tokenize
from assistant.settings import KNOWLEDGE_BASE


def test_identifiers_are_kept_whole_and_split():
    tokens = tokenize("tensor_model_parallel_size")
    assert tokens[0] == "tensor_model_parallel_size"
    assert {"tensor", "model", "parallel", "size"} <= set(tokens)


def test_dotted_config_key_and_value():
    tokens = tokenize("cfg.model.use_te_rng_tracker = True")
    assert "cfg.model.use_te_rng_tracker" in tokens
    assert {"te", "rng", "tracker", "true"} <= set(tokens)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("128K", {"128k", "131072"}), ("32k context", {"32k", "32768"}), ("seq 131072", {"131072", "128k"})],
)
def test_sequence_sizes_match_both_ways(text, expected):
    assert expected <= set(tokenize(text))


def test_chinese_ten_thousands_become_numbers():
    assert "32000" in tokenize("序列长度3.2万")


def test_chinese_is_segmented_and_particles_dropped():
    tokens = tokenize("MoE 显存溢出怎么办？")
    assert "moe" in tokens
    assert "显存" in tokens or "显存溢出" in tokens
    assert "怎么" not in tokens


def test_mixed_string_is_stable():
    text = "Qwen3-30B-A3B 用 EP=16 专家并行"
    assert tokenize(text) == tokenize(text)
    assert {"qwen3-30b-a3b", "qwen3", "30b", "a3b", "16"} <= set(tokenize(text))


def test_normalize_full_width():
    assert normalize("ＴＰ＝８，ＣＰ") == "tp=8,cp"


def test_language_detection():
    assert is_chinese("MoE 显存溢出")
    assert is_chinese("在16张H100上对Qwen3-30B-A3B做SFT")
    assert not is_chinese("Qwen3 30B-A3B SFT on 16 H100")
    assert not is_chinese("")


def test_glossary_file_is_well_formed():
    data = json.loads((KNOWLEDGE_BASE / "glossary.json").read_text(encoding="utf-8"))
    zh_terms = [t["zh"] for t in data["terms"]]
    assert len(zh_terms) >= 50
    assert len(zh_terms) == len(set(zh_terms)), "duplicate zh terms"
    assert all(t["en"] and all(isinstance(e, str) and e for e in t["en"]) for t in data["terms"])


def test_every_glossary_term_round_trips():
    """Each zh term is found in a sentence and expands to its English terms."""
    for term in load_glossary():
        sentence = f"请问{term.zh}是什么"
        assert term in glossary_matches(sentence), term.zh
        expanded = expand_query(sentence)
        assert all(en in expanded for en in term.en), term.zh


def test_glossary_words_stay_one_token():
    assert "专家并行" in tokenize("怎么设置专家并行")
    assert "张量并行" in tokenize("张量并行要多大")


def test_english_query_is_not_expanded():
    assert expand_query("MoE out of memory") == "MoE out of memory"


def test_plurals_match_singulars():
    from assistant.lexical import singular

    assert {"override", "field"} <= set(tokenize("overrides fields"))
    assert [singular(w) for w in ("batches", "policies", "gpus", "status", "class", "tp")] == [
        "batch", "policy", "gpu", None, None, None,
    ]  # fmt: skip


def test_a_release_is_one_token_with_or_without_its_v():
    from assistant.lexical import named_releases

    assert "0.3.1" in tokenize("(v0.3.1) flags") and "0.3.1" in tokenize("run_recipe.py in 0.3.1")
    assert "3" not in tokenize("in 0.3.1")  # its digits alone would match every number
    assert named_releases("Does --mode lora work in 0.5.1 or v0.6.0+?") == {"0.5.1", "0.6.0"}


def test_chinese_variants_bring_the_guides_own_word():
    from assistant.lexical import with_zh_synonyms

    assert with_zh_synonyms("旧的配方名在 0.6.0 还能用吗").endswith("旧名字")
    assert with_zh_synonyms("显存不够了，先调什么参数").endswith("显存溢出")
    assert with_zh_synonyms("旧名字还能用吗") == "旧名字还能用吗"  # already the guide's word
    assert with_zh_synonyms("tensor parallel") == "tensor parallel"
