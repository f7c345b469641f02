"""The smallest sequence-length multiple for CP and SP, in the user's numbers, and its place in an answer."""

from __future__ import annotations

import pytest

from assistant.sequence_multiple import answer_line, asks_sequence_multiple, sequence_multiple, sp_stated


@pytest.mark.parametrize(
    ("cp", "tp", "sp", "multiple"),
    [
        (2, 4, True, 8),  # lcm(2·2, 2·4), not 2·CP·TP = 16
        (2, 8, True, 16),
        (4, 2, True, 8),
        (2, 3, True, 12),  # odd TP: lcm(4, 6)
        (2, 4, False, 4),  # no SP: only 2·CP
        (1, 4, True, 4),  # no CP: S / 1 over TP 4
        (1, 1, None, 1),
    ],
)
def test_smallest_multiple_both_checks_accept(cp: int, tp: int, sp: bool | None, multiple: int) -> None:
    result = sequence_multiple(cp, tp, sp)
    assert result.multiple == multiple
    for s in range(1, 4 * multiple):
        cp_ok = cp == 1 or s % (2 * cp) == 0
        sp_ok = sp is False or tp == 1 or (s % cp == 0 and (s // cp) % tp == 0)
        assert (cp_ok and sp_ok) == (s % multiple == 0), s


def test_sp_stated_from_text_and_overrides() -> None:
    assert sp_stated("with sequence parallelism on", {}) is True
    assert sp_stated("开启 sequence parallel 时", {}) is True
    assert sp_stated("without SP", {}) is False
    assert sp_stated("CP 2 and TP 4", {}) is None
    assert sp_stated("anything", {"model.sequence_parallel": "false"}) is False


def test_answer_line_only_for_a_divisibility_question_with_sizes() -> None:
    over = {"model.context_parallel_size": "2", "model.tensor_model_parallel_size": "4"}
    line = answer_line("what must my sequence length be divisible by with SP on?", over, "en")
    assert "multiple of 8" in line and "CP × TP = 8" in line and "2 × CP = 4" in line
    unsaid = answer_line("what must the sequence length be divisible by?", over, "en")
    assert "multiple of 8" in unsaid and "multiple of 4 is enough" in unsaid  # SP unsaid: both figures
    assert "8 的倍数" in answer_line("序列长度需要能被多少整除？开启序列并行", over, "zh")
    assert answer_line("how fast is CP 2 with TP 4?", over, "en") == ""
    assert answer_line("what must the sequence length be divisible by?", {}, "en") == ""
    assert not asks_sequence_multiple("pretrain Llama 3 8B with seq length 8192")


def test_a_stated_length_is_checked_against_the_multiple() -> None:
    over = {"model.tensor_model_parallel_size": "2"}
    text = "seq_length 4095 with SP fails: First dimension of the tensor should be divisible by TP"
    line = answer_line(text, over, "en", seq=4095)
    assert "4095 is not a multiple of 2" in line and "4094 / 4096" in line
    assert "not a multiple" not in answer_line(text, over, "en", seq=4096)
