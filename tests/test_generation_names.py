"""Index generation names sort in creation order (pruning keeps the newest by name), and the reader accepts
the names an index built before microseconds were added still carries."""

from __future__ import annotations

from assistant.vectorstore import GENERATION_NAME
from ingest.store import new_generation_name


def test_names_made_within_one_second_sort_in_creation_order() -> None:
    start = 1_764_877_861.0  # one wall-clock second, stepped by microseconds and across its end
    stamps = [start + step / 1_000_000 for step in (0, 1, 2, 10, 500_000, 999_999, 1_000_000, 1_000_001)]
    names = [new_generation_name(stamp) for stamp in stamps]
    assert sorted(names) == names
    assert len(set(names)) == len(names)


def test_the_reader_accepts_new_and_old_names() -> None:
    assert GENERATION_NAME.match(new_generation_name(1_764_877_861.25))
    assert GENERATION_NAME.match("gen-20261204-191101-ab20a1")  # an index ingested before the change
    assert not GENERATION_NAME.match("gen-20261204-191101-12345-ab20a1")
