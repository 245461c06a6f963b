// Tests the TextMate grammar (syntaxes/tenx.tmLanguage.json) with the engine VS Code uses
// (vscode-textmate on vscode-oniguruma) against the repository's valid .tenx code: every file
// under examples/ and stdlib/, every fixture under tests/fixtures whose `// expect:` header says
// `ok`, and every ```tenx block of docs/language.md and of the diagnostic catalog's pages
// (compiler/diagnostics/codes/*.md), each a program `tenxc check` accepts.
//
// On that code, every non-whitespace token must get a scope of its own (more than the root
// `source.tenx` and `meta.*` groupings) and no token may be scoped `invalid`. A few tokens of a
// known snippet are checked for their exact scopes, so a wrong scope fails too, not only a
// missing one. Run with `npm test` from editors/vscode, or `node editors/vscode/test/grammar.mjs`.

import { readFileSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

const here = dirname(fileURLToPath(import.meta.url));
const extensionDir = join(here, "..");
const repoRoot = join(extensionDir, "..", "..");
const grammarPath = join(extensionDir, "syntaxes", "tenx.tmLanguage.json");

async function loadGrammar() {
  const wasm = readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (text) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async (scopeName) =>
      scopeName === "source.tenx"
        ? vsctm.parseRawGrammar(readFileSync(grammarPath, "utf8"), grammarPath)
        : null,
  });
  const grammar = await registry.loadGrammar("source.tenx");
  if (!grammar) throw new Error(`could not load ${grammarPath}`);
  return grammar;
}

/** Every line's tokens: `{ line, col, text, scopes }`, line and col 1-based. */
function tokenize(grammar, source) {
  const out = [];
  let stack = vsctm.INITIAL;
  source.split(/\r?\n/).forEach((line, index) => {
    const result = grammar.tokenizeLine(line, stack);
    for (const token of result.tokens) {
      out.push({
        line: index + 1,
        col: token.startIndex + 1,
        text: line.slice(token.startIndex, token.endIndex),
        scopes: token.scopes,
      });
    }
    stack = result.ruleStack;
  });
  return out;
}

function filesUnder(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else if (name.endsWith(".tenx")) out.push(path);
  }
  return out;
}

/** The fixture's `// expect:` header (in its first five lines, as tests/src/lib.rs reads it). */
function expectHeader(text) {
  for (const line of text.split("\n").slice(0, 5)) {
    const trimmed = line.trim();
    if (trimmed.startsWith("// expect:")) return trimmed.slice("// expect:".length).trim();
  }
  return null;
}

/** The valid code to test: `{ name, source, firstLine }`. */
function corpus() {
  const units = [];
  const file = (path) => ({ name: relative(repoRoot, path), source: readFileSync(path, "utf8"), firstLine: 1 });
  for (const dir of ["examples", "stdlib"]) {
    for (const path of filesUnder(join(repoRoot, dir))) units.push(file(path));
  }
  for (const path of filesUnder(join(repoRoot, "tests", "fixtures"))) {
    const unit = file(path);
    if (expectHeader(unit.source) === "ok") units.push(unit);
  }
  // The ```tenx blocks of docs/language.md and of the diagnostic catalog's pages (each a clean
  // program: tests/tests/examples.rs and catalog.rs check them); ```tenx,expect=… and
  // ```tenx,fail blocks are left out.
  const pages = [join(repoRoot, "docs", "language.md")];
  const catalog = join(repoRoot, "compiler", "diagnostics", "codes");
  for (const name of readdirSync(catalog).sort()) if (name.endsWith(".md")) pages.push(join(catalog, name));
  for (const page of pages) units.push(...tenxBlocks(page));
  return units;
}

/** The ```tenx blocks of a Markdown page, each with the line its code starts on. */
function tenxBlocks(page) {
  const out = [];
  const lines = readFileSync(page, "utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== "```tenx") continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end].trim() !== "```") end++;
    out.push({ name: relative(repoRoot, page), source: lines.slice(start, end).join("\n"), firstLine: start + 1 });
    i = end;
  }
  return out;
}

/** Scopes that say what a token is: not the root, and not a `meta.*` grouping. */
const meaningful = (scopes) => scopes.filter((s) => s !== "source.tenx" && !s.startsWith("meta."));

const failures = [];
function fail(unit, token, why) {
  const line = unit.firstLine + token.line - 1;
  failures.push(`${unit.name}:${line}:${token.col}: ${why}: ${JSON.stringify(token.text)} [${token.scopes.join(" ")}]`);
}

