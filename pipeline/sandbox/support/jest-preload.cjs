// Loaded into the node that runs SandboxFusion's `jest` (NODE_OPTIONS --require, languages.ts).
// Debian's jest builds its module dirs from Debian's node build variables (prefix + relative path),
// and crashes at load on a node built elsewhere, which lacks the second; a node without it gets the
// pair Debian's node has, so jest finds Debian's modules under /usr.
"use strict";
const built = process.config;
if (built.variables.node_relative_path === undefined) {
  const variables = {
    ...built.variables,
    node_prefix: "/usr",
    node_relative_path: "share/nodejs:lib/nodejs",
  };
  const config = Object.freeze({ ...built, variables: Object.freeze(variables) });
  Object.defineProperty(process, "config", { value: config, enumerable: true, configurable: true });
}
