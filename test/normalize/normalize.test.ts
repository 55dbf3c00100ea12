import { existsSync, statSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { rootConfigSchema } from "../../pipeline/config/schema.js";
import { silentLogger } from "../../pipeline/log.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import { StageRegistry } from "../../pipeline/registry.js";
import type { StageContext } from "../../pipeline/stage.js";
import { UsageMeter } from "../../pipeline/usage.js";
import type { DownloadedFileRecord } from "../../stages/download.js";
import {
  type NormalizeConfig,
  normalizeConfigSchema,
  normalizeRow,
  normalizeStage,
} from "../../stages/normalize.js";
import { adaptChat, adaptColumns } from "../../stages/sources/adapter.js";
import { seedLanguage } from "../../stages/sources/language.js";
import { PAPER_MAPPINGS } from "../../stages/sources/source.js";
import { tempDir } from "../support/temp-dir.js";

const dir = tempDir("normalize-");

/** A paper source's mapping applied to one row, as normalize applies it. */
function paperAdapt(name: keyof typeof PAPER_MAPPINGS, row: unknown, index: number) {
  const mapping = PAPER_MAPPINGS[name]!;
  const adapted = mapping.columns
    ? adaptColumns(row, index, mapping.columns)
    : adaptChat(row, index, mapping.chat!);
  return adapted.rejects[0] ?? adapted.pairs[0];
}

describe("the paper's sources as mappings", () => {
  it("map each source's row format to a query/answer pair", () => {
    expect(
      paperAdapt(
        "magicoder",
        { lang: "C++", index: 7, problem: "P", solution: "S", seed: "x", raw_index: 1 },
        0,
      ),
    ).toEqual({ query: "P", answer: "S", declaredLang: "C++", rowId: "7" });
    expect(paperAdapt("wizardcoder", { instruction: "Q", response: "A" }, 0)).toEqual({
      query: "Q",
      answer: "A",
    });
    expect(paperAdapt("evolinstruct", { instruction: "Q", output: "A" }, 0)).toEqual({
      query: "Q",
      answer: "A",
    });
    const conversation = {
      id: "12",
      conversations: [
        { from: "system", value: "be brief" },
        { from: "human", value: "first question" },
        { from: "gpt", value: "first answer" },
        { from: "human", value: "follow-up" },
        { from: "gpt", value: "second answer" },
      ],
    };
    expect(paperAdapt("sharegpt", conversation, 3)).toEqual({
      query: "first question",
      answer: "first answer",
      rowId: "12",
    });
  });

  it("refuse rows that cannot be a seed pair, each with its own reason", () => {
    const reason = (adapter: keyof typeof PAPER_MAPPINGS, row: unknown) => {
      const result = paperAdapt(adapter, row, 5);
      return result && "reject" in result ? result.reject : "ok";
    };
    expect(reason("wizardcoder", { instruction: "Q" })).toBe("missing-field");
    expect(reason("wizardcoder", { instruction: "Q", response: null })).toBe("missing-field");
    expect(reason("wizardcoder", { instruction: 3, response: "A" })).toBe("non-string-field");
    expect(reason("evolinstruct", { instruction: "  \n", output: "A" })).toBe("empty-query");
    expect(reason("evolinstruct", { instruction: "Q", output: "" })).toBe("empty-answer");
    expect(reason("magicoder", ["problem", "solution"])).toBe("not-an-object");
    expect(reason("magicoder", "text")).toBe("not-an-object");
    expect(reason("sharegpt", { conversations: [{ from: "human", value: "only a question" }] })).toBe(
      "no-user-assistant-pair",
    );
    expect(reason("sharegpt", { conversations: "nope" })).toBe("not-a-list");
    expect(reason("sharegpt", { id: "1" })).toBe("missing-field");
    expect(
      reason("sharegpt", {
        conversations: [
          { from: "human", value: "q" },
          { from: "gpt", value: 42 },
        ],
      }),
    ).toBe("non-string-content");
  });
});

describe("seed language", () => {
  it("trusts the dataset's own field first, in canonical spelling", () => {
    expect(seedLanguage("```python\nprint(1)\n```", "C++")).toBe("cpp");
    expect(seedLanguage("no code", "Shell")).toBe("shell");
  });

  it("takes the language with the most code under its fence tag", () => {
    const answer =
      "```js\nlet a = 1;\n```\nand in SQL:\n```sql\nSELECT a, b, c, d, e FROM t WHERE x > 1 ORDER BY a;\n```";
    expect(seedLanguage(answer)).toBe("sql");
    expect(seedLanguage("```golang\nfunc main() {}\n```")).toBe("go");
  });

  it("falls back to the syntax of untagged code, then to unknown", () => {
    const untagged = "Here:\n```\ndef add(a, b):\n    return a + b\n\nprint(add(1, 2))\n```";
    expect(seedLanguage(untagged)).toBe("python");
    expect(seedLanguage("It depends on what you want to achieve; tell me more.")).toBe("unknown");
  });

  it("reads fence tags only where a line starts, indented, with tildes or after CRLF", () => {
    const prose = "Some words about the task.\n".repeat(50);
    expect(seedLanguage(`Use \`\`\`rust\`\`\` inline, then:\n${prose}  ~~~ruby\nputs 1\n~~~\n`)).toBe("ruby");
    expect(seedLanguage("```go\r\nfunc main() {}\r\n```\r\n")).toBe("go");
    // two tags: the one with more code wins, the indented one included
    const two = "Two ways:\n  ```js\n  let a = 1; let b = 2; let c = 3;\n  ```\n```sql\nSELECT 1;\n```";
    expect(seedLanguage(`${prose}${two}`)).toBe("javascript");
  });
});

describe("normalizeRow", () => {
  const base = {
    id: "wizardcoder:000004",
    source: "wizardcoder",
    resource: "wizardcoder",
    mapping: { columns: PAPER_MAPPINGS.wizardcoder!.columns! },
    repo: "o/n",
    file: "f.jsonl",
    commit: "c",
  };

  it("makes a seed record with resource, canonical language and origin", () => {
    const outcome = normalizeRow({
      ...base,
      row: { index: 4, value: { instruction: "Sort it", response: "```rust\nv.sort();\n```" } },
    });
    expect(outcome.out).toEqual([
      {
        id: "wizardcoder:000004",
        query: "Sort it",
        answer: "```rust\nv.sort();\n```",
        resource: "wizardcoder",
        lang: "rust",
        origin: { repo: "o/n", file: "f.jsonl", row: 4, commit: "c" },
      },
    ]);
  });

  it("turns a reader's row error into a reject with the same reason", () => {
    const outcome = normalizeRow({
      ...base,
      row: { index: 9, error: { reason: "invalid-utf8", detail: "row 9 is not valid UTF-8", prefix: "{" } },
    });
    expect(outcome.out).toBeUndefined();
    expect(outcome.rejects).toEqual([
      {
        id: "wizardcoder:000004",
        reason: "invalid-utf8",
        detail: "wizardcoder, f.jsonl: row 9 is not valid UTF-8",
        record: "{",
      },
    ]);
  });
});

/** A StageContext good enough for normalize's input: `read("download")` yields the given file records. */
function contextFor(files: DownloadedFileRecord[], config: Partial<NormalizeConfig>, limit?: number) {
  const ctx: StageContext<NormalizeConfig> = {
    name: "normalize",
    config: normalizeConfigSchema.parse(config),
    root: rootConfigSchema.parse({}),
    dataDir: dir,
    workDir: path.join(dir, "normalize", "work"),
    limit,
    signal: new AbortController().signal,
    log: silentLogger,
    services: {} as StageContext<NormalizeConfig>["services"],
    usage: new UsageMeter(),
    async *read(stage: string) {
      if (stage === "download") yield* files;
    },
    sample: () => {
      throw new Error("normalize takes no sample");
    },
    countOf: () => undefined,
    registry: new StageRegistry([]),
    stat: () => undefined,
  };
  return ctx;
}

function fileRecord(
  source: string,
  adapter: string,
  name: string,
  sourceIndex: number,
  fileIndex: number,
): DownloadedFileRecord {
  return {
    id: `o/${source}/${name}`,
    source,
    adapter: adapter as DownloadedFileRecord["adapter"],
    repo: `o/${source}`,
    path: name,
    revision: "main",
    commit: "c".repeat(40),
    size: existsSync(path.join(dir, name)) ? statSync(path.join(dir, name)).size : 0,
    etag: "e",
    local_path: name,
    source_index: sourceIndex,
    file_index: fileIndex,
  };
}

async function inputIds(ctx: StageContext<NormalizeConfig>): Promise<string[]> {
  const ids: string[] = [];
  for await (const record of normalizeStage.kind === "record" ? normalizeStage.input!(ctx, undefined) : []) {
    ids.push((record as PipelineRecord).id);
  }
  return ids;
}

describe("normalize input", () => {
  it("streams sources in config order and files in listing order, numbering rows per source", async () => {
    await writeFile(
      path.join(dir, "a1.jsonl"),
      '{"instruction":"q1","output":"a"}\n{"instruction":"q2","output":"a"}\n',
    );
    await writeFile(path.join(dir, "a2.json"), '[{"instruction":"q3","output":"a"}]');
    await writeFile(path.join(dir, "b.jsonl"), '{"instruction":"x","response":"y"}\n');
    await writeFile(path.join(dir, "taco.parquet"), "not read");
    const files = [
      fileRecord("beta", "wizardcoder", "b.jsonl", 1, 0),
      fileRecord("taco", "none", "taco.parquet", 2, 0),
      fileRecord("alpha", "evolinstruct", "a2.json", 0, 1),
      fileRecord("alpha", "evolinstruct", "a1.jsonl", 0, 0),
    ];
    expect(await inputIds(contextFor(files, {}))).toEqual([
      "alpha:000000",
      "alpha:000001",
      "alpha:000002",
      "beta:000000",
    ]);
    // --limit takes the first N rows of each source, across its files
    expect(await inputIds(contextFor(files, {}, 2))).toEqual(["alpha:000000", "alpha:000001", "beta:000000"]);
    expect(await inputIds(contextFor(files, { sources: ["beta"] }))).toEqual(["beta:000000"]);
  });

  it("stops with advice when a downloaded file went missing or changed size since download", async () => {
    await writeFile(path.join(dir, "moving.jsonl"), '{"instruction":"q","output":"a"}\n');
    const record = fileRecord("alpha", "evolinstruct", "moving.jsonl", 0, 0);
    await writeFile(
      path.join(dir, "moving.jsonl"),
      '{"instruction":"q","output":"a"}\n{"instruction":"r","output":"b"}\n',
    );
    await expect(inputIds(contextFor([record], {}))).rejects.toThrow(
      /not the 33 download verified.*download --force/,
    );
    await rm(path.join(dir, "moving.jsonl"));
    await expect(inputIds(contextFor([record], {}))).rejects.toThrow(/moving\.jsonl.*is missing/);
  });

  it("rejects a 10 MB row without holding it, and keeps the rows around it", async () => {
    const huge = JSON.stringify({ instruction: "q", output: "x".repeat(10 * 1024 * 1024) });
    await writeFile(
      path.join(dir, "big.jsonl"),
      `{"instruction":"before","output":"a"}\n${huge}\n{"instruction":"after","output":"b"}\n{"instruction":"bad"\n`,
    );
    const ctx = contextFor([fileRecord("alpha", "evolinstruct", "big.jsonl", 0, 0)], {});
    const outcomes = [];
    for await (const record of normalizeStage.kind === "record"
      ? normalizeStage.input!(ctx, undefined)
      : []) {
      outcomes.push(normalizeRow(record as Parameters<typeof normalizeRow>[0]));
    }
    expect(outcomes.map((o) => o.out?.[0]?.query ?? o.rejects?.[0]?.reason)).toEqual([
      "before",
      "row-too-large",
      "after",
      "malformed-json",
    ]);
    expect(JSON.stringify(outcomes[1]).length).toBeLessThan(2000);
  });
});
