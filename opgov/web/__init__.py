"""The web pages: served by ``opgov serve`` at ``/`` and exported by ``opgov site build``."""
