"""opgov: governance of PyTorch's core ATen operator set."""

__version__ = "0.1.0"
