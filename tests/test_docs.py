"""Markdown-aware and plain-text chunking."""

from __future__ import annotations

import pytest

from assistant.errors import UserError
from ingest.docs import chunk_file, chunk_text, slugify
from tests.conftest import SKILL_SEED

PAGE = """---
topic: pitfalls
doc_type: guide
versions: 0.6.0,main
---
# Pitfalls

## CUDA graphs {#cuda-graphs}

Intro text.

### Packed sequences {#cuda-graph-packed-seq}

| Symptom | Fix |
|---|---|
| CUDA graph accepts only Tensor inputs | disable packing |
| full recompute assert | use full_iteration |

```bash
# a comment, not a heading
uv run python -m torch.distributed.run --nproc_per_node=8 scripts/training/run_recipe.py \\
    --recipe llama3_8b_pretrain_config
```
"""


def chunks():
    return chunk_text(PAGE, source="guide/en/pitfalls.md", doc_type="guide", lang="en")


def test_heading_path_and_explicit_anchor():
    packed = [c for c in chunks() if c.source.endswith("#cuda-graph-packed-seq")]
    assert packed
    assert all(c.heading == "Pitfalls > CUDA graphs > Packed sequences" for c in packed)


def test_front_matter_is_metadata_not_text():
    for chunk in chunks():
        assert chunk.topic == "pitfalls"
        assert chunk.version == "0.6.0,main"
        assert "doc_type:" not in chunk.text


def test_table_kept_whole_and_one_chunk_per_row_with_header():
    table = [c for c in chunks() if c.part == "table"]
    rows = [c for c in chunks() if c.part == "row"]
    assert len(table) == 1
    assert "accepts only Tensor inputs" in table[0].text and "full_iteration" in table[0].text
    assert len(rows) == 2
    assert all("| Symptom | Fix |" in r.text for r in rows)
    assert sum("accepts only Tensor inputs" in r.text for r in rows) == 1


def test_code_fence_is_intact_and_hash_inside_is_not_a_heading():
    code = [c for c in chunks() if "```bash" in c.text]
    assert len(code) == 1
    assert "# a comment, not a heading" in code[0].text
    assert code[0].text.count("```") == 2
    assert not any("a comment" in c.heading for c in chunks())


def test_chunk_ids_are_stable_content_hashes():
    first, second = chunks(), chunks()
    assert [c.chunk_id for c in first] == [c.chunk_id for c in second]
    edited = chunk_text(
        PAGE.replace("Intro text.", "Changed."), source="guide/en/pitfalls.md", doc_type="guide", lang="en"
    )
    assert len({c.chunk_id for c in first} ^ {c.chunk_id for c in edited}) == 2


def test_long_sections_are_capped_at_paragraphs():
    paragraphs = "\n\n".join(f"Paragraph {i} " + "word " * 60 for i in range(30))
    parts = chunk_text(f"# T\n\n## S\n\n{paragraphs}", source="x.md", doc_type="guide", lang="en")
    assert len(parts) > 3
    assert all(len(p.text) < 2000 for p in parts)


def test_slugify_keeps_cjk():
    assert slugify("CUDA Graphs + Packed!") == "cuda-graphs-packed"
    assert slugify("需要提醒的常见陷阱") == "需要提醒的常见陷阱"


@pytest.mark.skipif(not SKILL_SEED.exists(), reason="the original skill document is not beside this checkout")
def test_original_skill_text_is_chunked_by_its_own_structure():
    parts = chunk_file(SKILL_SEED, source="user/skill.txt", doc_type="user")
    headings = {c.heading.split(" > ")[-1] for c in parts}
    assert {"首次回答检查清单", "并行度调整规则", "需要提醒的常见陷阱", "代码索引"} <= headings
    pitfall_rows = [c for c in parts if c.part == "row" and "需要提醒的常见陷阱" in c.heading]
    assert any("CUDA graph accepts only Tensor inputs" in c.text for c in pitfall_rows)
    assert all(c.text.count("\t") >= 2 for c in pitfall_rows)


