"""The layout search memoised per its inputs (issue 22): it costs 0.2 to 1.5 s and is a pure function of its
arguments (the KnowledgeBase among them), so the same question asked again, or another question on the same
model and cluster, reuses the answer."""

from assistant.memo import memoised_by_content
from assistant.planning import search

nearest_fit = memoised_by_content(search.nearest_fit)
search_layouts = memoised_by_content(search.search_layouts)
