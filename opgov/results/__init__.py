"""The result every use case returns, below render/ and services/, one module per area, each
declared once as a frozen standard-library dataclass. The API serves and documents them as they are
(FastAPI takes dataclasses as response models); the CLI's ``--json``, the weekly report's JSON and
the pages' data are :func:`opgov.results.plain.to_json` of them, so no command loads pydantic to
print a result."""
