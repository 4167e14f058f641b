"""Measurements users can rerun on their own machine: ``dream bench locomo`` and ``scale``.

``locomo`` scores retrieval on the LoCoMo conversations against a plain BM25 reference run over
the same documents (``bm25``); ``scale`` times the note, search and dream paths on synthetic
workspaces of a given size.
"""
