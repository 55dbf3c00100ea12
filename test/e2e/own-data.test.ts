// Your own data through the whole CLI: local files by glob (JSONL and gzipped JSONL) read by a column
// mapping with nested paths, a directory of Parquet files, and chat files in both shapes, each with
// `turns: first` and `each`, run from download to export with no dialogue method; then the mistakes
// that stop a run, and a local file changed after download, which makes download stale.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { parquetTable } from "../sources/sample-parquet.js";
import { runCli } from "../support/cli.js";
import { type LlmServer, startLlmServer } from "../support/llm-server.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";

const dir = tempDir("cf-own-data-");
const src = join(dir, "src");
const dataDir = join(dir, "data");

const task = (n: number, topic: string) =>
  `Task ${n}: write a function that ${topic}, explain each step, and show an example call with its output.`;
const code = (body: string) => `Here it is:\n\`\`\`python\n${body}\n\`\`\`\n`;

function writeSources(): void {
  mkdirSync(join(src, "cols", "more"), { recursive: true });
  mkdirSync(join(src, "chat"), { recursive: true });
  const rows = [
    {
      uid: "u1",
      meta: { language: "Rust" },
      pair: [{ text: task(1, "sums a list") }, { text: "fn sum() {}" }],
    },
    { uid: 2, meta: {}, pair: [{ text: task(2, "reverses a string") }, { text: code("print('ab'[::-1])") }] },
    { uid: "u3", meta: { language: "go" }, pair: [{ text: task(3, "counts vowels") }] },
    "not a row",
  ];
  writeFileSync(join(src, "cols", "a.jsonl"), `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`);
  const gz = {
    uid: "u5",
    meta: { language: "python" },
    pair: [{ text: task(5, "merges two dicts") }, { text: code("a | b") }],
  };
  writeFileSync(join(src, "cols", "more", "b.jsonl.gz"), gzipSync(`${JSON.stringify(gz)}\n`));
  writeFileSync(join(src, "cols", "notes.txt"), "not data");
  const openai = [
    {
      messages: [
        { role: "system", content: "You are a helpful assistant." },
        { role: "user", content: task(10, "parses a date") },
        { role: "assistant", content: code("from datetime import date") },
        { role: "user", content: task(11, "formats that date as ISO 8601") },
        { role: "assistant", content: code("print(date.today().isoformat())") },
      ],
    },
    {
      messages: [
        { role: "user", content: task(12, "never gets an answer") },
        { role: "user", content: "hello?" },
      ],
    },
    { messages: [{ role: "user", content: 42 }] },
  ];
  writeFileSync(join(src, "chat", "openai.json"), JSON.stringify(openai));
  const sharegpt = [
    {
      id: "sg-1",
      conversations: [
        { from: "human", value: task(20, "checks for a palindrome") },
        { from: "gpt", value: code("print(s == s[::-1])") },
        { from: "human", value: task(21, "ignores case") },
        { from: "gpt", value: code("print(s.lower() == s.lower()[::-1])") },
      ],
    },
    { id: "sg-2", conversations: [{ from: "gpt", value: "hi" }, { value: "no role" }] },
  ];
  mkdirSync(join(src, "pq"), { recursive: true });
  const table = [
    {
      prompt: "Write a SQL query that lists every customer with more than three orders, newest first.",
      response: "```sql\nSELECT customer_id FROM orders GROUP BY customer_id HAVING COUNT(*) > 3;\n```",
      lang: "sql",
    },
    {
      prompt: "Print the numbers from one to five, each on its own line, using a for loop in Python.",
      response: code("for i in range(1, 6):\n    print(i)"),
      lang: null,
    },
  ];
  writeFileSync(
    join(src, "pq", "part-0.parquet"),
    parquetTable(table, [
      ["prompt", "string"],
      ["response", "string"],
      ["lang", "string"],
    ]),
  );
  writeFileSync(
    join(src, "chat", "sharegpt.jsonl"),
    `${sharegpt.map((r) => JSON.stringify(r)).join("\n")}\n`,
  );
}

function config(sources: string): string {
  const file = join(dir, `config-${Math.random().toString(36).slice(2)}.yaml`);
  const text = [
    "hub: { endpoint: 'file:data/sample' }",
    "llm: { scorer: { provider: openai } }",
    "stages:",
    "  pack: { enabled: false }",
    "  simulate: { enabled: false }",
    "  correct: { enabled: false }",
    "  leetcode: { enabled: false }",
    "  download:",
    "    sources:",
    sources,
    "",
  ].join("\n");
  writeFileSync(file, text);
  // the last one written, for `status` on the same configuration
  writeFileSync(join(dir, "last.yaml"), text);
  return file;
}