def test_bad_files_get_clear_errors(tmp_path):
    binary = tmp_path / "blob.md"
    binary.write_bytes(b"\x00\x01\x02binary")
    with pytest.raises(UserError, match="binary"):
        chunk_file(binary, source="x", doc_type="user")
    with pytest.raises(UserError, match="no such file"):
        chunk_file(tmp_path / "missing.md", source="x", doc_type="user")
    latin1 = tmp_path / "latin.txt"
    latin1.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(UserError, match="UTF-8"):
        chunk_file(latin1, source="x", doc_type="user")
    with pytest.raises(UserError, match="unsupported"):
        chunk_file(tmp_path / "x.pdf", source="x", doc_type="user")


def test_short_text_that_leads_into_subsections_is_an_intro() -> None:
    page = (
        "# Rules\n\nThe rules below apply in order.\n\n"
        "## TP {#tp}\n\nTP must divide the KV heads.\n\n"
        "## Long lead {#long}\n\n" + "This paragraph explains a lot on its own. " * 20 + "\n\n"
        "### Detail {#detail}\n\nMore.\n"
    )
    parts = {c.source: c.part for c in chunk_text(page, source="g.md", doc_type="guide", lang="en")}
    assert parts["g.md#rules"] == "intro"  # a one-line lead into its subsections
    assert parts["g.md#tp"] == "section"  # a leaf
    assert parts["g.md#long"] == "section"  # text before subsections, but with something to say


def test_answers_quote_sections_before_intros_and_keep_citation_numbers() -> None:
    from assistant.records import Hit
    from assistant.service import _passages_answer

    def hit(n: int, part: str) -> Hit:
        return Hit(chunk_id=str(n), source=f"g.md#s{n}", heading=f"G > S{n}", doc_type="guide", lang="en",
                   text=f"G > S{n}\n\nbody {n}", score=1.0 / n, section=f"S{n}", part=part)  # fmt: skip

    text = _passages_answer([hit(1, "intro"), hit(2, "section"), hit(3, "section")], "en", "guide")
    assert "**S2** [2]" in text and "**S3** [3]" in text and "S1" not in text
    only_intro = _passages_answer([hit(1, "intro")], "en", "guide")
    assert "**S1** [1]" in only_intro


RELEASE_PAGE = """---
topic: entry_points
doc_type: guide
versions: 0.3.1,0.5.1,0.6.0,main
---
# Launching

## Overrides {#overrides}

Every release takes key=value overrides.

### Flags in v0.3.1 {#flags-031}

(v0.3.1) No --dataset flag.

### Shortcut flags (v0.6.0+) {#shortcuts}

| Flag | Field |
|---|---|
| `-tp` | `model.tensor_model_parallel_size` |

## Sequence length {#seq}

(v0.4.x+) The launcher synchronises it. (v0.3.1) Nothing is synchronised.

## 快捷参数（v0.6.0+） {#shortcuts-zh}

（v0.6.0+）常用字段有短参数。
"""


def test_a_section_marked_for_some_releases_is_retrieved_only_for_them():
    versions = {
        c.source.split("#")[1]: c.version for c in chunk_text(RELEASE_PAGE, source="p.md", doc_type="guide")
    }
    assert versions["overrides"] == "0.3.1,0.5.1,0.6.0,main"  # no mark: the page's releases
    assert versions["flags-031"] == "0.3.1"
    assert versions["shortcuts"] == "0.6.0,main"  # the heading's mark covers the table and its rows
    assert versions["seq"] == "0.3.1,0.5.1,0.6.0,main"  # contrasts releases: about all of them
    assert versions["shortcuts-zh"] == "0.6.0,main"


@pytest.mark.parametrize(
    ("mark", "expected"),
    [
        ("(v0.3.1)", ["0.3.1"]),
        ("(v0.4.x–v0.5.1)", ["0.5.1"]),
        ("(v0.2.x–v0.5.1)", ["0.3.1", "0.5.1"]),
        ("(v0.4.x+)", ["0.5.1", "0.6.0", "main"]),
        ("(v0.6.0+)", ["0.6.0", "main"]),
        ("v0.6.0 without brackets", None),
    ],
)
def test_release_marks(mark, expected):
    from ingest.docs import marked_versions

    assert marked_versions(mark, ["0.3.1", "0.5.1", "0.6.0", "main"]) == expected
