/* The pages' one script. Build your own opset, in the browser: a small evaluator of the policy that
 * Python decides (opgov.core.opset.opset_policy, in the page's <script type="application/json"
 * id="opset-data">): each operator's flags, the rules and torch's traced targets, the texts, the
 * Python snippet and selective-build YAML as templates. It is a second implementation of
 * build_opset's ranking and exclusions, coverage and the greedy suggestions (docs/architecture.md
 * says so): a change to how opgov.core.opset decides is made here too. Every sentence is one of
 * Python's templates, filled. tests/web/test_opset_cases.py holds the two equal, on the recorded
 * cases and on hundreds of seeded random choices, with node; tests/web/test_pages.py in Chromium.
 * No fetch, so the page works from file:// too. Plain JavaScript, no dependencies. */
"use strict";

const has = (map, key) => Object.prototype.hasOwnProperty.call(map, key);
const sorted = (items) => Array.from(items).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const fill = (template, values) => template.replace(/@(\w+)@/g, (m, k) => (has(values, k) ? String(values[k]) : m));
const NOWHERE = [null, "unknown", ""];
const policy = (data, op) => (has(data.operators, op) ? data.operators[op] : NOWHERE);
const flagged = (data, op, flag) => flag !== null && policy(data, op)[2].includes(flag);
const withFlag = (data, flag) => Object.keys(data.operators).filter((op) => flagged(data, op, flag));
const targetsOf = (data) => (op) => (has(data.into, op) ? data.into[op] : data.rules[op]);

/* The operators `op` ends in when each operator `expands` says is replaced by its targets; an
 * operator met again on its own path (a cycle) is a leaf. */
class Leaves {
  constructor(targets, expands) { this.targets = targets; this.expands = expands; this.cache = new Map(); }
  of(op) { return this.walk(op, new Set())[0]; }
  walk(op, path) {
    if (!this.expands(op)) return [new Set([op]), false];
    if (this.cache.has(op)) return [this.cache.get(op), false];
    const here = new Set(path).add(op), out = new Set();
    let cyclic = false;
    for (const target of this.targets(op)) {
      if (here.has(target)) { out.add(target); cyclic = true; continue; }
      const [leaves, below] = this.walk(target, here);
      for (const l of leaves) out.add(l);
      cyclic = cyclic || below;
    }
    if (!cyclic) this.cache.set(op, out);
    return [out, cyclic];
  }
  ofAll(ops) { const out = new Set(); for (const op of ops) for (const l of this.of(op)) out.add(l); return out; }
}

/* Does the choice decompose `op` (whether or not anything says how)? */
function decider(data, choice) {
  const extra = new Set(choice.decompose), kept = new Set(choice.keep), flag = data.presets[choice.preset].decomposes;
  return (op) => !kept.has(op) && (extra.has(op) || flagged(data, op, flag));
}

