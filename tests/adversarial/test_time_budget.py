"""Each answer has a time budget: past it the optional parts (layout search, citations, rephrasing) are
left out with a one-line notice, and the computed facts are still there; never an empty answer."""

from __future__ import annotations

import pytest

from assistant.service import ask
from assistant.settings import Settings
from assistant.turn_budget import BUDGET_SPENT

QUESTIONS = [
    "Llama3 8B SFT on 12 H100",  # resized: a layout search would run
    "cases: Llama3 8B SFT on 16 H100, Qwen3 8B SFT on 8 H100, Llama3 70B pretraining on 64 H100",
    "在 12 张 H100 上做 Llama3 8B SFT",
]


@pytest.mark.timeout(900)  # the first test builds the shared index (index_settings)
@pytest.mark.parametrize("question", QUESTIONS)
def test_a_spent_budget_keeps_the_facts_and_says_so(index_settings, question):
    spent = Settings(data_dir=index_settings.data_dir, answer_budget_s=1e-6)
    answer = ask(question, settings=spent)
    line = BUDGET_SPENT.render(answer.language)
    assert answer.notices == [line]
    assert answer.answer_markdown.startswith(f"_{line}_")
    assert answer.citations == []
    plans = [a for a in (answer.cases or [answer])]
    assert all(
        a.recipe is not None and a.plan is not None and (a.commands.torchrun or a.commands.multinode)
        for a in plans
    )


@pytest.mark.timeout(900)  # the first test builds the shared index (index_settings)
def test_a_normal_answer_has_no_notice_and_its_citations(index_settings):
    answer = ask(QUESTIONS[0], settings=index_settings)
    assert answer.notices == [] and answer.citations
