"""The result every use case returns, below render/ and services/, one module per area (the area's
name, as in opgov.usecases, its requests and opgov.services), each declared once as a frozen
standard-library dataclass with a documented shape (a field's description is its ``metadata``).

The API serves and documents them as they are (FastAPI takes dataclasses as response models), so
the OpenAPI document shows exactly these shapes; the CLI's ``--json``, the weekly report's JSON and
the pages' data are :func:`opgov.results.plain.to_json` of them, so no command loads pydantic to
print a result. Times are timezone-aware UTC datetimes (JSON: ISO 8601 ending in ``Z``), dates are
``YYYY-MM-DD``. A field whose JSON name is a Python keyword (``from``) has an ``alias``, the name
JSON uses, and its class the config :data:`~opgov.results.plain.ALIASED`. core/vocab.py's closed
lists are typed once, in :mod:`opgov.results.vocab`."""
