/* The pages' one script. Build your own opset, in the browser: A line-by-line mirror of opgov/core/opset.py
 * (build_opset, coverage, suggest_additions) and of opgov/render/decomps_text.py
 * (describe_choice, render_python, render_selective_build with out= variants), so that the page
 * shows exactly what `opgov opset build` prints for the same choice; tests/web compares them.
 * The data is embedded in the page (<script type="application/json" id="opset-data">): no fetch,
 * so the page works from file:// too. Plain JavaScript, no dependencies. */
"use strict";

const RANK = { kept: 0, core: 1, "not-decomposed": 2, target: 3 };
const EXPORTED_KINDS = new Set(["functional", "inplace", "mutable"]);

function sorted(items) { return Array.from(items).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)); }

function info(data, op) {
  const row = data.operators[op];
  return row === undefined ? null : { category: row[0], lifecycle: row[1], kind: row[2] };
}

class Leaves {
  constructor(rules, decomposes) { this.rules = rules; this.decomposes = decomposes; this.cache = new Map(); }
  expands(op) { return Object.prototype.hasOwnProperty.call(this.rules, op) && this.decomposes(op); }
  of(op) { return this.walk(op, new Set())[0]; }
  walk(op, path) {
    if (!this.expands(op)) return [new Set([op]), false];
    if (this.cache.has(op)) return [this.cache.get(op), false];
    const here = new Set(path); here.add(op);
    const out = new Set();
    let cyclic = false;
    for (const target of this.rules[op]) {
      if (here.has(target)) { out.add(target); cyclic = true; }
      else {
        const [leaves, below] = this.walk(target, here);
        for (const l of leaves) out.add(l);
        cyclic = cyclic || below;
      }
    }
    if (!cyclic) this.cache.set(op, out);
    return [out, cyclic];
  }
  ofAll(ops) { const out = new Set(); for (const op of ops) for (const l of this.of(op)) out.add(l); return out; }
}

function hasRule(data, op) { return Object.prototype.hasOwnProperty.call(data.rules, op); }

