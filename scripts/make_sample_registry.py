"""Regenerate data/sample/: a small registry in native_functions.yaml format for the demo and the
unit tests.

It takes the entries of the operators the 2023 core ATen review named (and their decomposition
targets), plus entries chosen to cover every piece of schema syntax, from a PyTorch release's
native_functions.yaml, keeps only the keys opgov reads, and writes two snapshots: v1 and v2, where
v2 makes the kinds of change PyTorch releases make (named-tensor overloads removed, a new
operator, a BC break, an FC-only change). Run from the repository root:

    python scripts/make_sample_registry.py ../shared/pytorch/2.12.0
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

TAG_DESC = {
    "core": "A member of the core ATen opset, which backends and runtimes implement.",
    "data_dependent_output": "The output depends on the values in the input, not just its metadata.",
    "dynamic_output_shape": "The output's shape depends on the values in the input.",
    "inplace_view": "Changes only the metadata of its input in place (sizes, strides).",
    "nondeterministic_seeded": "Random: the result depends on the generator's seed.",
    "pointwise": "Computes each output element from the matching input elements alone.",
    "reduction": "Reduces over one or more dimensions.",
    "view_copy": "The copying counterpart of a view operator, named {op}_copy.",
}
KEEP_KEYS = ("func", "variants", "structured_delegate", "dispatch", "autogen", "tags")
SYNTAX = [
    "add.Tensor", "add_.Tensor", "add.out", "__and__.Scalar", "__iand__.Scalar", "chunk", "empty.memory_format",
    "flatten.using_names", "index.Tensor", "layer_norm", "native_layer_norm", "max.dim", "max_pool2d",
    "_native_batch_norm_legit", "randint", "gelu", "split.Tensor", "sum.dim_DimnameList", "unbind.Dimname",
    "_fused_moving_avg_obs_fq_helper", "to.dtype", "_foreach_add_.Scalar", "nll_loss", "upsample_nearest2d.vec",
    "clone", "convolution", "permute", "relu", "view", "addmm", "mul.Tensor", "div.Tensor", "sub.Tensor",
    "hardswish", "softplus", "tanh", "exp", "log", "sqrt", "sigmoid", "select.int", "unsqueeze", "as_strided",
    "_to_copy", "full", "resize_", "arange.start_step", "lt.Tensor", "mul.Scalar", "add.Scalar", "sub.Scalar",
    "div.Scalar", "minimum", "maximum", "amax", "amin", "argmax", "argmin", "logical_not", "bmm", "sin",
    "pow.Tensor_Scalar", "pow.Tensor_Tensor", "trunc", "clamp", "atan", "sum.dim_IntList", "split_with_sizes",
    "squeeze.dims", "var.correction", "mean.dim", "any.dim", "rand", "view_copy", "roll", "index.Tensor_out",
]


def review_ops(path: Path) -> list[str]:
    data = yaml.safe_load(path.read_text())
    names = []
    for item in data["added_to_core"] + data["decomposed"]:
        names.append(item["op"])
        names.extend(item.get("into", []))
    return [n.split("::", 1)[1] for n in names]


def entries(text: str) -> dict[str, list[str]]:
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("- func:"):
            name = re.match(r"- func: ([\w.]+)\(", line).group(1)
            current = blocks.setdefault(name, [])
        elif not line.startswith(" "):
            current = None
        if current is not None:
            current.append(line)
    return blocks


def trim(block: list[str]) -> list[str]:
    out, keep = [], True
    for line in block:
        if line.startswith("- func:"):
            keep = True
        elif re.match(r"^  \w+:", line):
            keep = line.strip().split(":")[0] in KEEP_KEYS
        if keep and not line.strip().startswith("#") and line.strip():
            out.append(re.sub(r"\s+#.*$", "", line) if "tags:" not in line else line)
    return out


def add_delegate_targets(text: str, blocks: dict[str, list[str]]) -> str:
    """Append the entries that ``structured_delegate:`` lines name and the sample lacks: a file
    without them is one PyTorch cannot build, and opgov refuses to import it. Appended at the end,
    so that the lines of the other entries stay where the tests expect them."""
    have = set(re.findall(r"^- func: ([\w.]+)\(", text, re.M))
    targets = list(dict.fromkeys(t for t in re.findall(r"^  structured_delegate: ([\w.]+)", text, re.M)
                                 if t not in have))
    return text.rstrip("\n") + "\n\n" + "\n\n".join("\n".join(trim(blocks[t])) for t in targets) + "\n"


def main(release: Path) -> None:
    out = Path("data/sample")
    out.mkdir(parents=True, exist_ok=True)
    blocks = entries((release / "native_functions.yaml").read_text())
    review = review_ops(Path(__file__).resolve().parent.parent.parent / "shared/decisions/core-aten-review-2023.yaml")
    wanted: list[str] = []
    for name in review + SYNTAX:
        if name in blocks and name not in wanted:
            wanted.append(name)
        elif name not in blocks and name.split(".")[0] + ".default" not in blocks and name not in wanted:
            print("not an entry (autogen or absent):", name, file=sys.stderr)
    header = ("# opgov sample registry ({which}): a small native_functions.yaml for the demo and the unit tests.\n"
              "# Generated by scripts/make_sample_registry.py from the schemas of a PyTorch release; only the\n"
              "# keys opgov reads are kept. {note}\n\n")
    v1 = [trim(blocks[name]) for name in sorted(wanted)]
    (out / "native_functions.v1.yaml").write_text(add_delegate_targets(
        header.format(which="v1", note="v2 beside it is the next release.") + "\n\n".join("\n".join(b) for b in v1) + "\n",
        blocks))
    v2 = []
    for block in v1:
        name = re.match(r"- func: ([\w.]+)\(", block[0]).group(1)
        if name in ("unbind.Dimname", "sum.dim_DimnameList", "flatten.using_names"):
            continue  # named-tensor overloads retired without deprecation
        text = "\n".join(block)
        if name == "glu":
            text = text.replace("int dim=-1", "int dim=-2")  # BC break of a non-core operator
        if name == "roll":
            text = text.replace("int[1] dims=[]", "int[1] dims")  # BC break of a core operator
        if name == "clamp_max":
            text = text.replace("Scalar max)", "Scalar max, int[] dims=[])")  # FC only: container default
        v2.append(text)
    v2.append("- func: fused_rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor\n"
              "  dispatch:\n    CompositeExplicitAutograd: fused_rms_norm")
    v2.sort(key=lambda b: re.match(r"- func: ([\w.]+)\(", b).group(1))
    (out / "native_functions.v2.yaml").write_text(add_delegate_targets(
        header.format(which="v2", note="Differs from v1 as a next release would.") + "\n\n".join(v2) + "\n", blocks))
    used = sorted({t.strip() for b in v2 + ["\n".join(x) for x in v1] for m in re.finditer(r"tags: \[?([^\]#\n]*)", b)
                   for t in m.group(1).split(",") if t.strip()})
    (out / "tags.yaml").write_text("# Tags the sample registry uses, in tags.yaml's format (descriptions are opgov's own).\n\n"
                                   + "".join(f"- tag: {t}\n  desc: |\n          {TAG_DESC[t]}\n" for t in used))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