const OWN = [
  `      - name: cols`,
  `        adapter: columns`,
  `        path: '${src}/cols/**/*.jsonl*'`,
  `        columns: { query: pair.0.text, answer: pair.1.text, lang: meta.language, id: uid }`,
  `      - { name: talk, adapter: chat, path: '${src}/chat/openai.json', chat: { turns: each } }`,
  `      - { name: sg, adapter: chat, path: '${src}/chat/sharegpt.jsonl', chat: { id: id } }`,
  // the same dialogues the other way round: their pairs already read are duplicates for dedup
  `      - { name: talkfirst, adapter: chat, path: '${src}/chat/openai.json' }`,
  `      - { name: sgeach, adapter: chat, path: '${src}/chat/sharegpt.jsonl', chat: { turns: each } }`,
  // a directory of Parquet files
  `      - { name: pq, adapter: columns, path: '${src}/pq', columns: { query: prompt, answer: response, lang: lang } }`,
].join("\n");

async function outputs(stage: string, rejects = false): Promise<Record<string, unknown>[]> {
  return (await collect(new StageStore(dataDir, stage).read({ rejects }))) as Record<string, unknown>[];
}

describe("own data through export", () => {
  let server: LlmServer;
  const env = () => ({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "k" });

  beforeAll(async () => {
    writeSources();
    // every query rated 5, so every seed pair reaches the release
    server = await startLlmServer({ latencyMs: 1, fallback: () => "Score: 5\n\nA multi-step task." });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("reads columns by nested paths, chat in both shapes, local files by glob, and releases them", async () => {
    const run = await runCli(["run", "export", "--config", config(OWN), "--data-dir", dataDir], {
      env: env(),
    });
    expect(run.code, run.stderr).toBe(0);

    const seeds = await outputs("normalize");
    const byId = Object.fromEntries(seeds.map((s) => [s.id, s]));
    expect(Object.keys(byId).sort()).toEqual([
      "cols:000000",
      "cols:000001",
      "cols:000004",
      "pq:000000",
      "pq:000001",
      "sg:000000",
      "sgeach:000000.1",
      "sgeach:000000.2",
      "talk:000000.1",
      "talk:000000.2",
      "talkfirst:000000",
    ]);
    expect(byId["talkfirst:000000"]).toMatchObject({ query: task(10, "parses a date") });
    expect(byId["sgeach:000000.2"]).toMatchObject({ query: task(21, "ignores case"), origin: { pair: 2 } });
    expect(byId["pq:000001"]).toMatchObject({
      query: "Print the numbers from one to five, each on its own line, using a for loop in Python.",
      lang: "python",
      origin: { file: `${src}/pq/part-0.parquet`, row: 1 },
    });
    expect(byId["cols:000000"]).toMatchObject({
      query: task(1, "sums a list"),
      resource: "cols",
      lang: "rust",
    });
    expect(byId["cols:000000"]!.origin).toMatchObject({ file: `${src}/cols/a.jsonl`, row: 0, row_id: "u1" });
    expect((byId["cols:000000"]!.origin as { sha256: string }).sha256).toMatch(/^[0-9a-f]{64}$/);
    // no language in the row: detected from the answer's code
    expect(byId["cols:000001"]).toMatchObject({ lang: "python", origin: { row_id: "2" } });
    expect(byId["cols:000004"]).toMatchObject({
      lang: "python",
      origin: { file: `${src}/cols/more/b.jsonl.gz` },
    });
    expect(byId["talk:000000.2"]).toMatchObject({
      query: task(11, "formats that date as ISO 8601"),
      origin: { row: 0, pair: 2 },
    });
    expect(byId["sg:000000"]).toMatchObject({
      query: task(20, "checks for a palindrome"),
      origin: { row_id: "sg-1" },
    });

    const rejects = Object.fromEntries((await outputs("normalize", true)).map((r) => [r.id, r]));
    expect(rejects["cols:000002"]).toMatchObject({ reason: "missing-field" });
    expect(rejects["cols:000002"]!.detail).toBe(`cols, ${src}/cols/a.jsonl: row 2 has no \`pair.1.text\``);
    expect(rejects["cols:000003"]).toMatchObject({ reason: "not-an-object" });
    expect(rejects["talk:000001"]).toMatchObject({ reason: "not-alternating" });
    expect(rejects["talk:000002"]).toMatchObject({ reason: "non-string-content" });
    expect(rejects["sg:000001"]).toMatchObject({ reason: "turn-without-role" });
    const summary = new StageStore(dataDir, "normalize").manifest()!.stats as { rejected: object };
    expect(summary.rejected).toEqual({
      "missing-field": 1,
      "not-an-object": 1,
      "not-alternating": 2,
      "non-string-content": 2,
      "turn-without-role": 2,
    });

    const released = readFileSync(join(dataDir, "export", "filtered-instruction.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { query: string; resource: string });
    expect(released.map((r) => r.resource).sort()).toEqual([
      "cols",
      "cols",
      "cols",
      "pq",
      "pq",
      "sg",
      "sgeach",
      "talk",
      "talk",
    ]);

    const card = readFileSync(join(dataDir, "export", "README.md"), "utf8");
    expect(card).toMatch(
      new RegExp(
        `\\| cols \\| local \`${src}/cols/\\*\\*/\\*\\.jsonl\\*\` \\| sha256 \`[0-9a-f]{12}\` \\| columns \\| 3 \\|`,
      ),
    );
    expect(card).toMatch(/\| talk \| local `.*openai\.json` \| sha256 `[0-9a-f]{12}` \| chat \| 2 \|/);
    expect(card).not.toContain("huggingface.co/datasets/local");
    const status = await runCli(["status", "--config", join(dir, "last.yaml"), "--data-dir", dataDir], {
      env: env(),
    });
    expect(status.stdout).toMatch(
      /source cols: .*cols\/\*\*\/\*\.jsonl\* \(sha256 [0-9a-f]{12}\), adapter columns, 2 files, 3 seed pairs/,
    );
    expect(status.stdout).toMatch(
      /source sg: .*sharegpt\.jsonl \(sha256 [0-9a-f]{12}\), adapter chat, 1 file, 1 seed pairs/,
    );

    const download = new StageStore(dataDir, "download").manifest()!;
    const stats = (
      download as unknown as {
        stats: { sources: Record<string, { path: string; fingerprint: string; files: number }> };
      }
    ).stats;
    expect(stats.sources.cols).toMatchObject({ path: `${src}/cols/**/*.jsonl*`, files: 2 });
    expect(stats.sources.cols!.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it("makes download stale when a local file changes, and the rerun reads only the new version", async () => {
    const file = join(src, "chat", "sharegpt.jsonl");
    const extra = {
      id: "sg-3",
      conversations: [
        { from: "human", value: task(30, "adds") },
        { from: "gpt", value: "x" },
      ],
    };
    writeFileSync(file, `${readFileSync(file, "utf8")}${JSON.stringify(extra)}\n`);
    const cfg = config(OWN);
    const status = await runCli(["status", "--config", cfg, "--data-dir", dataDir], { env: env() });
    // the file that changed, named where status says why download is stale (not "its configuration changed")
    expect(status.stdout).toMatch(/download +stale \(source file changed: /);
    expect(status.stdout).not.toContain("its configuration changed");
    const detail = await runCli(["status", "--stage", "download", "--config", cfg, "--data-dir", dataDir], {
      env: env(),
    });
    expect(detail.stdout).toContain(
      `reason:  source file changed: ${file} (source sg); a run reads it again`,
    );
    const run = await runCli(["run", "normalize", "--config", cfg, "--data-dir", dataDir], { env: env() });
    expect(run.code, run.stderr).toBe(0);
    const ids = (await outputs("normalize")).map((s) => s.id as string).filter((id) => id.startsWith("sg:"));
    expect(ids.sort()).toEqual(["sg:000000", "sg:000002"]);
  });

  it("stops with exit 2 naming the source and the key", async () => {
    const none = config(`      - { name: ghost, adapter: chat, path: '${src}/nothing/*.jsonl' }`);
    const run = await runCli(["run", "download", "--config", none, "--data-dir", join(dir, "d2")], {
      env: env(),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/source ghost: `path` .*nothing.* matches no/);
    const both = config(`      - { name: twice, adapter: chat, repo: o/n, files: [a.json], path: x.json }`);
    const bad = await runCli(["run", "download", "--config", both, "--data-dir", join(dir, "d3")], {
      env: env(),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/sources\.0\.path.*source twice: `repo` and `path` together/);
  });
});