function buildOpset(data, preset, decompose, keep) {
  const T = data.texts;
  if (!has(data.presets, preset)) throw new Error(fill(T.unknown_preset, { preset, presets: Object.keys(data.presets).join(", ") }));
  const P = data.presets[preset];
  const extra = [...new Set(decompose)], kept = [...new Set(keep)];
  for (const [flag, names] of [["--decompose", extra], ["--keep", kept]]) {
    for (const op of names) if (!has(data.operators, op)) throw new Error(fill(T.unknown, { flag, op }));
  }
  const both = sorted(extra.filter((op) => kept.includes(op)));
  if (both.length) throw new Error(fill(T.both, { op: both[0] }));
  const choice = { preset, decompose: extra, keep: kept }, extraSet = new Set(extra), keptSet = new Set(kept);
  const decomposes = decider(data, choice), targets = targetsOf(data), list = (ops) => ops.join(", ");
  const flag = (op, f) => flagged(data, op, f);
  const notes = [];
  let does = decomposes, codeKeep = [], codeDecompose = [];
  if (data.torch === null) {
    for (const op of extra) if (!has(data.rules, op)) notes.push(fill(T.no_rule, { op }));
  } else {
    for (const op of extra) {
      if (flag(op, "z")) throw new Error(fill(T.refuse_none, { op }));
      if (flag(op, "u")) throw new Error(fill(T.refuse_untraced, { op, reason: data.reasons[op] }));
    }
    // torch.export decomposes it whatever the table says: no choice keeps it
    const traced = (op) => has(data.into, op) || has(data.rules, op);
    const becomes = new Leaves(targets, (op) => flag(op, "e") && traced(op));
    for (const op of kept) {
      if (flag(op, "e")) {
        const ops = traced(op) ? sorted(becomes.of(op)).join(", ") || "(no operator)" : "(not traced)";
        throw new Error(fill(T.refuse_keep, { op, reason: data.removed[op], ops }));
      }
    }
    // what the generated code lets torch decompose: the choice, where torch can
    const table = new Set(Object.keys(data.operators).filter((op) => decomposes(op) && (flag(op, "t") || extraSet.has(op)) && !flag(op, "e")));
    const probe = new Leaves(targets, (op) => table.has(op) && (has(data.into, op) || has(data.rules, op)));
    const outside = new Set(data.outside), foreign = new Map();
    for (const op of sorted(table)) {
      if (flag(op, "T") || extraSet.has(op)) continue;
      const leaving = sorted([...probe.of(op)].filter((leaf) => outside.has(leaf)));
      if (leaving.length) foreign.set(op, leaving);
    }
    for (const op of foreign.keys()) table.delete(op);
    does = (op) => table.has(op) || flag(op, "e");
    const inDefault = withFlag(data, "T");
    if (P.from_empty) codeDecompose = sorted(table);
    else {
      codeKeep = sorted(inDefault.filter((op) => !table.has(op)));
      codeDecompose = sorted([...table].filter((op) => !flag(op, "T")));
    }
    const none = sorted(withFlag(data, "w").filter((op) => has(data.rules, op) && decomposes(op) && !table.has(op) && !foreign.has(op)));
    if (none.length) notes.push(fill(T.torch_none, { n: none.length, ops: list(none) }));
    if (foreign.size) {
      notes.push(fill(T.torch_foreign, { n: foreign.size,
        ops: list(sorted(foreign.keys()).map((op) => fill(T.foreign_item, { op, ops: list(foreign.get(op)) }))) }));
    }
    const coreKept = sorted(withFlag(data, "K").filter((op) => !table.has(op) && !keptSet.has(op)));
    if (coreKept.length) notes.push(fill(T.core_kept, { n: coreKept.length, ops: list(coreKept) }));
  }
  const expands = (op) => does(op) && (has(data.into, op) || has(data.rules, op));
  const leaves = new Leaves(targets, expands);
  const entries = new Map(), withoutRule = new Set();
  const whyKept = (op) => (keptSet.has(op) ? "kept" : flag(op, "c") ? "core" : "not-decomposed");
  const functionalized = {};
  const add = (op, why, source) => {
    // functionalization: an exported graph holds a mutable target's functional sibling, never the target
    if (why === "target" && preset !== "no-decomp" && has(data.functional_forms || {}, op)) {
      functionalized[op] = data.functional_forms[op];
      op = data.functional_forms[op];
    }
    if (has(data.graph_ops, op)) return;  // no kernel, even as a target
    if (!entries.has(op)) entries.set(op, { why, by: new Set() });
    const e = entries.get(op);
    if (data.ranks[why] < data.ranks[e.why]) e.why = why;
    if (source) e.by.add(source);
  };
  const addLeaves = (op) => { for (const leaf of leaves.of(op)) add(leaf, "target", op); };
  for (const op of sorted(withFlag(data, P.candidate))) {
    if (data.torch !== null && flag(op, "e")) { if (expands(op)) addLeaves(op); continue; }  // export removes it
    if (!decomposes(op)) add(op, whyKept(op));
    else if (expands(op)) addLeaves(op);
    else if (data.torch !== null && flag(op, "i")) continue;  // export's tracing decomposes it
    else if (data.torch !== null && has(data.rules, op)) add(op, "torch-keeps");
    else withoutRule.add(op);
  }
  for (const op of kept) if (flag(op, "l")) add(op, "kept");
  for (const op of extra) if (expands(op)) addLeaves(op);
  for (const [op, e] of entries) {
    if (e.why === "target" && !does(op) && flag(op, "r")) e.why = decomposes(op) ? "torch-keeps" : whyKept(op);
  }
  for (const op of entries.keys()) withoutRule.delete(op);
  if (P.drift) {  // listed or left out, never both: a non-functional core target is listed
    const drift = sorted(withFlag(data, "x").filter((op) => !keptSet.has(op) && !entries.has(op)));
    if (drift.length) notes.push(fill(T.not_functional, { n: drift.length, ops: list(drift) }));
  }
  const decomposed = sorted(new Set([...Object.keys(data.rules), ...Object.keys(data.into)])).filter(expands);
  const beyond = new Set(extra);
  if (P.beyond_core) for (const op of decomposed) if (flag(op, "c")) beyond.add(op);
  const ops = sorted(entries.keys());
  if (data.torch === null) {  // the snippet adjusts torch's default table by the choice alone
    codeKeep = P.from_empty ? kept : sorted(new Set([...kept, ...ops]));
    codeDecompose = sorted(beyond);
  }
  return { choice, without_rule: sorted(withoutRule), decomposed, beyond_default: sorted(beyond), notes, functionalized,
           graph_ops: sorted(withFlag(data, "g")), code: { keep: codeKeep, decompose: codeDecompose },
           entries: ops.map((op) => ({ op, category: policy(data, op)[0], why: entries.get(op).why,
                                       produced_by: sorted(entries.get(op).by), lifecycle: policy(data, op)[1] })) };
}

