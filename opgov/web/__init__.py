"""The web pages' renderer: Jinja2 templates over the services' typed results, served at ``/`` by
``opgov serve`` (the routes are :mod:`opgov.api.html`) and written as a static site by ``opgov site build``."""