function buildOpset(data, preset, decompose, keep) {
  if (!data.presets.includes(preset)) throw new Error(`unknown preset ${preset}`);
  const extra = [...new Set(decompose)], kept = [...new Set(keep)];
  for (const op of [...extra, ...kept]) {
    if (!(op in data.operators) && !hasRule(data, op)) throw new Error(`unknown operator ${op}`);
  }
  const both = sorted(extra.filter((op) => kept.includes(op)));
  if (both.length) throw new Error(`${both[0]} is both decomposed and kept; choose one`);
  const extraSet = new Set(extra), keptSet = new Set(kept);
  const decomposes = (op) => {
    if (keptSet.has(op)) return false;
    if (extraSet.has(op)) return true;
    if (preset === "no-decomp") return false;
    const i = info(data, op);
    const isCore = i !== null && i.category === "core";
    if (preset === "core-aten") return !isCore;
    return !isCore || hasRule(data, op);
  };
  const notes = extra.filter((op) => !hasRule(data, op)).map(
    (op) => `${op} has no decomposition rule: it cannot be decomposed, so a model that uses it still needs it`);
  const isGraph = (op) => Object.prototype.hasOwnProperty.call(data.graph_ops, op);
  const live = Object.keys(data.operators).filter((op) => data.operators[op][1] !== "deleted" && !isGraph(op));
  const graph = sorted(Object.keys(data.operators).filter((op) => data.operators[op][1] !== "deleted" && isGraph(op)));
  // functionalization leaves functional operators only (no-decomp keeps what export produces)
  const candidates = live.filter((op) => {
    const i = info(data, op);
    return preset === "no-decomp" ? EXPORTED_KINDS.has(i.kind) || i.category === "core" : i.kind === "functional";
  });
  if (preset !== "no-decomp") {
    const notFunctional = sorted(live.filter((op) => {
      const i = info(data, op);
      return i.kind !== "functional" && i.category === "core" && !keptSet.has(op);
    }));
    if (notFunctional.length) {
      notes.push(`${notFunctional.length} core operator(s) are not functional and are left out ` +
                 `(functionalization removes them; drift to fix in the core tags): ${notFunctional.join(", ")}`);
    }
  }
  const leaves = new Leaves(data.rules, decomposes);
  const entries = new Map();
  const whyKept = (op) => {
    if (keptSet.has(op)) return "kept";
    const i = info(data, op);
    return i !== null && i.category === "core" ? "core" : "not-decomposed";
  };
  const add = (op, why, source) => {
    if (!entries.has(op)) entries.set(op, { why, by: new Set(), info: info(data, op) });
    const e = entries.get(op);
    if (RANK[why] < RANK[e.why]) e.why = why;
    if (source) e.by.add(source);
  };
  const withoutRule = new Set();
  for (const op of sorted(new Set(candidates))) {
    if (!decomposes(op)) add(op, whyKept(op));
    else if (hasRule(data, op)) { for (const leaf of leaves.of(op)) add(leaf, "target", op); }
    else withoutRule.add(op);
  }
  for (const op of kept) if (live.includes(op)) add(op, "kept");
  for (const op of extra) if (hasRule(data, op)) { for (const leaf of leaves.of(op)) add(leaf, "target", op); }
  for (const [op, e] of entries) {
    if (e.why === "target" && !decomposes(op) && op in data.operators) e.why = whyKept(op);
  }
  for (const op of entries.keys()) withoutRule.delete(op);
  for (const op of [...entries.keys()]) if (isGraph(op)) entries.delete(op);  // no kernel, even as a target
  const list = sorted(entries.keys()).map((op) => {
    const e = entries.get(op);
    return { op, category: e.info ? e.info.category : null, why: e.why, produced_by: sorted(e.by),
             lifecycle: e.info ? e.info.lifecycle : "unknown" };
  });
  const decomposed = sorted(Object.keys(data.rules).filter(decomposes));
  const beyond = new Set(extra);
  if (preset === "full-decomp") {
    for (const op of decomposed) { const i = info(data, op); if (i !== null && i.category === "core") beyond.add(op); }
  }
  return { choice: { preset, decompose: extra, keep: kept }, entries: list, without_rule: sorted(withoutRule),
           decomposed, beyond_default: sorted(beyond), notes, graph_ops: graph };
}

function coverage(data, opset) {
  const start = opset.choice.preset === "no-decomp" ? "exported" : "core-aten";
  const decomposed = new Set(opset.decomposed);
  const leaves = new Leaves(data.rules, (op) => decomposed.has(op));
  const have = new Set(opset.entries.map((e) => e.op));
  const kept = new Set(opset.choice.keep);
  const models = data.models.map((m) => {
    let ops = start === "exported" ? m.exported_ops.slice() : m.core_aten_ops.slice();
    if (start === "core-aten") ops = ops.concat(m.exported_ops.filter((op) => kept.has(op)));
    const needed = new Set([...leaves.ofAll(ops)].filter((op) => !Object.prototype.hasOwnProperty.call(data.graph_ops, op)));
    return { model: m.key, family: m.family, needed: sorted(needed), missing: sorted([...needed].filter((op) => !have.has(op))) };
  });
  const notInRegistry = sorted(new Set(models.flatMap((m) => m.needed.filter((op) => !(op in data.operators)))));
  const covered = models.filter((m) => m.missing.length === 0).length;
  return { start, models, covered, share: models.length ? covered / models.length : 1,
           suggestions: suggestAdditions(models), not_in_registry: notInRegistry };
}

