"""The result models every use case returns, below render/ and services/: frozen pydantic types that
the CLI's ``--json``, the API's responses and the pages all serialize. Imported only by the
commands that build or render a result, so ``opgov --help`` never loads pydantic."""
