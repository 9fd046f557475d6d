"""The Typer shell: parse arguments, call one service, render text or JSON."""
