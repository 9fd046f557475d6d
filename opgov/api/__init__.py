"""The HTTP face of opgov (`opgov serve`): FastAPI routers over the same services as the CLI."""
