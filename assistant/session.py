"""Multi-turn slot filling: remember what earlier turns said, ask only for what the intent still needs.

Pure and serialisable, so a chat front end or a Slack thread can keep a Conversation as JSON between turns.
"""

from __future__ import annotations

import re
from typing import Any

from assistant.messages import words
from assistant.records import Slots
from assistant.understand import normalise

# Slots that describe one model; a different model drops them unless the same turn restates them.
MODEL_SLOTS = ("model_text", "model_stem", "hf_model_id", "recipe_name", "overrides")
# The GPU count, node count and GPUs per node are restated together ("and on 8 GPUs?" replaces "2 nodes x 8").
COUNT_SLOTS = ("num_gpus", "num_nodes", "gpus_per_node")
# Said once for one turn only.
TURN_SLOTS = ("error_text", "other_version", "speed_question", "asks_why", "asks_plan")


class Conversation:
    """The slots remembered so far in one conversation."""

    def __init__(self, slots: Slots | None = None, turns: int = 0, topic_question: str | None = None) -> None:
        self.slots = slots or Slots()
        self.turns = turns
        # The last question on a guide topic ("what must the sequence length be divisible by with CP 2,
        # TP 4?"): a follow-up that only changes sizes ("and with TP 8?") is answered as it, amended.
        self.topic_question = topic_question
        self.amended_topic = False  # this turn only amends the sizes of `topic_question`
        # The last question on a feature of the support table ("how do I enable Megatron FSDP for X?"): a
        # follow-up that names none ("and which checkpoint format?") is still about it. Set by the service.
        self.feature_question: str | None = None

    def update(self, new: Slots, text: str | None = None) -> Slots:
        """Merge one turn's slots into memory and return the slots to answer this turn with.

        `text` (the turn as typed) lets a bare number ("64", "十六") answer a question about the GPU count.
        """
        if self.turns and text is not None and new.num_gpus is None and "num_gpus" in missing(self.slots):
            count = _bare_count(text)
            if count:
                new = new.model_copy(update={"num_gpus": count, "intent": "recommend"})
        self.amended_topic = False
        if self.turns == 0:
            self.slots = new.model_copy(deep=True)
            self.turns = 1
            self.topic_question = text if new.intent == "explain" else None
            return self.slots.model_copy(deep=True)
        self.turns += 1
        old = self.slots
        if new.intent == "greeting" or (
            new.intent == "out_of_scope" and not (_about_last_plan(old, new) or _bare_amendment(old, new))
        ):
            # "thanks!" or a stray question: answer it as such, keep the memory for the next real turn.
            self.slots = old.model_copy(update={"language": new.language})
            return new.model_copy(deep=True)

        merged: dict[str, Any] = old.model_dump()
        for name in TURN_SLOTS:
            merged[name] = None
        new_model = _names_model(new) and not _same_model(old, new)
        if new_model:
            for name in MODEL_SLOTS:
                merged[name] = {} if name == "overrides" else None
        if any(getattr(new, name) is not None for name in ("num_gpus", "num_nodes")):
            for name in COUNT_SLOTS:
                merged[name] = None

        said = new.model_dump(exclude_unset=False)
        for name, value in said.items():
            if name in ("language", "intent", "overrides", "features"):
                continue
            if value is not None:
                merged[name] = value
        if new.goal is not None and new.goal != "peft" and new.peft_scheme is None:
            merged["peft_scheme"] = None
        # "And on 128 GPUs?" still asks for the fastest layout; a new goal or model is a new question.
        if new.wants_fastest is None and (new.goal is not None or new_model):
            merged["wants_fastest"] = None
        merged["overrides"] = {**merged.get("overrides", {}), **new.overrides}
        merged["features"] = sorted({*old.features, *new.features})
        merged["language"] = new.language
        merged["intent"] = _merged_intent(old, new)
        self.amended_topic = merged["intent"] == "explain" and new.intent != "explain"
        if new.intent == "explain":
            self.topic_question = text
        elif not self.amended_topic:
            self.topic_question = None
        if merged["intent"] == "troubleshoot" and new.error_text is None:
            merged["error_text"] = old.error_text  # "and with PP 4?" re-checks the same error
        self.slots = Slots(**merged)
        return self.slots.model_copy(deep=True)

    def several_setups(self, language: str, version: str | None) -> None:
        """After one answer to several setups, a follow-up that names no model could mean any of them: keep
        only the language and the version, so it is asked which model rather than answered for an old one."""
        self.slots = Slots(language=language, version=version)
        self.turns += 1
        self.topic_question, self.amended_topic = None, False

    def to_json(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "slots": self.slots.to_json(),
            "topic_question": self.topic_question,
            "feature_question": self.feature_question,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Conversation:
        conversation = cls(
            Slots(**data.get("slots", {})), int(data.get("turns", 0)), data.get("topic_question")
        )
        conversation.feature_question = data.get("feature_question")
        return conversation


def _names_model(slots: Slots) -> bool:
    return bool(slots.model_stem or slots.model_text or slots.hf_model_id)


def _same_model(old: Slots, new: Slots) -> bool:
    if old.model_stem and new.model_stem:
        return old.model_stem == new.model_stem
    if old.hf_model_id and new.hf_model_id:
        return old.hf_model_id.lower() == new.hf_model_id.lower()
    return (old.model_text or "").lower() == (new.model_text or "").lower()


def _merged_intent(old: Slots, new: Slots) -> str:
    """Follow-ups keep a benchmark thread ("Llama 3 70B", "H100"), and a first try while no model is named.

    A question that only changes the plan of a running recommendation ("改成 LoRA 呢？", "what about 128K?",
    "换成 FP8 呢？") continues it, even when its wording reads like a question about the docs."""
    if old.intent == "troubleshoot" and not _names_model(new) and _amends_config(new):
        return old.intent  # "and with PP 4?", "and on 64 GPUs?" after an error: the same error, amended
    if old.intent == "explain" and not _names_model(old) and not _names_model(new) and _amends_config(new):
        return old.intent  # "and with TP 8?" after a rule question on stated sizes: the same question
    if new.intent == "explain" and _amends_last_plan(old, new):
        return old.intent
    if new.intent == "out_of_scope" and _bare_amendment(old, new):
        return old.intent
    if _about_last_plan(old, new):
        # "It's slow" after a config check re-checks that config with the speed breakdown; "fastest?" and
        # "why?" ask for a plan.
        keeps_check = old.intent == "validate" and bool(new.speed_question or new.asks_plan)
        return old.intent if keeps_check or old.intent != "validate" else "recommend"
    if new.intent != "recommend":
        return new.intent
    if old.intent == "benchmark" or (old.intent == "first_try" and not _names_model(new)):
        return old.intent
    return new.intent


def _amends_config(slots: Slots) -> bool:
    """A turn that only changes sizes or the GPUs of the config under discussion."""
    sizes = slots.intent == "validate" and bool(slots.overrides)
    gpus = slots.intent == "recommend" and slots.goal is None and (slots.num_gpus or slots.num_nodes)
    return bool(sizes or gpus)


def _about_last_plan(old: Slots, new: Slots) -> bool:
    """ "What's the fastest layout for this?", "it's slow, why?", "why?", "will it fit?" after a plan: a
    question about it."""
    planned = old.intent in ("recommend", "benchmark", "first_try", "validate") and (
        _names_model(old) or bool(old.recipe_name)
    )
    return new.about_a_plan and planned and not _names_model(new)


def _amends_last_plan(old: Slots, new: Slots) -> bool:
    """ "换成 FP8 呢？", "what about 128K?" after a recommendation: a setting of that plan changed."""
    return old.intent in ("recommend", "benchmark", "first_try") and _names_model(old) and _changes_plan(new)


def _bare_amendment(old: Slots, new: Slots) -> bool:
    """ "And in NVFP4?": an amendment that names no model. Short turns like these carry no domain word, so
    they read as out of scope on their own; one that names a model is a question of its own."""
    return not _names_model(new) and _amends_last_plan(old, new)


def _changes_plan(slots: Slots) -> bool:
    return any(
        getattr(slots, name) is not None
        for name in (
            "goal",
            "peft_scheme",
            "num_gpus",
            "num_nodes",
            "gpu_type",
            "seq_length",
            "version",
            "precision",
        )
    ) or bool(slots.features)


def _bare_count(text: str) -> int | None:
    """A turn that is only a number, maybe with a counter word: "64", "六十四", "16 个", "8张"."""
    m = re.fullmatch(r"\s*(\d{1,5})\s*(?:个|张|块|台|卡|gpus?)?\s*[.。!！]?\s*", normalise(text[:40]))
    return int(m.group(1)) if m and int(m.group(1)) > 0 else None


# ---------------------------------------------------------------- what is still missing


_MODEL_SIZE = re.compile(r"\d+(?:\.\d+)?\s*[bmt]\b|\d+x\d+(?:\.\d+)?b\b", re.IGNORECASE)


def missing(slots: Slots) -> list[str]:
    """Slot names the intent needs and the conversation has not said, in the order to ask for them."""
    needs: list[str] = []
    # A model named with its size that we cannot place ("Gemma3 27B") still counts: the answer says there
    # is no recipe for it and lists the family's. A family without a size ("Llama 3") is asked about.
    sized_name = bool(slots.model_text and _MODEL_SIZE.search(slots.model_text))
    has_model = bool(slots.model_stem or slots.hf_model_id or sized_name)
    if slots.intent == "recommend":
        if not has_model and not slots.recipe_name:
            needs.append("model")
        if slots.goal is None and not slots.recipe_name:
            needs.append("goal")
        if slots.num_gpus is None:
            needs.append("num_gpus")
    elif slots.intent == "benchmark":
        if not has_model:
            needs.append("model")
        if slots.gpu_type is None:
            needs.append("gpu_type")
        if slots.num_gpus is None:
            needs.append("num_gpus")
    elif slots.intent == "compare_versions" and (slots.version is None or slots.other_version is None):
        needs.append("versions")
    return needs


# The slots a clarifying question can ask for; each has its message "session.ask.<slot>".
ASKED_SLOTS = ("model", "goal", "num_gpus", "gpu_type", "versions")


def clarifying_question(missing_slots: list[str], language: str) -> str:
    """One question that asks for every missing slot, in the user's language; "" when nothing is missing."""
    if not missing_slots:
        return ""
    parts = [words(language, f"session.ask.{n}") if n in ASKED_SLOTS else n for n in missing_slots]
    listed = parts[-1]
    if len(parts) > 1:
        head = words(language, "session.ask.sep").join(parts[:-1])
        listed = head + words(language, "session.ask.last") + listed
    return words(language, "session.ask", listed=listed)