function suggestAdditions(models) {
  const total = models.length;
  const missing = new Map();
  for (const m of models) if (m.missing.length) missing.set(m.model, new Set(m.missing));
  let covered = total - missing.size;
  const out = [];
  while (missing.size) {
    const counts = new Map();
    for (const lacking of missing.values()) {
      for (const op of lacking) {
        const [completes, needs] = counts.get(op) || [0, 0];
        counts.set(op, [completes + (lacking.size === 1 ? 1 : 0), needs + 1]);
      }
    }
    let best = null;
    for (const [op, [c, n]] of counts) {
      if (best === null) { best = op; continue; }
      const [bc, bn] = counts.get(best);
      if (c > bc || (c === bc && (n > bn || (n === bn && op < best)))) best = op;
    }
    const newly = sorted([...missing].filter(([, lacking]) => lacking.size === 1 && lacking.has(best)).map(([name]) => name));
    for (const [name, lacking] of [...missing]) { lacking.delete(best); if (!lacking.size) missing.delete(name); }
    covered += newly.length;
    out.push({ op: best, newly_covered: newly, needed_by: counts.get(best)[1], covered_after: covered,
               share_after: total ? covered / total : 1 });
  }
  return out;
}

/* --- renderings, as opgov/render/decomps_text.py ------------------------------------------- */

function describeChoice(choice) {
  const parts = [choice.preset];
  if (choice.decompose.length) parts.push("decompose " + choice.decompose.join(", "));
  if (choice.keep.length) parts.push("keep " + choice.keep.join(", "));
  return parts.join("; ");
}

