"""The assistant's own sentences for a question on a guide topic (recompute, checkpoints, data, MoE, ...).

Quoting a guide section is not an answer by itself: the reader has to find the sentence that matters, and a
quote never says which release or which model it was read for. This module writes one or two sentences
first, naming the topic, the release and the model asked about, with the facts of the sections retrieval
found, taken from `knowledge_base/section_facts.json` (per section and release, each with its upstream
source), and the upstream doc of that release from the topic table. The sections are still quoted after it.
Pure apart from `load_facts`; no fact is written that the table does not hold.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from assistant.guide_sections import GuideSection
from assistant.kb import KnowledgeBase
from assistant.messages import words
from assistant.records import Hit
from assistant.relevance import TopicTable

MAX_FACTS = 2
UNSEEN_WORDS = 3  # words a section retrieval did not find must share with the question to be stated
# "Is that a known bug?": a question about a release's behaviour, not a request for a recipe.
_KNOWN_BUG = re.compile(
    r"\bknown (?:bug|issue|problem)\b|\bis (?:this|that|it) a bug\b"
    r"|已知(?:的)?问题|是不是\s?bug|是\s?bug\s?吗",
    re.IGNORECASE,
)


# Topics a recommendation answers itself (layout, batch, sequence, launch, LoRA recipe, precision preset).
_RECIPE_TOPICS = frozenset(("parallelism", "launch", "sequence", "microbatches", "peft", "precision"))


def asks_if_known_bug(text: str) -> bool:
    return _KNOWN_BUG.search(text) is not None


def asks_beyond_recipe(text: str, topics: TopicTable) -> bool:
    """True when a question about a recipe also names a topic the recommendation does not cover itself."""
    return any(t.id not in _RECIPE_TOPICS for t in topics.named_in(text))


@dataclass(frozen=True)
class SectionFact:
    anchor: str  # "recompute.md#full-recompute"
    en: str
    zh: str
    sources: tuple[str, ...]
    versions: frozenset[str] | None  # None: every bundled release
    # What the row is about (its symptom or feature, EN and ZH): a row of a list of unrelated items (the
    # later fixes) is stated only for a question it matches, never because it is first. None: any question.
    match: re.Pattern[str] | None = None

    def holds_for(self, version: str) -> bool:
        return self.versions is None or version in self.versions

    def fits(self, question: str) -> bool:
        return self.match is None or self.match.search(question) is not None

    def text(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


@dataclass(frozen=True)
class FactTable:
    sections: dict[str, tuple[SectionFact, ...]]
    labels: dict[str, dict[str, str]]  # topic id -> {"en": ..., "zh": ...}
    defaults: dict[str, str]  # topic id -> the section that answers a question naming the topic

    def fact(self, anchor: str, version: str, question: str = "") -> SectionFact | None:
        """The section's fact for the release; of several (one per row of a table), the one sharing most
        words with the question, the first on a tie. A row with a `match` pattern counts only when the
        question matches it: shared words alone would let any row of a list answer any question."""
        held = [f for f in self.sections.get(anchor, ()) if f.holds_for(version) and f.fits(question)]
        asked = _words(question)
        return max(held, key=lambda f: len(asked & _words(f.en)), default=None)


@lru_cache(maxsize=4)
def load_facts(kb: KnowledgeBase) -> FactTable:
    """The section facts of a knowledge base; one without the file (a user's own documents) has none."""
    data = kb.json("section_facts.json", required=False)
    if data is None:
        return FactTable(sections={}, labels={}, defaults={})
    sections = {
        anchor: tuple(
            SectionFact(
                anchor=anchor,
                en=raw["en"],
                zh=raw["zh"],
                sources=tuple(raw["sources"]),
                versions=frozenset(raw["versions"]) if "versions" in raw else None,
                match=re.compile(raw["match"], re.IGNORECASE) if "match" in raw else None,
            )
            for raw in facts
        )
        for anchor, facts in data["sections"].items()
    }
    return FactTable(sections=sections, labels=data.get("labels", {}), defaults=data.get("defaults", {}))


# Words of four letters or more, and short upper-case acronyms (TP, ETP, MoE, CP) that name the subject.
_WORD = re.compile(r"[a-z][a-z0-9_.]{3,}|\b[A-Z][A-Za-z]{1,3}\b", re.I)
_COMMON = frozenset((
    "megatron", "bridge", "with", "that", "this", "from", "what", "which", "when", "does", "have", "should",
    "there", "into", "only", "your", "release", "model", "models", "on", "is", "if", "in", "it", "at", "an",
    "to", "do", "can", "how", "why", "the", "and", "for", "are", "was", "my", "me", "or", "of", "be", "not",
))  # fmt: skip


def _words(text: str) -> set[str]:
    """The words that can name a subject; a dotted key also gives its parts ("rng.te_rng_tracker")."""
    found = {w.lower().strip(".") for w in _WORD.findall(text)}
    found |= {part for w in found for part in w.split(".") if len(part) >= 4}
    return {w[:-1] if len(w) > 4 and w.endswith("s") else w for w in found} - _COMMON  # "resumes" ~ "resume"


def anchor_of(hit: Hit) -> str:
    """The section key of a passage: "guide/en/x.md#a" -> "x.md#a" (en and zh share the anchors)."""
    return hit.source.rsplit("/", 1)[-1]


def topic_lead(
    question: str,
    hits: Sequence[Hit],
    version: str,
    lang: str,
    *,
    topics: TopicTable,
    facts: FactTable,
    entity: str = "",
) -> str:
    """The own sentences before the quotes; "" when no retrieved section has a fact for this release.

    `entity`: the model or recipe the question names, already formatted (a catalog name in backticks or the
    user's words), so the answer says whom it is about."""
    named = [t.id for t in topics.named_in(question)]
    if not named:  # a passage near the words of a question that names no topic is no ground for a claim
        return ""
    asked = frozenset(_words(question))
    # A topic that answers by itself when named ("is it fixed in a later release?") leads with its section.
    leading = [f for t in named if (f := facts.fact(facts.defaults.get(t, ""), version, question))]
    on_topic = [t for t in topics.topics if t.id in named]
    retrieved = [anchor_of(h) for h in hits if any(t.covers(h.source) for t in on_topic)]
    # A section of a named topic that retrieval missed still counts when it names what the question names
    # ("cuda_graph_impl=local" with a "mlp" scope): passages rank by words, a fact's keys are exact.
    unseen = [
        a for a in facts.sections if a not in retrieved and any(t.covers(f"guide/en/{a}") for t in on_topic)
    ]

    def shared(fact: SectionFact) -> int:
        return len(asked & _words(fact.en))

    found = [f for a in retrieved if (f := facts.fact(a, version, question))]
    found += [f for a in unseen if (f := facts.fact(a, version, question)) and shared(f) >= UNSEEN_WORDS]
    # the sections sharing most words with the question first; retrieval's order breaks ties
    found.sort(key=lambda f: -(shared(f) + (f.anchor in retrieved)))
    picked: list[SectionFact] = []
    for fact in leading + found:
        # a second fact must share words with the question; the same sentence is said once
        if all(fact.en != p.en for p in picked) and (not picked or shared(fact) >= 2):
            picked.append(fact)
        if len(picked) == MAX_FACTS:
            break
    if not picked:
        return ""
    first = f"guide/en/{picked[0].anchor}"  # the topic of the leading fact names the answer
    covering = [t.id for t in topics.topics if t.covers(first)]
    leading = [t for t, anchor in facts.defaults.items() if anchor == picked[0].anchor and t in named]
    topic_ids = leading or [t for t in named if t in covering] or covering or named
    label = next((facts.labels[t][lang] for t in topic_ids if t in facts.labels), "")
    upstream = topics.upstream_for(list(topic_ids), version)
    sources = list(dict.fromkeys(s for f in picked for s in f.sources))
    body = words(lang, "sep.clause").join(f.text(lang) for f in picked)
    if lang != "zh":  # Chinese has no capitals; an English answer starts with one
        body = body[:1].upper() + body[1:]
    about = words(lang, "topic_answer.about", entity=entity) if entity else ""
    head_key = "topic_answer.head.label" if label else "topic_answer.head"
    head = words(lang, head_key, label=label, version=version, about=about)
    cited = words(lang, "sep.clause").join(f"`{s}`" for s in sources)
    lines = [
        words(lang, "topic_answer.line", head=head, body=body),
        words(lang, "known_causes.sources", sources=cited),
    ]
    if upstream:
        docs = words(lang, "sep.and").join(f"`{p}`" for p in upstream)
        lines.append(words(lang, "topic_answer.upstream", docs=docs))
    return "\n\n".join(lines)


# Config keys and error texts the question names; acronyms people use for a model part ("GDN", "MTP").
_IDENTIFIER = re.compile(r"(?<![\w.])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w.])")
_ACRONYM = re.compile(r"(?<![\w.-])[A-Z]{3,5}(?![\w.-])")
_KNOWN_ACRONYMS = frozenset((
    "GPU", "GPUS", "SFT", "PEFT", "LORA", "DORA", "CUDA", "NCCL", "YAML", "JSON", "JSONL", "OOM", "API",
    "CLI", "MOE", "VLM", "FSDP", "HSDP", "MLA", "NVL", "BF16", "FP16", "FP8", "MFU", "HBM", "AND", "THD",
))  # fmt: skip


_RAISED = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b:\s*([^\n]{25,})")
_QUOTED = re.compile(r"(?<!\w)['\"“‘]([A-Za-z][^'\"”’\n]{24,199})['\"”’](?!\w)")
QUOTE_CHARS = 40  # how much of a message is compared: logs and pastes cut or reflow the rest


# Where a message's fixed words end: its first sentence, and before a number the run filled in ("2.00 GiB").
_MESSAGE_END = re.compile(r"\.\s|(?<![\w.])\d+(?:\.\d+)?(?![\w])")
MESSAGE_MIN_CHARS = 12  # a fixed part shorter than this names nothing on its own


def _fixed_part(message: str) -> str:
    cut = _MESSAGE_END.search(message)
    head = message[: cut.start()] if cut else message
    return head.strip()[:QUOTE_CHARS].rstrip(" .:,")


def _messages(text: str) -> list[str]:
    """The error messages a question quotes (after "SomeError:", or between quotes), each cut to its fixed
    words: logs differ in the numbers and the sentences after the first."""
    found = [m.group(1) for m in _RAISED.finditer(text)] + [m.group(1) for m in _QUOTED.finditer(text)]
    return list(dict.fromkeys(p for m in found if len(p := _fixed_part(m)) >= MESSAGE_MIN_CHARS))


def _mention_test(term: str) -> Callable[[str, str], bool]:
    """Whether a text names `term` as a whole word: an acronym in its own case (searched in the text), a key
    or message in any (searched in the text lower-cased, whitespace runs as one space: `flat`)."""
    if _ACRONYM.fullmatch(term):
        acronym = re.compile(rf"(?<![\w-]){re.escape(term)}(?![\w-])")
        return lambda text, flat: acronym.search(text) is not None
    key = re.compile(rf"(?<!\w){re.escape(term.lower())}(?!\w)")
    return lambda text, flat: key.search(flat) is not None


def covering_section(
    term: str,
    guide: Sequence[GuideSection],
    version: str,
    lang: str,
    topic_ids: Sequence[str],
    *,
    topics: TopicTable,
) -> GuideSection | None:
    """The guide section of this release and language that names `term`: one saying it in prose before one
    only showing it in a command, one of a topic the question names first, then page order."""
    named = [t for t in topics.topics if t.id in topic_ids]
    mentions = _mention_test(term)
    found = []
    for i, s in enumerate(guide):
        if s.lang != lang or not s.for_version(version):
            continue
        in_prose = mentions(s.prose, s.flat_prose)
        if in_prose or mentions(s.code, s.flat_code):
            found.append((not in_prose, not any(t.covers(s.source) for t in named), i, s))
    return min(found, key=lambda f: f[:3])[3] if found else None


def uncovered_line(
    question: str,
    shown: str,
    version: str,
    lang: str,
    *,
    topics: TopicTable,
    guide: Sequence[GuideSection] = (),
) -> str:
    """One honest line when the answer never mentions a key, acronym or error text the question names
    ("padding_free", "GDN", an error message no passage quotes): the shown text is only near the question,
    so say where the guide covers it when some section of `guide` does, else say it is not covered and
    where that release documents it. "" when everything named appears."""
    seen = shown.lower()
    named = [m for m in _IDENTIFIER.findall(question) if m not in seen]
    named += [m for m in _ACRONYM.findall(question) if m not in _KNOWN_ACRONYMS and m.lower() not in seen]
    flat = " ".join(seen.split())
    for message in _messages(" ".join(question.split())):
        if message.lower() not in flat:
            named.append(message)
    if not named:
        return ""
    ids = [t.id for t in topics.named_in(question)]
    covered: dict[GuideSection, list[str]] = {}
    missing: list[str] = []
    for term in dict.fromkeys(named):
        section = covering_section(term, guide, version, lang, ids, topics=topics)
        if section is None:
            missing.append(term)
        else:
            covered.setdefault(section, []).append(term)
    lines = [
        words(lang, "topic_answer.covered", listed=_listed(terms), source=s.source, heading=s.heading)
        for s, terms in covered.items()
    ]
    if missing:
        paths = topics.upstream_for(ids, version) or topics.fallback.get(version, ())
        where = words(lang, "sep.and").join(f"`{p}`" for p in paths)
        lines.append(
            words(lang, "topic_answer.uncovered", listed=_listed(missing), version=version, where=where)
        )
    return "\n\n".join(lines)


def _listed(terms: Sequence[str]) -> str:
    return ", ".join(f"`{t}`" for t in terms)
