// The rooms' arrows (docs/design.md): cli -> runner -> stages -> pipeline services, all downward.
// Every import under pipeline/ and stages/ is read with TypeScript's scanner and checked: no import
// upward, and no file or folder (pipeline/runner.ts counts with pipeline/runner/) reaching itself.
// Files over ~400 lines are listed, as a warning only.
import { describe, expect, it } from "vitest";
import {
  backArrows,
  folderCycles,
  type ImportGraph,
  importCycles,
  readGraph,
} from "./support/import-graph.js";

const LONG_FILE = 400;

describe("the import graph of pipeline/ and stages/", () => {
  const { graph, unresolved, lines } = readGraph();

  it("reads every file and resolves every relative import", () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get("pipeline/runner.ts")).toContain("pipeline/stage.ts");
    expect(unresolved).toEqual([]);
    // files over ~400 lines are only listed while they are being split: a warning, not a failure
    expect(lines.size).toBe(graph.size);
    const long = [...lines].filter(([, n]) => n > LONG_FILE).map(([file, n]) => `${file} (${n} lines)`);
    if (long.length > 0)
      console.warn(`files over ${LONG_FILE} lines, asking to be split:\n  ${long.join("\n  ")}`);
  });

  it("has every arrow pointing down: cli -> runner -> stages -> pipeline services", () => {
    expect(backArrows(graph)).toEqual([]);
  });

  it("has no import cycle", () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it("has no cycle between folders: the shared piece lives in the lower one", () => {
    expect(folderCycles(graph)).toEqual([]);
  });

  it("lets a stage reach the sandbox only through pipeline/execution/, types included", () => {
    const direct = [...graph].flatMap(([file, imports]) =>
      file.startsWith("stages/")
        ? imports.filter((to) => to.startsWith("pipeline/sandbox/")).map((to) => `${file} -> ${to}`)
        : [],
    );
    expect(direct).toEqual([]);
    // the graph holds type-only imports too: the check would see one
    expect(graph.get("stages/validate/validate-dialogue.ts")).toContain("pipeline/execution/index.ts");
  });
});

describe("the checks themselves", () => {
  it("catch an arrow up from a service into a stage, the runner or the CLI", () => {
    const graph: ImportGraph = new Map([
      ["pipeline/report/collect.ts", ["stages/index.ts", "pipeline/runner.ts", "pipeline/cli/report.ts"]],
      ["stages/export.ts", ["pipeline/runner/switch.ts", "pipeline/dialogue.ts"]],
      ["pipeline/runner.ts", ["pipeline/cli.ts", "pipeline/stage.ts"]],
      ["pipeline/cli.ts", ["stages/index.ts", "pipeline/runner.ts"]],
    ]);
    expect(backArrows(graph)).toEqual([
      "pipeline/report/collect.ts -> stages/index.ts (services -> stages)",
      "pipeline/report/collect.ts -> pipeline/runner.ts (services -> runner)",
      "pipeline/report/collect.ts -> pipeline/cli/report.ts (services -> cli)",
      "stages/export.ts -> pipeline/runner/switch.ts (stages -> runner)",
      "pipeline/runner.ts -> pipeline/cli.ts (runner -> cli)",
    ]);
  });

  it("catch a back arrow between folders, which no file cycle shows", () => {
    const graph: ImportGraph = new Map([
      ["pipeline/random.ts", ["pipeline/dedup/hash.ts"]],
      ["pipeline/dedup/hash.ts", []],
      ["pipeline/dedup/minhash.ts", ["pipeline/random.ts", "pipeline/dedup/hash.ts"]],
      ["pipeline/runner.ts", ["pipeline/runner/status.ts"]],
      ["pipeline/runner/status.ts", ["pipeline/stage.ts"]],
      ["pipeline/llm/embedded/engine.ts", ["pipeline/llm/cache.ts"]],
      ["pipeline/llm/cache.ts", []],
    ]);
    expect(importCycles(graph)).toEqual([]);
    expect(folderCycles(graph)).toEqual([
      "pipeline/dedup -> pipeline/random -> pipeline/dedup " +
        "(pipeline/dedup/minhash.ts -> pipeline/random.ts; pipeline/random.ts -> pipeline/dedup/hash.ts)",
    ]);
    expect(folderCycles(new Map([["pipeline/dedup/minhash.ts", ["pipeline/random.ts"]]]))).toEqual([]);
  });

  it("catch a circle, however long, and a file importing itself", () => {
    const graph: ImportGraph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts", "d.ts"]],
      ["d.ts", []],
      ["e.ts", ["e.ts"]],
    ]);
    expect(importCycles(graph).sort()).toEqual(["a.ts -> b.ts -> c.ts -> a.ts", "e.ts -> e.ts"]);
    expect(
      importCycles(
        new Map([
          ["a.ts", ["b.ts"]],
          ["b.ts", []],
        ]),
      ),
    ).toEqual([]);
  });
});
