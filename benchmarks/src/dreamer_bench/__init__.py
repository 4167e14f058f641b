"""dreamer's benchmarks: ``dream bench ...``, measurements anyone can rerun on their machine.

A distribution of its own (``dreamer-bench``, benchmarks/ in dreamer's repository) that imports
dreamer as any user would and adds ``dream bench`` through the ``dreamer.commands`` entry points
(``cli``). ``locomo``, ``paraphrase`` and ``retention`` score retrieval and what dreams keep
against references run over the same documents (``bm25``); ``quality`` runs the scenarios;
``scale``, ``report``, ``serve``, ``pgcompare`` and ``fleet`` time dreamer at size.
"""