function pyRepr(name) { return "'" + name.replace(/\\/g, "\\\\").replace(/'/g, "\\'") + "'"; }

function renderPython(opset) {
  const choice = opset.choice;
  const base = choice.preset === "no-decomp" ? "{}" : "torch.export.default_decompositions()";
  // no-decomp starts from an empty table: only the choice's own keeps matter there
  const kept = choice.preset === "no-decomp" ? choice.keep : [...new Set([...choice.keep, ...opset.entries.map((e) => e.op)])];
  const listing = (names) => {
    const s = sorted(names);
    return s.length ? "[\n" + s.map((n) => `    ${pyRepr(n)},\n`).join("") + "]" : "[]";
  };
  return `# Reproduces the opgov opset choice "${describeChoice(choice)}" with torch.export.
# Use: ep = torch.export.export(model, example_args).run_decompositions(decomp_table)
import warnings

import torch
import torch._decomp

# the operators of this opset: a backend implements them, so torch must not decompose them
KEEP = ${listing(kept)}
DECOMPOSE = ${listing(opset.beyond_default)}


def _overload(name):
    """Map 'aten::add.Tensor' to torch.ops.aten.add.Tensor; None when this torch lacks it."""
    namespace, _, rest = name.partition("::")
    base, _, overload = rest.partition(".")
    packet = getattr(getattr(torch.ops, namespace), base, None)
    if packet is None or (overload or "default") not in packet.overloads():
        warnings.warn(f"{name} does not exist in torch {torch.__version__}")
        return None
    return getattr(packet, overload or "default")


decomp_table = ${base}
for _name in KEEP:
    _op = _overload(_name)
    if _op is not None:
        decomp_table.pop(_op, None)
for _name in DECOMPOSE:
    _op = _overload(_name)
    if _op is None:
        continue
    _fn = torch._decomp.decomposition_table.get(_op)
    if _fn is None:
        warnings.warn(f"torch has no decomposition for {_name}; it stays")
    else:
        decomp_table[_op] = _fn
`;
}

/* PyYAML's emitter for the one shape selective build writes: plain keys, booleans, and list
 * items that are single-quoted when they hold ": " (folded at spaces past column 100, as
 * Emitter.write_single_quoted does with width=100), plain otherwise. */
const YAML_WIDTH = 100;

function yamlPlainOk(text) {
  if (!text || /^[-?:,\[\]{}#&*!|>'"%@`\s]/.test(text) || /\s$/.test(text)) return false;
  if (/: |:$| #|[\n\t'"]/.test(text)) return false;
  return !/^(true|false|yes|no|on|off|null|~|y|n|[-+]?[0-9][0-9_.:eE+-]*|[-+]?\.(inf|nan))$/i.test(text);
}

function yamlItem(text, indent) {
  // the item starts at column `indent` + 2 ("- "); continuation lines are indented by indent + 2
  const prefix = " ".repeat(indent) + "- ";
  if (yamlPlainOk(text)) return prefix + text + "\n";
  let out = prefix + "'";
  let column = prefix.length + 1;
  let start = 0, spaces = false;
  for (let end = 0; end <= text.length; end++) {
    const ch = end < text.length ? text[end] : null;
    if (spaces) {
      if (ch === null || ch !== " ") {
        if (start + 1 === end && column > YAML_WIDTH && start !== 0 && end !== text.length) {
          out += "\n" + " ".repeat(indent + 2);
          column = indent + 2;
        } else {
          out += text.slice(start, end);
          column += end - start;
        }
        start = end;
      }
    } else if (ch === null || ch === " " || ch === "'") {
      if (start < end) { out += text.slice(start, end); column += end - start; start = end; }
    }
    if (ch === "'") { out += "''"; column += 2; start = end + 1; }
    if (ch !== null) spaces = ch === " ";
  }
  return out + "'\n";
}

function renderSelectiveBuild(opset, outVariants) {
  const label = `opgov opset ${describeChoice(opset.choice)}`;
  const selected = new Map();
  const select = (op, why) => selected.set(op, `${label}: ${why}`);
  for (const e of opset.entries) {
    const why = e.produced_by.length ? `${e.why}, produced by ${e.produced_by.slice(0, 3).join(", ")}` : e.why;
    select(e.op, why);
    if (outVariants && Object.prototype.hasOwnProperty.call(outVariants, e.op)) {
      select(outVariants[e.op], `out= variant of ${e.op}`);
    }
  }
  let text = `# selected operators: ${label}\n# ${selected.size} operators; generated by opgov\n`;
  if (!selected.size) return text + "operators: {}\n";
  text += "operators:\n";
  for (const op of sorted(selected.keys())) {
    text += `  ${op}:\n    is_root_operator: true\n    is_used_for_training: false\n` +
            `    include_all_overloads: false\n    debug_info:\n` + yamlItem(selected.get(op), 4);
  }
  return text;
}

function percent(share) { return Math.round(share * 100) + "%"; }

if (typeof module !== "undefined") {
  module.exports = { buildOpset, coverage, renderPython, renderSelectiveBuild, describeChoice, percent };
}

/* --- the page ------------------------------------------------------------------------------- */

function decides(data, choice) {
  const extra = new Set(choice.decompose), kept = new Set(choice.keep);
  return (op) => {
    if (kept.has(op)) return false;
    if (extra.has(op)) return true;
    if (choice.preset === "no-decomp") return false;
    const i = info(data, op);
    const isCore = i !== null && i.category === "core";
    if (choice.preset === "core-aten") return !isCore;
    return !isCore || hasRule(data, op);
  };
}

function readChoice(data) {
  const raw = location.hash.length > 1 ? location.hash.slice(1) : location.search.slice(1);
  const params = new URLSearchParams(raw);
  const preset = data.presets.includes(params.get("preset")) ? params.get("preset") : "core-aten";
  const names = (key) => params.getAll(key).flatMap((v) => v.split(",")).filter((op) => op in data.operators || hasRule(data, op));
  const keep = names("keep");
  const decompose = names("decompose").filter((op) => !keep.includes(op));
  return { preset, decompose, keep };
}

function writeChoice(choice) {
  const params = new URLSearchParams();
  params.set("preset", choice.preset);
  for (const op of choice.decompose) params.append("decompose", op);
  for (const op of choice.keep) params.append("keep", op);
  history.replaceState(null, "", "#" + params.toString());
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") node.textContent = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function startPage() {
  const data = JSON.parse(document.getElementById("opset-data").textContent);
  let choice = readChoice(data);
  const form = document.getElementById("opset-form");
  const groupsBox = document.getElementById("toggle-groups");
  const search = document.getElementById("op-search");
  const onlyRules = document.getElementById("only-rules");
  const GROUPS = [["core", "Core"], ["decomposable", "Decomposable"], ["custom", "Custom"], [null, "Not yet categorized"]];
  // the operators a choice can change: those an opset is built from, and those with a rule
  const toggleable = sorted(Object.keys(data.operators).filter((op) => {
    const i = info(data, op);
    return i.lifecycle !== "deleted" && (EXPORTED_KINDS.has(i.kind) || i.category === "core" || hasRule(data, op));
  }));
  const boxes = new Map();
  for (const [category, title] of GROUPS) {
    const ops = toggleable.filter((op) => data.operators[op][0] === category);
    if (!ops.length) continue;
    const list = el("ul", { class: "toggle-list" });
    for (const op of ops) {
      const id = "t-" + op.replace(/[^A-Za-z0-9_]/g, "-");
      const box = el("input", { type: "checkbox", id, "data-op": op });
      const rule = hasRule(data, op) ? el("span", { class: "meta", text: " → " + data.rules[op].join(", ") }) : "";
      const item = el("li", { "data-op": op, "data-rule": hasRule(data, op) ? "1" : "0" },
                      box, el("label", { for: id }, el("code", { text: op })), el("span", { class: "mark", "aria-hidden": "true" }), rule);
      list.append(item);
      boxes.set(op, box);
    }
    const details = el("details", { class: "group", "data-category": category || "none" },
                       el("summary", { text: `${title} (${ops.length})` }), list);
    if (category === "core") details.open = true;
    groupsBox.append(details);
  }

  function filterToggles() {
    const needle = search.value.trim().toLowerCase();
    for (const details of groupsBox.querySelectorAll("details.group")) {
      let shown = 0;
      for (const li of details.querySelectorAll("li")) {
        const visible = (!needle || li.dataset.op.toLowerCase().includes(needle)) && (!onlyRules.checked || li.dataset.rule === "1");
        li.hidden = !visible;
        shown += visible;
      }
      details.hidden = shown === 0;
      if (needle && shown) details.open = true;
    }
  }

  let yamlUrl = null;
  function update() {
    const error = document.getElementById("choice-error");
    let opset;
    try { opset = buildOpset(data, choice.preset, choice.decompose, choice.keep); error.hidden = true; }
    catch (e) { error.textContent = e.message; error.hidden = false; return; }
    form.elements.preset.value = choice.preset;
    const decision = decides(data, choice);
    const changed = new Set([...choice.decompose, ...choice.keep]);
    for (const [op, box] of boxes) {
      box.checked = decision(op);
      box.parentElement.classList.toggle("changed", changed.has(op));
      box.parentElement.querySelector(".mark").textContent = changed.has(op) ? " ✱" : "";
    }
    document.getElementById("op-count").textContent = String(opset.entries.length);
    document.getElementById("choice-text").textContent = describeChoice(opset.choice);
    const rows = document.querySelector("#implement tbody");
    rows.replaceChildren(...opset.entries.map((e) => {
      const name = el("td", {}, el("code", { text: e.op }));
      return el("tr", {}, name, el("td", { text: e.category || "—" }), el("td", { text: e.lifecycle }),
                el("td", { text: e.why + (e.produced_by.length ? " ← " + e.produced_by.slice(0, 3).join(", ") + (e.produced_by.length > 3 ? " …" : "") : "") }));
    }));
    document.getElementById("without-rule").textContent = opset.without_rule.length
      ? `${opset.without_rule.length} operators would be decomposed but have no rule; a backend implements them only for models that use them.` : "";
    document.getElementById("torch-note").textContent = data.torch
      ? `This page follows opgov's rules; for the list and code exact for torch ${data.torch} (what its export really produces), run \`opgov opset build --format json|python\` with the same choice.` : "";
    document.getElementById("graph-ops").textContent = opset.graph_ops.length
      ? `Not to implement: ${opset.graph_ops.length} graph operators (${opset.graph_ops.join(", ")}) — assertions and symbolic sizes that lowering strips or the runtime answers without a kernel.` : "";
    if (data.models.length) {
      const cov = coverage(data, opset);
      document.getElementById("model-count").textContent = String(cov.covered);
      document.getElementById("model-share").textContent = percent(cov.share);
      document.querySelector("#models tbody").replaceChildren(...cov.models.map((m) => el("tr", { class: m.missing.length ? "missing" : "covered" },
        el("td", {}, el("code", { text: m.model })), el("td", { text: m.family }),
        el("td", { text: m.missing.length ? m.missing.join(", ") : "covered" }))));
      document.getElementById("suggestions").replaceChildren(...cov.suggestions.map((s) => el("li", {},
        el("code", { text: s.op }), ` +${s.newly_covered.length} model(s) → ${s.covered_after}/${cov.models.length} (${percent(s.share_after)}); used by ${s.needed_by}`)));
    }
    document.getElementById("python-code").textContent = renderPython(opset);
    const yaml = renderSelectiveBuild(opset, data.out_variants);
    document.getElementById("selective-build").textContent = yaml;
    document.getElementById("yaml-count").textContent = String((yaml.match(/^  \S.*:$/gm) || []).length);
    if (yamlUrl) URL.revokeObjectURL(yamlUrl);
    yamlUrl = URL.createObjectURL(new Blob([yaml], { type: "application/yaml" }));
    document.getElementById("download-yaml").href = yamlUrl;
    writeChoice(choice);
  }

  form.addEventListener("change", (event) => {
    const target = event.target;
    if (target.name === "preset") {
      choice = { preset: target.value, decompose: [], keep: [] };
    } else if (target.dataset.op) {
      const op = target.dataset.op;
      const without = (list) => list.filter((x) => x !== op);
      choice = { preset: choice.preset, decompose: without(choice.decompose), keep: without(choice.keep) };
      const byPreset = decides(data, choice)(op);
      if (target.checked && !byPreset) choice.decompose.push(op);
      if (!target.checked && byPreset) choice.keep.push(op);
    } else if (target === onlyRules) {
      filterToggles();
      return;
    } else {
      return;
    }
    update();
  });
  search.addEventListener("input", filterToggles);
  document.getElementById("reset").addEventListener("click", () => { choice = { preset: choice.preset, decompose: [], keep: [] }; update(); });
  document.getElementById("copy-python").addEventListener("click", async () => {
    const text = document.getElementById("python-code").textContent;
    const status = document.getElementById("copy-status");
    try { await navigator.clipboard.writeText(text); status.textContent = "Copied."; }
    catch (e) {
      const range = document.createRange();
      range.selectNodeContents(document.getElementById("python-code"));
      getSelection().removeAllRanges(); getSelection().addRange(range);
      status.textContent = "Selected: press Ctrl+C to copy.";
    }
  });
  window.addEventListener("hashchange", () => { choice = readChoice(data); update(); });
  update();
  document.body.dataset.ready = "1";
}

/* /ops: filter the table by name, category, lifecycle, tag and kind; the filter is kept in the address. */
function startOpsFilter() {
  const form = document.getElementById("ops-filter");
  const rows = Array.from(document.querySelectorAll("#ops tbody tr"));
  const params = new URLSearchParams(location.hash.length > 1 ? location.hash.slice(1) : location.search.slice(1));
  for (const field of form.elements) if (params.has(field.name)) field.value = params.get(field.name);
  function apply() {
    const q = form.elements.q.value.trim().toLowerCase();
    const want = { category: form.elements.category.value, lifecycle: form.elements.lifecycle.value,
                   kind: form.elements.kind.value };
    const tag = form.elements.tag.value;
    let shown = 0;
    for (const row of rows) {
      const visible = (!q || row.dataset.name.includes(q)) && (!tag || row.dataset.tags.includes(" " + tag + " ")) &&
        Object.entries(want).every(([k, v]) => !v || row.dataset[k] === v);
      row.hidden = !visible;
      shown += visible;
    }
    document.getElementById("ops-shown").textContent = String(shown);
    const kept = new URLSearchParams();
    for (const field of form.elements) if (field.name && field.value) kept.set(field.name, field.value);
    history.replaceState(null, "", kept.toString() ? "#" + kept.toString() : location.pathname + location.search);
  }
  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  form.addEventListener("submit", (event) => { event.preventDefault(); apply(); });
  apply();
  document.body.dataset.ready = "1";
}

function start() {
  if (document.getElementById("opset-data")) startPage();
  if (document.getElementById("ops-filter")) startOpsFilter();
}

if (typeof document !== "undefined") {
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
}
