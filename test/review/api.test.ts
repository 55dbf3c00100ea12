// The review app's HTTP API over stages written with the store's own writer: lists with filters, sort,
// paging and text search; a record with its blocks' results and links; marks (201, 404, 400, 415)
// and nothing else written (405); stale marks; a running stage's committed records; the token off
// loopback, the Host check on it, a port in use, and a data dir with no runs.
import { appendFileSync, renameSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { UserError } from "../../pipeline/errors.js";
import { ReviewApp } from "../../pipeline/review/app.js";
import type { ReviewSource } from "../../pipeline/review/records.js";
import { type ReviewServer, serveReview } from "../../pipeline/review/server.js";
import type { Entry } from "../../pipeline/store/parts.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { tempDir } from "../support/temp-dir.js";

const REASONS = ["bug-identification", "wrong-language", "other"];
const HOSTILE =
  '<script>window.pwned=1</script><img src=x onerror="window.pwned=2"> [x](javascript:alert(1))';

function dialogue(n: number, lang: string, outcome: string, extra: Record<string, unknown> = {}) {
  return {
    id: `sim-${String(n).padStart(4, "0")}`,
    messages: [
      { role: "user", content: `task ${n} in ${lang} ${n === 3 ? HOSTILE : ""}` },
      {
        role: "assistant",
        content: `Here:\n\`\`\`${lang}\nprint(${n})\n\`\`\`\nand\n\`\`\`${lang}\nprint(${n + 1})\n\`\`\``,
      },
    ],
    method: n % 2 ? "interaction-simulation" : "code-correction",
    sources: [`magicoder:${String(n).padStart(6, "0")}`],
    lang,
    meta: {
      validation: {
        outcome,
        blocks: [
          {
            message: 1,
            block: 0,
            lang,
            outcome: "passed",
            time_s: 0.01,
            harness: "as-is",
            exit_code: 0,
            stdout: `${n}\n`,
            peak_memory_kb: 2048,
          },
          {
            message: 1,
            block: 1,
            lang,
            outcome,
            time_s: 0.02,
            harness: "as-is",
            error: "boom",
            exit_code: outcome === "passed" ? 0 : 1,
            stderr: "Traceback ...\n[... 10 characters omitted ...]\nboom\n",
            stderr_cut: 10,
          },
        ],
        gates: n % 3 === 0 ? [{ rule: "silent-failure", message: 1, detail: "fails quietly" }] : [],
      },
    },
    ...extra,
  };
}

/** Writes entries to a new part of `stage` as the runner does. */
function commit(dataDir: string, stage: string, entries: Entry[]): string {
  const writer = new StageStore(dataDir, stage).newPart();
  for (const entry of entries) writer.append(entry);
  writer.close();
  return writer.path;
}

function sampleRun(dataDir: string): { source: ReviewSource; states: Record<string, string> } {
  const pairs: Entry[] = [];
  for (let n = 0; n < 30; n++)
    pairs.push({
      s: n,
      o: [
        {
          id: `magicoder:${String(n).padStart(6, "0")}`,
          query: `q${n}`,
          answer: "a",
          resource: "magicoder",
          lang: "python",
        },
      ],
    });
  commit(dataDir, "filter", pairs);
  const entries: Entry[] = [];
  for (let n = 0; n < 30; n++) {
    const lang = n % 5 === 0 ? "go" : "python";
    const outcome = n % 4 === 0 ? "failed" : "passed";
    entries.push(
      n % 7 === 6
        ? {
            s: n,
            r: [
              {
                id: `sim-${String(n).padStart(4, "0")}`,
                reason: "repeated-turn",
                record: dialogue(n, lang, outcome),
              },
            ],
          }
        : { s: n, o: [dialogue(n, lang, outcome)] },
    );
  }
  // a failed attempt, then its success: only the success counts; an input's second entry never does
  entries.push({ s: 30, f: { reason: "sandbox-down" } });
  entries.push({ s: 30, o: [dialogue(30, "rust", "passed")] });
  entries.push({ s: 30, o: [dialogue(31, "rust", "passed")] });
  commit(dataDir, "validate", entries);
  const states: Record<string, string> = { filter: "complete", validate: "complete", export: "not started" };
  const source: ReviewSource = {
    dataDir,
    stages: ["filter", "validate", "export"],
    look: (name) => ({ name, state: states[name]!, parts: new StageStore(dataDir, name).parts() }),
  };
  return { source, states };
}

let server: ReviewServer | undefined;
let app: ReviewApp | undefined;
afterEach(async () => {
  await server?.close();
  app?.close();
  server = undefined;
  app = undefined;
});

async function start(
  source: ReviewSource,
  options: { host?: string; token?: string; reviewer?: string } = {},
) {
  app = new ReviewApp(source, REASONS);
  server = await serveReview(app, {
    host: options.host ?? "127.0.0.1",
    port: 0,
    token: options.token,
    reviewer: options.reviewer ?? "ann",
    stage: "validate",
  });
  const base = new URL(server.url);
  const port = base.port;
  return async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, init);
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // the page
    }
    // biome-ignore lint/suspicious/noExplicitAny: the API's JSON, of a shape per endpoint, as the page reads it
    return { status: res.status, body: body as any, headers: res.headers };
  };
}

