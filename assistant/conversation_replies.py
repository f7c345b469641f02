"""Replies that belong to the conversation rather than to one recipe: a greeting, and "why?" after a plan.

Pure: every name and number comes from the Recommendation (catalog and rule module); only the framing
sentences are ours, from the message catalogs (assistant/messages).
"""

from __future__ import annotations

from assistant.messages import words
from assistant.recommend import Recommendation

# Three questions to start from, by language (the greeting lists them, the answer offers them as follow-ups).
GREETING_EXAMPLES = {
    lang: [words(lang, f"conversation_replies.greeting.example.{n}") for n in (1, 2, 3)]
    for lang in ("en", "zh")
}


def greeting_reply(lang: str, version: str, families: list[str] | None = None) -> str:
    """What the assistant does, in three lines, the model families this release has recipes for (catalog
    facts, so "which models can I train?" gets its answer), and three questions to start from."""
    examples = "\n".join(f"- {e}" for e in GREETING_EXAMPLES[lang])
    listed = ", ".join(f"`{f}`" for f in families or [])
    models = (
        words(lang, "conversation_replies.greeting.models", version=version, listed=listed)
        if listed
        else ""
    )
    return words(lang, "conversation_replies.greeting", version=version, models=models, examples=examples)


# Why a recipe was picked, by the selection's match kind: the message key that says it.
_MATCH_REASON = {
    "exact": "conversation_replies.match.exact",
    "seq-variant": "conversation_replies.match.seq-variant",
    "closest-size": "conversation_replies.match.closest-size",
    "similar-architecture": "conversation_replies.match.similar-architecture",
    "explicit": "conversation_replies.match.explicit",
}


def why_lines(rec: Recommendation, lang: str) -> list[str]:
    """ "Why?" after a plan: why this recipe, and why each override, from the recommendation itself."""
    record = rec.recipe
    if record is None or rec.selection is None:
        return []
    reason = words(lang, _MATCH_REASON.get(rec.selection.match, _MATCH_REASON["exact"]))
    lines = [words(lang, "conversation_replies.why", name=record.name, reason=reason)]
    if rec.slots.quick_pick:
        lines.append(
            words(lang, "conversation_replies.why.quick_pick")
        )
    validated = record.encoded_gpus or record.min_gpus
    if validated and rec.cluster is not None:
        lines.append(
            words(
                lang,
                "conversation_replies.why.validated",
                validated=validated,
                num_gpus=rec.cluster.num_gpus,
            )
        )
    for override in rec.overrides:
        reason = override.reason_zh if lang == "zh" and override.reason_zh else override.reason
        lines.append(f"- `{override.key}={override.value}`: {reason}")
    return lines
