"""A torch module whose forward is a function (``fn_module(torch, lambda x: x + 1)``): what the
tests export to ask torch and ExecuTorch about one call. Imports no torch itself, so a test file
that does not need torch can import it (the caller passes the torch module)."""

from __future__ import annotations

_CLASSES: dict[int, type] = {}


def fn_module(torch, fn):
    """An ``nn.Module`` instance calling ``fn(*args)``; ``torch`` is the caller's torch module."""
    cls = _CLASSES.get(id(torch))
    if cls is None:
        class Fn(torch.nn.Module):
            def __init__(self, fn):
                super().__init__()
                self.fn = fn

            def forward(self, *args):
                return self.fn(*args)

        cls = _CLASSES[id(torch)] = Fn
    return cls(fn)
