"""Renderings of typed results: text, markdown, GitHub, JSON and HTML."""
