"""The PostgreSQL backend, for fleets: many workspaces' rows in one database.

``store.py`` assembles ``PostgresStore`` from the table groups beside it (crystals, search,
records, leases, scratch) over one connection (``base.py``); ``schema.py`` holds the numbered
migrations and ``jobs.py`` the shared job queue of ``dream worker``. psycopg is imported only
in this package. Nothing here imports the SQLite backend.
"""
