/* The pages' one script. It decides nothing: /opset places what `opgov opset build` computed
 * (opgov.services.pages.opset_view), and /ops filters its rows by what each row says it is.
 *
 * /opset embeds its data (<script type="application/json" id="opset-data">,
 * opgov.results.pages.OpsetPage): the toggles, which of them each preset decomposes, and each
 * preset's view. Another choice's view is asked of the server (`view_url`, served pages); a static
 * site opened from a file has no server to ask, so it names the `opgov opset build` command that
 * gives it. Plain JavaScript, no dependencies; tests/web/test_pages.py holds what it shows equal to
 * what Python computed, in Chromium. */
"use strict";

const fill = (template, values) => template.replace(/@(\w+)@/g, (m, k) => (k in values ? String(values[k]) : m));
const byId = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") node.textContent = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function addressParams() {
  return new URLSearchParams(location.hash.length > 1 ? location.hash.slice(1) : location.search.slice(1));
}

/* --- /opset ---------------------------------------------------------------------------------- */

function readChoice(data) {
  const params = addressParams();
  const preset = data.presets.includes(params.get("preset")) ? params.get("preset") : data.presets[0];
  const names = (key) => params.getAll(key).flatMap((v) => v.split(",")).filter((op) => op);
  return { preset, decompose: names("decompose"), keep: names("keep") };
}

function choiceQuery(choice) {
  const params = new URLSearchParams();
  params.set("preset", choice.preset);
  for (const op of choice.decompose) params.append("decompose", op);
  for (const op of choice.keep) params.append("keep", op);
  return params.toString();
}

function command(choice) {
  return ["opgov opset build --preset " + choice.preset, ...choice.decompose.map((op) => "--decompose " + op),
          ...choice.keep.map((op) => "--keep " + op)].join(" ");
}

/* The selective-build yaml, from the view's selection and the page's pieces of it. */
function selectiveBuild(data, view) {
  const S = data.selective_build, label = view.yaml_label, items = view.yaml_items;
  const head = fill(S.header, { label, n: items.length });
  if (!items.length) return head + S.empty;
  return head + S.open + items.map(([op, why]) => fill(S.item, { op, why: fill(S.why, { label, why }) })).join("");
}

