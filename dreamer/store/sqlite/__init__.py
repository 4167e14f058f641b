"""The SQLite backend, the default: one workspace in ``memory/crystals.db``.

``store.py`` assembles ``SQLiteStore`` from the table groups beside it (``crystal_writes.py``,
``records.py``, ``crystals.py``, ``search.py``, ``journal.py``, ``history.py``) over one
connection (``connect.py`` opens it, ``db.py``, ``base.py``). ``schema.py`` holds the
numbered migrations and ``errors.py`` turns SQLite's errors into dreamer's. Nothing here
imports the PostgreSQL backend.
"""
