"""Ingest: the only writer of knowledge_base data and of the vector store."""
