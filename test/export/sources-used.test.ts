import { describe, expect, it } from "vitest";
import type { PipelineRecord } from "../../pipeline/record.js";
import { sourcesUsed } from "../../stages/export/rows.js";

// Download commits its files in the order they finish, so the same run twice may list them in
// another order; the card's source table and citations must not follow it.
describe("sourcesUsed", () => {
  const files: PipelineRecord[] = [
    { id: "wizardcoder:a.json", source: "wizardcoder", repo: "org/evol", revision: "main", commit: "c2" },
    { id: "magicoder:b.parquet", source: "magicoder", repo: "org/oss", revision: "main", commit: "c1" },
  ];
  const instructions = [
    { key: "magicoder:1", origin: {} },
    { key: "wizardcoder:7", origin: {} },
    { key: "wizardcoder:8", origin: {} },
  ] as never;
  const run = (order: PipelineRecord[]) =>
    sourcesUsed(
      {
        read: async function* () {
          yield* order;
        },
      } as never,
      instructions,
      [],
    );

  it("lists the sources by name, whatever order download finished its files in", async () => {
    const one = await run(files);
    const other = await run([...files].reverse());
    expect(one.map((s) => s.name)).toEqual(["magicoder", "wizardcoder"]);
    expect(other).toEqual(one);
    expect(one.find((s) => s.name === "wizardcoder")).toMatchObject({
      repo: "org/evol",
      rows: 2,
      commits: ["c2"],
    });
  });
});
