// Tests how the client turns the `tenx.server.*` settings into the command it starts: it loads
// extension.js with the `vscode-languageclient` it ships and a stand-in for the `vscode` module
// (which exists only inside the editor), then reads `serverCommand()` under several settings.
"use strict";

const assert = require("node:assert/strict");
const Module = require("node:module");
const os = require("node:os");
const path = require("node:path");

let settings = {};
let folders = [];
// Any API the client library touches while loading: a function, a class and an object at once.
const anything = new Proxy(function () {}, {
  get: (_, key) => (key === "prototype" ? {} : anything),
  construct: () => ({}),
  apply: () => anything,
});
const workspace = {
  getConfiguration: (section) => {
    assert.equal(section, "tenx");
    return { get: (key) => settings[key] };
  },
  get workspaceFolders() {
    return folders;
  },
};
const vscode = new Proxy({ workspace }, { get: (target, key) => (key in target ? target[key] : anything) });
const load = Module._load;
Module._load = function (request, ...rest) {
  return request === "vscode" ? vscode : load.call(this, request, ...rest);
};

const { activate, deactivate, serverCommand } = require("../extension.js");
assert.equal(typeof activate, "function");
assert.equal(typeof deactivate, "function");

const cases = [
  [{}, [], { command: "tenxc", args: ["lsp"] }],
  [{ "server.path": "  /opt/tenx/bin/tenxc " }, [], { command: "/opt/tenx/bin/tenxc", args: ["lsp"] }],
  [{ "server.path": "${workspaceFolder}/target/debug/tenxc" }, ["/proj"], { command: "/proj/target/debug/tenxc", args: ["lsp"] }],
  [{ "server.path": "target/debug/tenxc" }, ["/proj"], { command: path.join("/proj", "target/debug/tenxc"), args: ["lsp"] }],
  [{ "server.path": "tenxc-nightly" }, ["/proj"], { command: "tenxc-nightly", args: ["lsp"] }],
  [{ "server.path": "~/bin/tenxc" }, [], { command: path.join(os.homedir(), "bin/tenxc"), args: ["lsp"] }],
  [{ "server.extraArgs": ["--log", 3] }, [], { command: "tenxc", args: ["lsp", "--log", "3"] }],
  [{ "server.path": "", "server.extraArgs": "not a list" }, [], { command: "tenxc", args: ["lsp"] }],
];
for (const [given, roots, expected] of cases) {
  settings = given;
  folders = roots.map((fsPath) => ({ uri: { fsPath } }));
  assert.deepEqual(serverCommand(), expected, `settings ${JSON.stringify(given)}`);
}
console.log(`client: ${cases.length} server command cases ok`);
