/* One choice through the page's evaluator (web/static/pages.js), in the shape of
 * tests/web/opset_parity.py's python_result: used by run_opset_cases.js (node) and by the Chromium
 * tests (the page's own script). `api`: pages.js's buildOpset, coverage, renderPython, renderSelectiveBuild. */
"use strict";

function opsetResult(api, data, choice) {
  let opset;
  try { opset = api.buildOpset(data, choice.preset, choice.decompose, choice.keep); }
  catch (e) { return { error: e.message }; }
  const cov = api.coverage(data, opset);
  return {
    operators: opset.entries.map((e) => [e.op, e.why, e.produced_by, e.category, e.lifecycle]),
    without_rule: opset.without_rule, decomposed: opset.decomposed, notes: opset.notes, graph_ops: opset.graph_ops,
    coverage: { covered: cov.covered, missing: cov.models.map((m) => [m.model, m.missing]),
                suggestions: cov.suggestions.map((s) => [s.op, s.newly_covered, s.needed_by, s.covered_after]),
                not_in_registry: cov.not_in_registry },
    python: api.renderPython(data, opset), yaml: api.renderSelectiveBuild(data, opset),
  };
}

if (typeof module !== "undefined") module.exports = { opsetResult };
