"""Export the small convolutional network the user guide checks: `python scripts/export_example.py OUT.pt2`
(as torch.export gives it) or `... --core-aten OUT.pt2` (after its core ATen decompositions);
`--dynamic-batch` exports the batch size as symbolic (the graph then reads it: aten::sym_size.int).
Needs torch."""

from __future__ import annotations

import sys
import warnings


def main(argv: list[str]) -> None:
    import torch

    warnings.filterwarnings("ignore")
    core_aten = "--core-aten" in argv
    out = next(a for a in argv if not a.startswith("--"))

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3)
            self.pool = torch.nn.AdaptiveAvgPool2d((6, 6))
            self.fc = torch.nn.Linear(8 * 36, 10)

        def forward(self, x):
            x = torch.nn.functional.hardswish(self.conv(x))
            return self.fc(torch.flatten(self.pool(x), 1))

    torch.manual_seed(0)
    dynamic = {"x": {0: torch.export.Dim("batch", min=2)}} if "--dynamic-batch" in argv else None
    ep = torch.export.export(Net().eval(), (torch.randn(2 if dynamic else 1, 3, 32, 32),), dynamic_shapes=dynamic)
    torch.export.save(ep.run_decompositions() if core_aten else ep, out)


if __name__ == "__main__":
    main(sys.argv[1:])
