"""Check a model at export time against opgov's record (docs/user-guide.md, "The export-time check").

Run it where torch is installed, with OPGOV_DATABASE_URL naming the opgov database (or pass
server="https://opgov.example.org" to check_export to ask an `opgov serve` instead).
"""

import sys
import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")  # torch without numpy says so

import torch  # noqa: E402

from opgov.export_check import DeprecatedOperatorError, DeprecatingOperatorWarning, check_export  # noqa: E402


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x):
        x = torch.nn.functional.hardswish(self.conv(x))
        return self.fc(x.mean(dim=(2, 3)))


with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # torch.export's own notices
    program = torch.export.export(Net().eval(), (torch.randn(1, 3, 16, 16),))

with warnings.catch_warnings(record=True) as said:
    warnings.simplefilter("always", DeprecatingOperatorWarning)
    try:
        verdict = check_export(program)
    except DeprecatedOperatorError as stop:
        verdict = None
        stopped = str(stop)
for warning in said:
    if issubclass(warning.category, DeprecatingOperatorWarning):
        print(f"warning: {warning.message}")
if verdict is None:
    print(f"export stopped: {stopped}")
    sys.exit(1)
print(f"exported: {len(verdict.operators)} operators, allowed")
# a runtime receives the program lowered to the core ATen opset (ExecuTorch's to_edge does this)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    lowered = check_export(program.run_decompositions(), strict=False)
print(f"lowered: {len(lowered.operators)} operators; runs on: {', '.join(lowered.runs_on) or 'no registered runtime'}")
