"""The result models every use case returns, below render/ and services/, one module per area, each
declared once: frozen pydantic models (on :class:`opgov.results.models.Result`), or frozen
standard-library dataclasses for the commands that must not load pydantic (check-bc, import;
:mod:`opgov.results.plain` writes their JSON). The CLI's ``--json``, the API's responses and the
pages all serialize them. Imported only by the commands that build or render a result, so
``opgov --help`` never loads pydantic."""
