"""Auto Recipe assistant: reads the catalog and the vector store, answers questions."""
