"""Our hybrid retriever as a LangChain `BaseRetriever`, so any LangChain chain or agent can use it.

The ranking stays in `assistant/retrieval.py` (dense + BM25, weighted reciprocal rank fusion, one hit per
section); this adapter only turns its ranked hits into `Document`s that keep our ids, heading paths and
versions. Nothing in `ask` imports this module, so the cold path never pays for langchain_core.
"""

from __future__ import annotations

from typing import Any

# langchain_core takes seconds to import: only this module imports it, and only callers that want LangChain.
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from assistant.records import Hit
from assistant.retrieval import HybridRetriever, make_retriever
from assistant.settings import Settings


def heading_path(heading: str, section: str) -> list[str]:
    """The heading "Page > Part > Section" as a list; a section title holding " > " stays whole."""
    if section and heading.endswith(section):
        parents = heading[: -len(section)].removesuffix(" > ")
        return [*(parents.split(" > ") if parents else []), section]
    return heading.split(" > ") if heading else []


def hit_document(hit: Hit, rank: int) -> Document:
    """One ranked hit as a Document: the passage text, and every field of the hit but the text as metadata."""
    metadata = hit.model_dump(exclude={"text"})
    metadata["heading_path"] = heading_path(hit.heading, hit.section)
    metadata["versions"] = metadata["version"].split(",")
    metadata["rank"] = rank
    return Document(id=hit.chunk_id, page_content=hit.text, metadata=metadata)


class HybridLangChainRetriever(BaseRetriever):
    """`invoke(question)` returns our top-`k` passages, best first, filtered like `HybridRetriever.search`.

    An abstaining search (nothing relevant on either side) returns no documents."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: HybridRetriever
    k: int = 5
    lang: str | None = None
    version: str | None = None
    doc_type: str | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        result = self.retriever.search(
            query, k=self.k, lang=self.lang, version=self.version, doc_type=self.doc_type
        )
        return [hit_document(hit, rank) for rank, hit in enumerate(result.hits, start=1)]


def langchain_retriever(settings: Settings | None = None, **search: Any) -> HybridLangChainRetriever:
    """The current index's retriever as a LangChain retriever; `search` takes k, lang, version, doc_type."""
    return HybridLangChainRetriever(retriever=make_retriever(settings), **search)