function coverage(data, opset) {
  const start = data.presets[opset.choice.preset].start, decomposed = new Set(opset.decomposed);
  // what torch.export decomposes whatever the table says becomes what torch turns it into
  const removed = (op) => flagged(data, op, "e") && has(data.into, op);
  const leaves = new Leaves((op) => (removed(op) ? data.into[op] : data.rules[op]),
                            (op) => decomposed.has(op) && (has(data.rules, op) || removed(op)));
  const have = new Set(opset.entries.map((e) => e.op)), kept = new Set(opset.choice.keep);
  const models = data.models.map((m) => {
    let ops = start === "exported" ? m.exported_ops.slice() : m.core_aten_ops.slice();
    if (start === "core-aten") ops = ops.concat(m.exported_ops.filter((op) => kept.has(op)));
    const needed = new Set([...leaves.ofAll(ops)].filter((op) => !has(data.graph_ops, op))
      .map((op) => (has(opset.functionalized || {}, op) ? opset.functionalized[op] : op)));
    return { model: m.key, family: m.family, needed: sorted(needed), missing: sorted([...needed].filter((op) => !have.has(op))) };
  });
  const notInRegistry = sorted(new Set(models.flatMap((m) => m.needed.filter((op) => !flagged(data, op, "r")))));
  const covered = models.filter((m) => m.missing.length === 0).length;
  return { start, models, covered, share: models.length ? covered / models.length : 1,
           suggestions: suggestAdditions(models), not_in_registry: notInRegistry };
}

/* Greedy: add the missing operator that completes the most models; ties to the one more models
 * need, then to the name. */