function startOpset() {
  const data = JSON.parse(byId("opset-data").textContent);
  const form = byId("opset-form"), groupsBox = byId("toggle-groups"), search = byId("op-search");
  const onlyRules = byId("only-rules"), answers = new Map();
  let choice = readChoice(data), asked = 0, yamlUrl = null;
  const boxes = new Map();  // operator → [its checkbox, the presets (their indexes) that decompose it]
  for (const [category, title, toggles] of data.groups) {
    const list = el("ul", { class: "toggle-list" });
    for (const [op, rule, decomposedBy] of toggles) {
      const id = "t-" + op.replace(/[^A-Za-z0-9_]/g, "-");
      const box = el("input", { type: "checkbox", id, "data-op": op });
      list.append(el("li", { "data-op": op, "data-rule": rule ? "1" : "0" }, box,
                     el("label", { for: id }, el("code", { text: op })), el("span", { class: "mark", "aria-hidden": "true" }),
                     rule ? el("span", { class: "meta", text: " → " + rule }) : ""));
      boxes.set(op, [box, decomposedBy]);
    }
    const details = el("details", { class: "group", "data-category": category },
                       el("summary", { text: `${title} (${toggles.length})` }), list);
    if (category === "core") details.open = true;
    groupsBox.append(details);
  }
  // checked: decomposed, by the choice's own lists first, else by its preset
  const byPreset = (op) => boxes.get(op)[1].includes(String(data.presets.indexOf(choice.preset)));
  const checked = (op) => !choice.keep.includes(op) && (choice.decompose.includes(op) || byPreset(op));

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

  function showChoice() {
    form.elements.preset.value = choice.preset;
    const changed = new Set([...choice.decompose, ...choice.keep]);
    for (const [op, [box]] of boxes) {
      box.checked = checked(op);
      box.parentElement.classList.toggle("changed", changed.has(op));
      box.parentElement.querySelector(".mark").textContent = changed.has(op) ? " ✱" : "";
    }
    history.replaceState(null, "", "#" + choiceQuery(choice));
  }

  function refuse(error) {  // opset build refuses the choice, or a page opened from a file cannot ask
    byId("choice-error").textContent = error || "";
    byId("choice-error").hidden = !error;
    byId("offline").hidden = Boolean(error);
    byId("offline-command").textContent = command(choice);
  }

  function show(view) {
    byId("choice-error").hidden = byId("offline").hidden = true;
    byId("op-count").textContent = String(view.count);
    byId("choice-text").textContent = view.choice;
    document.querySelector("#implement tbody").replaceChildren(...view.rows.map(([op, category, lifecycle, why]) =>
      el("tr", {}, el("td", {}, el("code", { text: op })), el("td", { text: category }), el("td", { text: lifecycle }),
         el("td", { text: why }))));
    byId("lines").replaceChildren(...view.lines.map((line) => el("p", { class: "meta", text: line })));
    byId("notes").replaceChildren(...view.notes.map((note) => el("li", { text: note })));
    if (view.covered !== null && byId("models")) {
      byId("model-count").textContent = String(view.covered);
      byId("model-share").textContent = view.share;
      document.querySelector("#models tbody").replaceChildren(...view.models.map(([model, family, missing]) =>
        el("tr", { class: missing === "covered" ? "covered" : "missing" }, el("td", {}, el("code", { text: model })),
           el("td", { text: family }), el("td", { text: missing }))));
      byId("suggestions").replaceChildren(...view.suggestions.map(([op, brings]) => el("li", {}, el("code", { text: op }), brings)));
    }
    byId("python-code").textContent = view.python;
    const yaml = selectiveBuild(data, view);
    byId("selective-build").textContent = yaml;
    byId("yaml-count").textContent = String(view.yaml_items.length);
    if (yamlUrl) URL.revokeObjectURL(yamlUrl);
    yamlUrl = URL.createObjectURL(new Blob([yaml], { type: "application/yaml" }));
    byId("download-yaml").href = yamlUrl;
  }

  /* The view of the choice: a preset's, when embedded (every preset's offline, the first one's
     served); another, asked once of the server. */
  async function update() {
    showChoice();
    const query = choiceQuery(choice), mine = ++asked;
    const embedded = !choice.decompose.length && !choice.keep.length && data.views[choice.preset];
    let answer = embedded ? { view: embedded } : answers.get(query);
    if (!answer && !data.view_url) answer = { error: null };  // offline: no server to ask
    if (!answer) {
      try {
        const response = await fetch(data.view_url + "?" + query, { headers: { Accept: "application/json" } });
        const body = await response.json();  // a view, or a problem (a name that is not one)
        answer = response.ok && !body.refused ? { view: body } : { error: body.refused || body.detail };
        answers.set(query, answer);
      } catch (e) {
        answer = { error: "opgov did not answer: " + e.message };
      }
      if (mine !== asked) return;  // the user chose again meanwhile
    }
    if (answer.view) show(answer.view); else refuse(answer.error);
    document.body.dataset.ready = "1";
  }

  form.addEventListener("change", (event) => {
    const target = event.target;
    if (target.name === "preset") {
      choice = { preset: target.value, decompose: [], keep: [] };
    } else if (target.dataset.op) {
      const op = target.dataset.op, without = (list) => list.filter((x) => x !== op);
      choice = { preset: choice.preset, decompose: without(choice.decompose), keep: without(choice.keep) };
      if (target.checked && !byPreset(op)) choice.decompose.push(op);
      if (!target.checked && byPreset(op)) choice.keep.push(op);
    } else {
      if (target === onlyRules) filterToggles();
      return;
    }
    document.body.dataset.ready = "0";
    update();
  });
  search.addEventListener("input", filterToggles);
  byId("reset").addEventListener("click", () => { choice = { preset: choice.preset, decompose: [], keep: [] }; update(); });
  byId("copy-python").addEventListener("click", async () => {
    const status = byId("copy-status");
    try { await navigator.clipboard.writeText(byId("python-code").textContent); status.textContent = "Copied."; }
    catch (e) {
      const range = document.createRange();
      range.selectNodeContents(byId("python-code"));
      getSelection().removeAllRanges(); getSelection().addRange(range);
      status.textContent = "Selected: press Ctrl+C to copy.";
    }
  });
  window.addEventListener("hashchange", () => {
    const now = readChoice(data);
    if (choiceQuery(now) !== choiceQuery(choice)) { choice = now; update(); }
  });
  update();
}

/* --- /ops: filter the table by name, category, lifecycle, tag and kind; the filter is kept in the address. */

function startOpsFilter() {
  const form = byId("ops-filter");
  const rows = Array.from(document.querySelectorAll("#ops tbody tr"));
  const params = addressParams();
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
    byId("ops-shown").textContent = String(shown);
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
  if (byId("opset-data")) startOpset();
  if (byId("ops-filter")) startOpsFilter();
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
