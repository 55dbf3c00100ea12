// What a reviewer waits for on a large stage, through the review app's HTTP API: opening a record
// and applying a filter (fields, a sort, a text search), each against a plain read of that record's
// line; also the index's first build against one streaming read of the stage, and the app's memory.
//
//   pnpm bench review [-- --records 500000 --runs 20]
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ReviewApp } from "../../pipeline/review/app.js";
import { serveReview } from "../../pipeline/review/server.js";
import { readEntries } from "../../pipeline/store/parts.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { numberArg } from "../args.js";
import { upperMedian } from "../median.js";

const records = numberArg("records", 500_000);
const runs = numberArg("runs", 20);
const dir = mkdtempSync(join(tmpdir(), "cf-bench-review-"));
const LANGS = ["python", "python", "python", "javascript", "java", "go", "cpp", "sql", "rust", "shell"];
const OUTCOMES = ["passed", "passed", "passed", "failed", "not-runnable", "timeout"];
const METHODS = [
  "single-turn-packing",
  "interaction-simulation",
  "code-correction",
  "leetcode-similar-problem",
];

/** A validated dialogue of two to four turns, about 1 KB, as validate writes one. */
function dialogue(n: number) {
  const lang = LANGS[n % LANGS.length]!;
  const outcome = OUTCOMES[(n * 7) % OUTCOMES.length]!;
  const turns = 2 + (n % 3);
  const messages = [];
  for (let t = 0; t < turns; t++) {
    messages.push({
      role: "user",
      content: `Task ${n}.${t}: write a ${lang} function that folds a list of ${n % 97} numbers.`,
    });
    messages.push({
      role: "assistant",
      content: `Here it is:\n\`\`\`${lang}\ndef fold_${n}(xs):\n    total = 0\n    for x in xs:\n        total += x * ${t + 1}\n    return total\n\`\`\``,
    });
  }
  return {
    id: `sim-${n.toString(16).padStart(12, "0")}`,
    messages,
    method: METHODS[n % METHODS.length]!,
    sources: [`magicoder:${String(n).padStart(6, "0")}`],
    lang,
    meta: {
      validation: {
        outcome,
        blocks: [{ message: 1, block: 0, lang, outcome, time_s: 0.012, harness: "as-is" }],
        gates: n % 11 === 0 ? [{ rule: "silent-failure", message: 1, detail: "fails quietly" }] : [],
      },
    },
  };
}

const ms = (start: number) => performance.now() - start;

try {
  const store = new StageStore(dir, "validate");
  const writer = store.newPart();
  for (let n = 0; n < records; n++) {
    if (n % 10 === 9)
      writer.append({ s: n, r: [{ id: dialogue(n).id, reason: "repeated-turn", record: dialogue(n) }] });
    else writer.append({ s: n, o: [dialogue(n)] });
  }
  writer.close();
  const part = store.parts()[0]!;
  const bytes = statSync(part).size;

  // the baseline's places: each output's line, found once
  const places = new Map<string, { offset: number; length: number }>();
  let place = { offset: 0, length: 0 };
  let streamed = performance.now();
  for await (const entry of readEntries(part, { onLine: (offset, length) => (place = { offset, length }) }))
    for (const record of entry.o ?? []) places.set(record.id, place);
  streamed = ms(streamed);
  const ids = [...places.keys()];
  const plainRead = (id: string) => {
    const { offset, length } = places.get(id)!;
    const fd = openSync(part, "r");
    try {
      const buffer = Buffer.allocUnsafe(length);
      readSync(fd, buffer, 0, length, offset);
      return JSON.parse(buffer.toString("utf8"));
    } finally {
      closeSync(fd);
    }
  };

  const rssBefore = process.memoryUsage().rss;
  const app = new ReviewApp(
    {
      dataDir: dir,
      stages: ["validate"],
      look: (name) => ({ name, state: "complete", parts: store.parts() }),
    },
    ["other"],
  );
  const server = await serveReview(app, { host: "127.0.0.1", port: 0, reviewer: "bench", stage: "validate" });
  const base = server.url.replace(/\/$/, "");
  const get = async (path: string) => {
    const res = await fetch(`${base}${path}`);
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  let built = performance.now();
  await get("/api/stages");
  built = ms(built);

  const filters = {
    "open a record": (i: number) => `/api/record?stage=validate&id=${ids[(i * 7919) % ids.length]}`,
    "filter language and verdict": () => "/api/list?stage=validate&lang=go&verdict=failed",
    "filter gate, sort by id, page 40": () => "/api/list?stage=validate&gate=silent-failure&sort=id&page=40",
    "filter method and source": () => "/api/list?stage=validate&method=code-correction&source=magicoder",
  };
  const times = new Map<string, number[]>(Object.keys(filters).map((k) => [k, []]));
  const plain: number[] = [];
  for (let r = 0; r < runs + 1; r++) {
    for (const [name, path] of Object.entries(filters)) {
      const start = performance.now();
      await get(path(r));
      if (r > 0) times.get(name)!.push(ms(start));
    }
    const start = performance.now();
    plainRead(ids[(r * 7919) % ids.length]!);
    if (r > 0) plain.push(ms(start));
  }
  const searched: number[] = [];
  for (let r = 0; r < 3; r++) {
    const start = performance.now();
    await get(`/api/list?stage=validate&text=${encodeURIComponent(`folds a list of ${r + 40} numbers`)}`);
    searched.push(ms(start));
  }
  const rssAfter = process.memoryUsage().rss;
  await server.close();
  app.close();

  const line = upperMedian(plain);
  console.log(
    `${records} entries (${ids.length} outputs, ${records - ids.length} rejects), ${(bytes / 2 ** 20).toFixed(0)} MiB; ` +
      `${runs} rounds, wall ms, upper median; through the app's HTTP API`,
  );
  console.log(`a plain read of one record's line (baseline): ${line.toFixed(3)} ms`);
  for (const [name, t] of times)
    console.log(
      `${name}: ${upperMedian(t).toFixed(1)} ms = ${(upperMedian(t) / line).toFixed(0)}x the baseline`,
    );
  console.log(
    `a text search (reads the stage's lines once): ${upperMedian(searched).toFixed(0)} ms; ` +
      `one streaming read of the stage: ${streamed.toFixed(0)} ms`,
  );
  console.log(
    `index the stage, once on first look: ${built.toFixed(0)} ms (${(built / streamed).toFixed(1)}x one streaming read); ` +
      `the app's RSS grew by ${((rssAfter - rssBefore) / 2 ** 20).toFixed(0)} MiB for ${(bytes / 2 ** 20).toFixed(0)} MiB of stage`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
