"""The SQLite backend, the default: one workspace in ``memory/crystals.db``.

``store.py`` assembles ``SQLiteStore`` from the table groups beside it a note writes (crystals,
records) over one connection (``db.py``, ``base.py``), and ``complete.py`` adds the others
(search, history) on first use; ``schema.py`` holds the numbered migrations and ``errors.py``
turns SQLite's errors into dreamer's. Nothing here imports the PostgreSQL backend.
"""