/** Exact-scope checks on a known snippet, so a wrong scope fails as well as a missing one. */
function checkSnapshot(grammar) {
  const source = [
    "// Refunds need a person.",
    "import std.approval.yes_no",
    "/* block",
    "   comment */",
    "tool issue_refund(amount_cents: int(min: 1) \"The amount\") -> string {",
    "  risk = high",
    "  approval {",
    "    message = \"Refund {amount_cents}?\\n\"",
    "    expires = 24h",
    "  }",
    "  run = http(POST, \"${PAYMENTS_URL}/refunds\", timeout: 10s)",
    "}",
    "agent support {",
    "  model = m",
    "  prompt = \"\"\"",
    "    Refund {order_id} \\{ once \\}",
    "    \"\"\"",
    "  params = { temperature: 0.2, top_p: -1e6, on: true }",
    "}",
    "graph g {",
    "  state {",
    "    score?: number",
    "  }",
    "  route support by verdict {",
    "    \"publish\" -> END",
    "    when score < 0.5 and not done -> support",
    "    else -> END",
    "  }",
    "  parallel support {",
    "    branches = [a, b]",
    "  }",
    "}",
  ].join("\n");
  const tokens = tokenize(grammar, source);
  const unit = { name: "snapshot", firstLine: 1 };
  const expected = [
    [1, "//", "punctuation.definition.comment.tenx"],
    [1, " Refunds need a person.", "comment.line.double-slash.tenx"],
    [2, "import", "keyword.control.import.tenx"],
    [2, "approval", "entity.name.namespace.tenx"],
    [3, "/*", "punctuation.definition.comment.begin.tenx"],
    [4, "   comment ", "comment.block.tenx"],
    [5, "tool", "storage.type.tool.tenx"],
    [5, "issue_refund", "entity.name.function.tool.tenx"],
    [5, "amount_cents", "variable.parameter.tenx"],
    [5, "int", "support.type.primitive.tenx"],
    [5, "min", "variable.parameter.tenx"],
    [5, "1", "constant.numeric.decimal.tenx"],
    [5, "The amount", "string.quoted.double.tenx"],
    [5, "->", "keyword.operator.arrow.result.tenx"],
    [5, "string", "support.type.primitive.tenx"],
    [6, "risk", "variable.other.property.tenx"],
    [6, "high", "constant.language.risk.tenx"],
    [7, "approval", "entity.name.section.tenx"],
    [8, "amount_cents", "variable.other.placeholder.tenx"],
    [8, "\\n", "constant.character.escape.tenx"],
    [9, "24", "constant.numeric.duration.tenx"],
    [9, "h", "keyword.other.unit.tenx"],
    [11, "http", "support.function.builtin.tenx"],
    [11, "POST", "support.constant.http-method.tenx"],
    [11, "PAYMENTS_URL", "variable.other.environment.tenx"],
    [11, "timeout", "variable.parameter.tenx"],
    [11, "10", "constant.numeric.duration.tenx"],
    [13, "agent", "storage.type.agent.tenx"],
    [13, "support", "entity.name.class.agent.tenx"],
    [14, "m", "variable.other.tenx"],
    [16, "order_id", "variable.other.placeholder.tenx"],
    [16, "\\{", "constant.character.escape.tenx"],
    [16, "    Refund ", "string.quoted.triple.tenx"],
    [18, "temperature", "support.type.property-name.tenx"],
    [18, "0.2", "constant.numeric.decimal.tenx"],
    [18, "-1e6", "constant.numeric.decimal.tenx"],
    [18, "true", "constant.language.boolean.tenx"],
    [21, "state", "keyword.other.state.tenx"],
    [22, "score", "variable.parameter.tenx"],
    [22, "?", "keyword.operator.optional.tenx"],
    [24, "route", "keyword.control.route.tenx"],
    [24, "by", "keyword.control.by.tenx"],
    [24, "verdict", "variable.other.field.tenx"],
    [25, "END", "constant.language.end.tenx"],
    [26, "when", "keyword.control.when.tenx"],
    [26, "<", "keyword.operator.comparison.tenx"],
    [26, "and", "keyword.operator.logical.tenx"],
    [26, "not", "keyword.operator.logical.tenx"],
    [26, "done", "variable.other.field.tenx"],
    [26, "support", "variable.other.node.tenx"],
    [27, "else", "keyword.control.else.tenx"],
    [29, "parallel", "keyword.control.fork.tenx"],
    [29, "support", "variable.other.node.tenx"],
  ];
  for (const [line, text, scope] of expected) {
    const token = tokens.find((t) => t.line === line && t.text === text);
    if (!token) {
      const onLine = tokens.filter((t) => t.line === line).map((t) => JSON.stringify(t.text));
      failures.push(`snapshot:${line}: no token ${JSON.stringify(text)} (tokens: ${onLine.join(" ")})`);
    } else if (token.scopes.at(-1) !== scope) {
      fail(unit, token, `expected innermost scope ${scope}`);
    }
  }
  // And an invalid construct is flagged: `=>` for `->`, and single quotes.
  const bad = tokenize(grammar, "graph g {\n  a => b\n  x = 'no'\n}");
  for (const text of ["=>", "'no'"]) {
    const token = bad.find((t) => t.text === text);
    if (!token || !token.scopes.at(-1).startsWith("invalid.")) {
      failures.push(`snapshot: ${JSON.stringify(text)} is not scoped invalid: ${JSON.stringify(token?.scopes)}`);
    }
  }
  return expected.length + 2;
}

const grammar = await loadGrammar();
let files = 0;
let tokens = 0;
const units = corpus();
for (const unit of units) {
  files++;
  for (const token of tokenize(grammar, unit.source)) {
    if (token.text.trim() === "") continue;
    tokens++;
    if (meaningful(token.scopes).length === 0) fail(unit, token, "no scope beyond source.tenx");
    else if (token.scopes.some((s) => s.startsWith("invalid"))) fail(unit, token, "invalid scope on valid code");
  }
}
const snapshots = checkSnapshot(grammar);
const docBlocks = units.filter((u) => u.name === join("docs", "language.md")).length;
const catalogBlocks = units.filter((u) => u.name.startsWith(join("compiler", "diagnostics"))).length;
console.log(
  `grammar: ${files} units (${files - docBlocks - catalogBlocks} files, ${docBlocks} docs/language.md blocks, ` +
    `${catalogBlocks} catalog blocks), ${tokens} tokens, ${snapshots} exact-scope checks`,
);
if (failures.length > 0) {
  for (const failure of failures.slice(0, 50)) console.error(failure);
  if (failures.length > 50) console.error(`... and ${failures.length - 50} more`);
  console.error(`grammar: ${failures.length} violations`);
  process.exit(1);
}
console.log("grammar: ok");
