"""Planning: the layer that combines the rules (assistant/rules) with the estimators (assistant/estimate).

fit.py (does a plan fit), search.py (rank layouts, nearest fit), resize.py (adapt a recipe to a cluster).
Both layers below are pure; the data they need comes from the KnowledgeBase (assistant/kb.py) passed in.
"""