const post = (body: unknown, type = "application/json") => ({
  method: "POST",
  headers: { "Content-Type": type },
  body: JSON.stringify(body),
});

describe("review API", () => {
  it("lists with filters, sort, paging, text search and facets, never past what was committed", async () => {
    const { source } = sampleRun(tempDir("cf-review-"));
    const get = await start(source);
    const stages = (await get("/api/stages")).body;
    expect(
      stages.map((s: { name: string; outputs: number; rejects: number }) => [s.name, s.outputs, s.rejects]),
    ).toEqual([
      ["filter", 30, 0],
      ["validate", 27, 4],
      ["export", 0, 0],
    ]);
    const failedGo = (await get("/api/list?stage=validate&lang=go&verdict=failed")).body;
    expect(failedGo.total).toBe(27);
    expect(failedGo.rows.map((r: { id: string }) => r.id)).toEqual(["sim-0000"]);
    const gated = (await get("/api/list?stage=validate&gate=silent-failure&sort=id&size=3&page=1")).body;
    expect(gated.filtered).toBe(9);
    expect(gated.rows.map((r: { id: string }) => r.id)).toEqual(["sim-0012", "sim-0015", "sim-0018"]);
    const byMethod = (await get("/api/list?stage=validate&method=code-correction&source=magicoder")).body;
    expect(byMethod.filtered).toBe(14);
    const rejects = (await get("/api/list?stage=validate&kind=r&reason=repeated-turn")).body;
    expect(rejects.rows.map((r: { id: string }) => r.id)).toEqual([
      "sim-0006",
      "sim-0013",
      "sim-0020",
      "sim-0027",
    ]);
    const text = (await get(`/api/list?stage=validate&text=${encodeURIComponent("<SCRIPT>window.PWNED")}`))
      .body;
    expect(text.rows.map((r: { id: string }) => r.id)).toEqual(["sim-0003"]);
    expect(
      (await get("/api/list?stage=validate&text=TASK%2029%20in")).body.rows.map((r: { id: string }) => r.id),
    ).toEqual(["sim-0029"]);
    const facets = (await get("/api/facets?stage=validate")).body;
    expect(facets.lang).toEqual({ go: 5, python: 21, rust: 1 });
    expect(facets.gate).toEqual({ "silent-failure": 9 });
  });

  it("shows a record with each block's result, its gates, provenance and links", async () => {
    const { source } = sampleRun(tempDir("cf-review-"));
    const get = await start(source);
    const view = (await get("/api/record?stage=validate&id=sim-0000")).body;
    expect(view.messages).toHaveLength(2);
    expect(
      view.messages[1].blocks.map((b: { lang: string; code: string; result: { outcome: string } }) => [
        b.lang,
        b.code,
        b.result.outcome,
      ]),
    ).toEqual([
      ["go", "print(0)", "passed"],
      ["go", "print(1)", "failed"],
    ]);
    expect(view.validation.gates).toEqual([{ rule: "silent-failure", message: 1, detail: "fails quietly" }]);
    expect(view.provenance.method).toBe("code-correction");
    expect(view.links).toEqual([{ stage: "filter", kind: "o", id: "magicoder:000000", relation: "source" }]);
    const pair = (await get("/api/record?stage=filter&id=magicoder:000000")).body;
    expect(pair.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
    expect(pair.links).toEqual([{ stage: "validate", kind: "o", id: "sim-0000", relation: "made from it" }]);
    const reject = (await get("/api/record?stage=validate&id=sim-0006")).body;
    expect(reject.reject.reason).toBe("repeated-turn");
    expect((await get("/api/record?stage=validate&id=nope")).status).toBe(404);
    expect((await get("/api/record?stage=nostage&id=sim-0000")).status).toBe(404);
  });

  it("shows each block's run, and whether a dialogue is in the release", async () => {
    const dir = tempDir("cf-review-");
    const { source, states } = sampleRun(dir);
    source.release = { stage: "export", from: "validate" };
    commit(dir, "export", [{ s: -1, r: [{ id: "sim-0001", reason: "review:other" }] }]);
    const get = await start(source);
    expect((await get("/api/record?stage=validate&id=sim-0000")).body.release).toBe(
      "export is not started: not known yet",
    );
    states.export = "complete";
    const view = (await get("/api/record?stage=validate&id=sim-0000")).body;
    const [first, second] = view.messages[1].blocks.map((b: { result: unknown }) => b.result);
    expect(first).toMatchObject({ exit_code: 0, stdout: "0\n", peak_memory_kb: 2048, time_s: 0.01 });
    expect(second).toMatchObject({ exit_code: 1, stderr_cut: 10, stderr: expect.stringContaining("boom") });
    expect(view.release).toBe("in the release");
    const refused = (await get("/api/record?stage=validate&id=sim-0001")).body;
    expect(refused.release).toBe("not in the release: export rejected it (review:other)");
    expect(refused.links).toContainEqual({
      stage: "export",
      kind: "r",
      id: "sim-0001",
      relation: "same",
      reason: "review:other",
    });
    const pair = (await get("/api/record?stage=filter&id=magicoder:000000")).body;
    expect(pair.release).toBeUndefined();
    expect(pair.links).toEqual([
      { stage: "validate", kind: "o", id: "sim-0000", relation: "made from it", release: "in the release" },
    ]);
    // a dialogue validate rejected is no output the release is made from
    expect((await get("/api/record?stage=validate&id=sim-0006")).body.release).toBeUndefined();
  });

  it("writes marks and nothing else; a mark on content that changed since shows stale", async () => {
    const dir = tempDir("cf-review-");
    const { source } = sampleRun(dir);
    const get = await start(source);
    const made = await get(
      "/api/marks",
      post({
        stage: "validate",
        id: "sim-0000",
        verdict: "bad",
        reason: "bug-identification",
        reviewer: "bob",
      }),
    );
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      id: "sim-0000",
      verdict: "bad",
      reviewer: "bob",
      reason: "bug-identification",
    });
    // two tabs at once
    const both = await Promise.all([
      get("/api/marks", post({ stage: "validate", id: "sim-0001", verdict: "good", reviewer: "ann" })),
      get("/api/marks", post({ stage: "validate", id: "sim-0001", verdict: "bad", reviewer: "cy" })),
    ]);
    expect(both.map((r) => r.status)).toEqual([201, 201]);
    expect((await get("/api/record?stage=validate&id=sim-0001")).body.marks).toHaveLength(2);
    expect(
      (await get("/api/marks", post({ stage: "validate", id: "sim-9999", verdict: "bad" }))).status,
    ).toBe(404);
    expect(
      (await get("/api/marks", post({ stage: "validate", id: "sim-0000", verdict: "meh" }))).status,
    ).toBe(400);
    expect(
      (await get("/api/marks", post({ stage: "validate", id: "sim-0000", verdict: "bad", reason: "vibes" })))
        .status,
    ).toBe(400);
    expect((await get("/api/marks", post({ id: "sim-0000", verdict: "bad" }, "text/plain"))).status).toBe(
      415,
    );
    expect((await get("/api/stages", { method: "PUT" })).status).toBe(405);
    expect((await get("/api/marks", { method: "DELETE" })).status).toBe(405);
    expect((await get("/api/list?stage=validate&lang=go")).body.rows[0].marks).toEqual([
      { reviewer: "bob", verdict: "bad", stale: false },
    ]);
    // validate is run again, and sim-0000 comes out different
    const store = new StageStore(dir, "validate");
    const old = store.parts()[0]!;
    const changed = dialogue(0, "go", "failed");
    changed.messages[1]!.content = "```go\nprint(42)\n```";
    const fresh = commit(dir, "validate", [{ s: 0, o: [changed] }]);
    renameSync(fresh, old);
    const row = (await get("/api/list?stage=validate&lang=go")).body.rows[0];
    expect(row.marks).toEqual([{ reviewer: "bob", verdict: "bad", stale: true }]);
    expect((await get("/api/record?stage=validate&id=sim-0000")).body.marks[0].stale).toBe(true);
  });

  it("shows a running stage's committed records, and more once they are committed", async () => {
    const dir = tempDir("cf-review-");
    const { source, states } = sampleRun(dir);
    states.validate = "running";
    const get = await start(source);
    const part = new StageStore(dir, "validate").parts()[0]!;
    appendFileSync(part, JSON.stringify({ s: 40, o: [dialogue(40, "lua", "passed")] }).slice(0, 50));
    let listed = (await get("/api/list?stage=validate")).body;
    expect(listed.total).toBe(27);
    expect((await get("/api/stages")).body[1].state).toBe("running");
    appendFileSync(part, `${JSON.stringify({ s: 40, o: [dialogue(40, "lua", "passed")] }).slice(50)}\n`);
    listed = (await get("/api/list?stage=validate&lang=lua")).body;
    expect([listed.total, listed.filtered]).toEqual([28, 1]);
  });

  it("needs the token on every request off loopback, and a loopback Host on loopback", async () => {
    const { source } = sampleRun(tempDir("cf-review-"));
    const ui = new ReviewApp(source, REASONS);
    await expect(
      serveReview(ui, { host: "0.0.0.0", port: 0, reviewer: "a", stage: "validate" }),
    ).rejects.toThrow(/--token/);
    ui.close();
    const get = await start(source, { host: "0.0.0.0", token: "s3cret" });
    expect((await get("/api/stages")).status).toBe(401);
    expect((await get("/api/stages", { headers: { Authorization: "Bearer wrong!" } })).status).toBe(401);
    expect((await get("/api/stages", { headers: { Authorization: "Bearer s3cret" } })).status).toBe(200);
    expect((await get("/?token=s3cret")).status).toBe(200);
    expect((await get("/api/marks", post({ id: "sim-0000", verdict: "bad" }))).status).toBe(401);
    await server!.close();
    app!.close();
    server = undefined;
    app = undefined;
    await start(source);
    // fetch sets Host itself: a plain request says what a page on a rebound DNS name would
    const status = await new Promise<number | undefined>((resolve, reject) =>
      request(server!.url, { headers: { Host: "rebound.example" } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      })
        .on("error", reject)
        .end(),
    );
    expect(status).toBe(403);
  });

  it("names a port in use, and serves a clear page over a data dir with no runs", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    const port = (blocker.address() as { port: number }).port;
    const dir = tempDir("cf-review-empty-");
    const source: ReviewSource = {
      dataDir: dir,
      stages: ["filter", "validate"],
      look: (name) => ({ name, state: "not started", parts: [] }),
    };
    const ui = new ReviewApp(source, REASONS);
    try {
      const error = await serveReview(ui, {
        host: "127.0.0.1",
        port,
        reviewer: "a",
        stage: "validate",
      }).catch((e) => e);
      expect(error).toBeInstanceOf(UserError);
      expect(error.message).toContain(`port ${port} is in use`);
    } finally {
      ui.close();
      blocker.close();
    }
    expect(new ReviewApp(source, REASONS).hasRuns()).toBe(false);
    const get = await start(source, { reviewer: "</script><script>alert(1)</script>" });
    const page = await get("/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toMatch(/script-src 'nonce-[^']+'/);
    // the config's JSON cannot end its script element
    expect(page.body).not.toContain("</script><script>alert(1)");
    expect(page.body).toContain('"hasRuns":false');
    expect((await get("/api/list?stage=validate")).body).toMatchObject({ total: 0, filtered: 0, rows: [] });
  });
});
