"""The SQLite backend, the default: one workspace in ``memory/crystals.db``.

``store.py`` assembles ``SQLiteStore`` from the table groups beside it (``crystals.py``,
``search.py``, ``records.py``, ``journal.py``, ``history.py``) over one connection
(``connect.py`` opens it, ``db.py``, ``base.py``), with the statements both backends share
(``dreamer.store.shared``). ``schema.py`` holds the numbered migrations and ``errors.py``
turns SQLite's errors into dreamer's. Nothing here imports the PostgreSQL backend.
"""
