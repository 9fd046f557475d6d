/* node run_opset_cases.js DATA.json CASE.json…: each case's choice through the page's evaluator
 * (web/static/pages.js) on the page's data; prints {case file name: result} as JSON. */
"use strict";
const fs = require("fs");
const path = require("path");
const api = require(path.join(__dirname, "..", "..", "opgov", "web", "static", "pages.js"));
const { opsetResult } = require(path.join(__dirname, "opset_result.js"));

const [dataFile, ...caseFiles] = process.argv.slice(2);
const data = JSON.parse(fs.readFileSync(dataFile, "utf8"));
const out = {};
for (const file of caseFiles) {
  out[path.basename(file)] = opsetResult(api, data, JSON.parse(fs.readFileSync(file, "utf8")).choice);
}
process.stdout.write(JSON.stringify(out));
