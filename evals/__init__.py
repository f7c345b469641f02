"""Golden Q&A and retrieval evaluations."""