function suggestAdditions(models) {
  const total = models.length, missing = new Map(), out = [];
  for (const m of models) if (m.missing.length) missing.set(m.model, new Set(m.missing));
  let covered = total - missing.size;
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
      const [bc, bn] = best === null ? [-1, -1] : counts.get(best);
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

/* --- the texts: Python's templates, filled -------------------------------------------------- */

/* A text of opset build's lines as a sentence of the page: capitalised, with a full stop. */
function sentence(text) {
  return text.charAt(0).toUpperCase() + text.slice(1) + ".";
}

function describeChoice(data, choice) {
  const parts = [choice.preset];
  if (choice.decompose.length) parts.push(fill(data.texts.choice_decompose, { ops: choice.decompose.join(", ") }));
  if (choice.keep.length) parts.push(fill(data.texts.choice_keep, { ops: choice.keep.join(", ") }));
  return parts.join("; ");
}

function renderPython(data, opset) {
  const L = data.python_list;
  const listing = (names) => (names.length ? L.open + sorted(names).map((op) => fill(L.item, { op })).join("") + L.close : L.empty);
  return fill(data.code[opset.choice.preset], { choice: describeChoice(data, opset.choice),
    keep: listing(opset.code.keep), decompose: listing(opset.code.decompose) });
}

function renderSelectiveBuild(data, opset) {
  const S = data.selective_build, label = fill(S.label, { choice: describeChoice(data, opset.choice) });
  const selected = new Map();
  const select = (op, why) => selected.set(op, fill(S.why, { label, why }).replace(/'/g, "''"));
  for (const e of opset.entries) {
    select(e.op, e.produced_by.length ? fill(S.produced, { why: e.why, ops: e.produced_by.slice(0, 3).join(", ") }) : e.why);
    if (has(data.out_variants, e.op)) select(data.out_variants[e.op], fill(S.out_variant, { op: e.op }));
  }
  const text = fill(S.header, { label, n: selected.size });
  if (!selected.size) return text + S.empty;
  return text + S.open + sorted(selected.keys()).map((op) => fill(S.item, { op, why: selected.get(op) })).join("");
}

/* operator → why, as "a, b (why); c (other why)" */
function byReason(whys) {
  const groups = new Map();
  for (const op of Object.keys(whys)) groups.set(whys[op], (groups.get(whys[op]) || []).concat([op]));
  return [...groups].map(([why, ops]) => `${ops.join(", ")} (${why})`).join("; ");
}

function percent(share) { return Math.round(share * 100) + "%"; }

if (typeof module !== "undefined") {
  module.exports = { buildOpset, coverage, renderPython, renderSelectiveBuild, describeChoice, percent };
}

/* --- the page ------------------------------------------------------------------------------- */

function readChoice(data) {
  const raw = location.hash.length > 1 ? location.hash.slice(1) : location.search.slice(1);
  const params = new URLSearchParams(raw);
  const preset = has(data.presets, params.get("preset")) ? params.get("preset") : Object.keys(data.presets)[0];
  const names = (key) => params.getAll(key).flatMap((v) => v.split(",")).filter((op) => has(data.operators, op));
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
  const toggleable = sorted(withFlag(data, "v"));
  const boxes = new Map();
  for (const [category, title] of GROUPS) {
    const ops = toggleable.filter((op) => data.operators[op][0] === category);
    if (!ops.length) continue;
    const list = el("ul", { class: "toggle-list" });
    for (const op of ops) {
      const id = "t-" + op.replace(/[^A-Za-z0-9_]/g, "-");
      const box = el("input", { type: "checkbox", id, "data-op": op });
      const rule = has(data.rules, op) ? el("span", { class: "meta", text: " → " + data.rules[op].join(", ") }) : "";
      const item = el("li", { "data-op": op, "data-rule": has(data.rules, op) ? "1" : "0" },
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
    const decision = decider(data, choice);
    const changed = new Set([...choice.decompose, ...choice.keep]);
    for (const [op, box] of boxes) {
      box.checked = decision(op);
      box.parentElement.classList.toggle("changed", changed.has(op));
      box.parentElement.querySelector(".mark").textContent = changed.has(op) ? " ✱" : "";
    }
    document.getElementById("op-count").textContent = String(opset.entries.length);
    document.getElementById("choice-text").textContent = describeChoice(data, opset.choice);
    const rows = document.querySelector("#implement tbody");
    rows.replaceChildren(...opset.entries.map((e) => {
      const name = el("td", {}, el("code", { text: e.op }));
      return el("tr", {}, name, el("td", { text: e.category || "—" }), el("td", { text: e.lifecycle }),
                el("td", { text: e.why + (e.produced_by.length ? " ← " + e.produced_by.slice(0, 3).join(", ") + (e.produced_by.length > 3 ? " …" : "") : "") }));
    }));
    document.getElementById("without-rule").textContent = opset.without_rule.length
      ? sentence(fill(data.texts.without_rule, { n: opset.without_rule.length })) : "";
    const gone = Object.keys(data.removed || {});
    document.getElementById("torch-removes").textContent = gone.length
      ? "Not listed: " + fill(data.texts.torch_removes, { n: gone.length, ops: byReason(data.removed) }) : "";
    document.getElementById("notes").replaceChildren(...opset.notes.map((note) => el("li", { text: note })));
    document.getElementById("graph-ops").textContent = opset.graph_ops.length
      ? sentence(fill(data.texts.graph_ops, { n: opset.graph_ops.length, ops: opset.graph_ops.join(", ") })) : "";
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
    document.getElementById("python-code").textContent = renderPython(data, opset);
    const yaml = renderSelectiveBuild(data, opset);
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
      const byPreset = decider(data, choice)(op);
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
