"""The LangChain adapter: a LangChain chain invokes our hybrid retriever and gets its ranking and metadata."""

from __future__ import annotations

from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from assistant.langchain_retriever import HybridLangChainRetriever

QUESTION = "CUDA graph accepts only Tensor inputs"


def test_a_chain_gets_our_ranked_documents_with_their_metadata(retriever):
    adapter = HybridLangChainRetriever(retriever=retriever, k=5, doc_type="guide")
    documents = (RunnableLambda(str.strip) | adapter).invoke(f"  {QUESTION} ")
    hits = retriever.search(QUESTION, k=5, doc_type="guide").hits
    assert len(hits) == 5
    assert [d.id for d in documents] == [h.chunk_id for h in hits]
    assert [d.page_content for d in documents] == [h.text for h in hits]
    for rank, (document, hit) in enumerate(zip(documents, hits, strict=True), start=1):
        meta = document.metadata
        assert meta["rank"] == rank and meta["score"] == hit.score
        assert (meta["chunk_id"], meta["source"], meta["doc_type"]) == (hit.chunk_id, hit.source, "guide")
        assert " > ".join(meta["heading_path"]) == hit.heading and meta["heading_path"][-1] == hit.section
        assert ",".join(meta["versions"]) == meta["version"] == hit.version
    assert "pitfalls.md#" in documents[0].metadata["source"]


def test_a_rag_style_chain_formats_our_context(retriever):
    adapter = HybridLangChainRetriever(retriever=retriever, k=3)
    chain = {
        "context": adapter | RunnableLambda(lambda docs: [d.metadata["source"] for d in docs]),
        "question": RunnablePassthrough(),
    } | RunnableLambda(lambda inputs: inputs)
    result = chain.invoke("MoE 显存溢出")
    assert result["question"] == "MoE 显存溢出"
    assert result["context"] == [h.source for h in retriever.search("MoE 显存溢出", k=3).hits]


def test_filters_pass_through_and_an_abstaining_search_returns_nothing(retriever):
    old = HybridLangChainRetriever(retriever=retriever, k=8, version="0.3.1").invoke("how to launch a recipe")
    assert old and all(set(d.metadata["versions"]) & {"all", "0.3.1"} for d in old)
    assert HybridLangChainRetriever(retriever=retriever).invoke("zqxv wvut kjhg") == []
