"""The requests of the use cases (opgov.usecases), one module per area: what each asks, with the
constraints of its fields. The API takes them as its bodies, path and query parameters (or a
multipart form, for a request with files); the CLI builds them from its arguments and checks them
before it runs or sends one."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Request(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
