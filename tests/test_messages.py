"""The message catalogs: every key in every language, with the same placeholders."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from string import Formatter

import pytest

from assistant.messages import CATALOGS, Message, words

# Placeholders a language may leave out: the English plural ending ("GPU{s}") has no Chinese counterpart.
LANGUAGE_ONLY = {"en": {"s"}, "zh": set()}
# Keys whose sentence in one language leaves a value out (the Chinese does not repeat the training mode,
# nor the estimator's English reason for a hybrid model it cannot describe).
# The support answers count differently: "等 12 个" (all of them) against ", and 4 more" (those not shown).
OMITTED = {
    ("mode-dataset", "en"): {"mode"},
    ("fit-note.unmodelled", "en"): {"reason"},
    ("support.recipes.more", "en"): {"more"},
    ("support.model.more", "en"): {"extra"},
    ("support.model.more", "zh"): {"count"},
    ("support.model.all", "zh"): {"count"},
}


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(template) if name is not None}


def test_every_key_is_in_every_language() -> None:
    keys = {lang: set(catalog) for lang, catalog in CATALOGS.items()}
    assert keys["en"] == keys["zh"], keys["en"] ^ keys["zh"]


@pytest.mark.parametrize("key", sorted(CATALOGS["en"]))
def test_the_languages_fill_the_same_placeholders(key: str) -> None:
    filled = {
        lang: placeholders(catalog[key]) - LANGUAGE_ONLY[lang] - OMITTED.get((key, lang), set())
        for lang, catalog in CATALOGS.items()
    }
    assert filled["en"] == filled["zh"]


def test_a_message_is_rendered_in_the_asked_language_and_english_otherwise() -> None:
    message = Message("section.min_gpus", {"n": 2, "s": "s"})
    assert message.render("en") == "needs at least 2 GPUs"
    assert message.render("zh") == "至少需要 2 张 GPU"
    assert words("fr", "section.min_gpus", n=1, s="") == "needs at least 1 GPU"


# Modules whose sentences all come from the catalogs. Exempt: docstrings (they are not said to the user)
# and patterns (they read the user's words, they do not say any): the first argument of an `re` call, and
# a pattern piece kept in a name of its own, told by its regex group "(?:".
ASSISTANT = Path(__file__).resolve().parents[1] / "assistant"
CATALOG_ONLY = [
    *sorted((ASSISTANT / "rules").glob("*.py")),
    *sorted((ASSISTANT / "planning").glob("*.py")),
    *(
        ASSISTANT / name
        for name in (
            "compose.py",
            "compose_recipe.py",
            "recommend.py",
            "service.py",
            "version_facts.py",
            "troubleshoot.py",
            "intent_form.py",
            "support.py",
            "sequence_multiple.py",
            "topic_answer.py",
            "override_keys.py",
            "version_resolve.py",
            "bounds.py",
            "session.py",
            "conversation_replies.py",
        )
    ),
]
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def _exempt_strings(tree: ast.AST) -> set[int]:
    exempt: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            exempt.add(id(first.value))
        if isinstance(node, ast.Call) and ast.unparse(node.func).startswith("re.") and node.args:
            exempt.update(id(sub) for sub in ast.walk(node.args[0]))
        if isinstance(node, ast.Constant | ast.JoinedStr) and "(?:" in ast.unparse(node):
            exempt.update(id(sub) for sub in ast.walk(node))
    return exempt


@pytest.mark.parametrize("path", CATALOG_ONLY, ids=lambda path: path.relative_to(ASSISTANT.parent).as_posix())
def test_no_sentence_outside_the_catalogs(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    exempt = _exempt_strings(tree)
    chinese = [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in exempt
        if CJK.search(node.value)
    ]
    assert chinese == []


def test_the_scan_sees_a_chinese_literal() -> None:
    tree = ast.parse(
        'def f():\n    """文档"""\n'
        '    return "你好" + re.compile("对齐").pattern + re.search("是", t) + "(?:卡|张)"\n'
    )
    exempt = _exempt_strings(tree)
    found = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) not in exempt]
    assert found == ["你好"]
