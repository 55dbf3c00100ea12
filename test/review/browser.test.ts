// The review app in Chromium (Debian's, driven by playwright-core): on a finished sample run, filter to
// failed Go dialogues, check each block's shown result, mark one bad by keyboard, see export drop it;
// its query's script, img onerror and javascript: link never run, nor a 5 MB line's; a --sample queue
// is walked by keyboard. Required in CI (CODEFEEDBACK_REQUIRE_CHROMIUM=1); with
// CODEFEEDBACK_REVIEW_SCREENSHOT=<png> it saves the screenshot.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium } from "../../pipeline/report/browser.js";
import { ReviewApp } from "../../pipeline/review/app.js";
import { type ReviewServer, serveReview } from "../../pipeline/review/server.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { MAIN, ROOT } from "../support/cli.js";
import { present } from "../support/required.js";
import { tempDir } from "../support/temp-dir.js";
import { FAILING_GO, runToRelease, sampleArgs } from "./sample-run.js";

const executable = findChromium();
const run = present(
  "CHROMIUM",
  executable ? undefined : "no Chromium (scripts/install.sh installs Debian's chromium)",
);

/** `pnpm pipeline review` in a child process, on any free port; resolves with its URL. */
function startApp(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", MAIN, "review", "--port", "0", "--reviewer", "tester", ...sampleArgs(dataDir)],
    // the run's environment: without an endpoint the LLM stages would be judged stale (another provider)
    {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "k" },
    },
  );
  return new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      const url = /review app: (\S+)/.exec(stderr)?.[1];
      if (url) resolve({ child, url });
    });
    child.on("exit", (code) => reject(new Error(`review exited with ${code}: ${stderr}`)));
  });
}

/** Counts what injected markup would do if it ran: a global it sets, a dialog, a navigation. */
async function watch(page: Page): Promise<string[]> {
  const happened: string[] = [];
  page.on("dialog", (d) => {
    happened.push(`dialog ${d.message()}`);
    void d.dismiss();
  });
  page.on("framenavigated", (f) => {
    if (f === page.mainFrame() && !f.url().startsWith("http://127.0.0.1"))
      happened.push(`navigated ${f.url()}`);
  });
  return happened;
}

const lines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe.runIf(run)("the review app in Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: executable!, args: ["--no-sandbox", "--disable-gpu"] });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("filters to failed Go dialogues, shows each block's result, marks one bad by keyboard; export drops it", async () => {
    const dir = tempDir("cf-review-browser-");
    const dataDir = await runToRelease(dir);
    const released = (): string[] =>
      lines(join(dataDir, "export/code-feedback-full.jsonl")).map((r) => String(r.dialogue_id));
    const { child, url } = await startApp(dataDir);
    let id: string | null = null;
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const happened = await watch(page);
      await page.goto(url);
      await page.waitForSelector("body[data-ready]");
      await page.selectOption("[data-filter=lang]", "go");
      await page.selectOption("[data-filter=verdict]", "failed");
      await page.locator("#counts", { hasText: /^1 of / }).waitFor();
      id = await page.textContent("#rows tr.row td");
      expect(released()).toContain(id);
      await page.click("#rows tr.row");
      await page.waitForSelector("#record .block");
      // each block as the record has it: its code, and validate's outcome for it
      const view = await page.evaluate(async (recordId) => {
        const res = await fetch(`/api/record?stage=validate&id=${encodeURIComponent(recordId!)}`);
        return (await res.json()) as {
          messages: {
            blocks: { code: string; result?: { outcome: string; stdout?: string; stderr?: string } }[];
          }[];
        };
      }, id);
      const expected = view.messages.flatMap((m) =>
        m.blocks.map((b) => [b.code, b.result?.outcome ?? "none"]),
      );
      const shown = await page.$$eval("#record .block", (blocks) =>
        blocks.map((b) => [
          b.querySelector("pre")!.textContent,
          b.querySelector(".result")!.getAttribute("data-outcome") ?? "none",
        ]),
      );
      expect(shown).toEqual(expected);
      expect(shown.at(-1)).toEqual([FAILING_GO, "failed"]);
      // and what each run printed, whole once its show-all buttons are pressed
      for (const more of await page.$$("#record .stream button.more")) await more.click();
      const printed = await page.$$eval("#record .block", (blocks) =>
        blocks.map((b) => [
          b.querySelector(".stream.stdout pre")?.textContent ?? null,
          b.querySelector(".stream.stderr pre")?.textContent ?? null,
        ]),
      );
      expect(printed).toEqual(
        view.messages.flatMap((m) =>
          m.blocks.map((b) => [b.result?.stdout ?? null, b.result?.stderr ?? null]),
        ),
      );
      expect(printed.at(-1)![1]).toContain("index out of range");
      // Go exits 2 on a panic
      expect(await page.$$eval("#record .block .outcome", (shown) => shown.at(-1)!.textContent)).toMatch(
        / · exit 2 · /,
      );
      expect(await page.textContent("#record .release")).toBe("release: in the release");
      // the query's markup is on the page as text, and none of it ran
      expect(await page.textContent("#record")).toContain('<script>window.pwned = "script"</script>');
      expect(await page.$$("#record script, #record img, #record a[href]")).toEqual([]);
      await page.click("#record .role");
      await page.keyboard.press("b");
      await page.locator("#mark-status", { hasText: "bad by tester" }).waitFor();
      expect(await page.evaluate("window.pwned")).toBeUndefined();
      expect(happened).toEqual([]);
      const screenshot = process.env.CODEFEEDBACK_REVIEW_SCREENSHOT;
      if (screenshot) await page.screenshot({ path: screenshot });
      await page.close();
    } finally {
      child.kill();
    }
    await runToRelease(dir);
    expect(released()).not.toContain(id);
    const dropped = (await collectRejects(dataDir)).filter((r) => r.reason.startsWith("review:"));
    expect(dropped).toEqual([expect.objectContaining({ id, reason: "review:other" })]);
  });

  it("renders a 5 MB line and hostile markup (in a block's output too) as text, and runs none of it", async () => {
    const dataDir = tempDir("cf-review-hostile-");
    const long = `${"<b>x</b>".repeat(5 * 131_072)}`;
    // what the program printed is as hostile, and longer than a block's output starts
    const printed = `<img src=x onerror="window.pwned=4">\n`.repeat(100);
    const content = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2"><a href="javascript:window.pwned=3">x</a>\n\`\`\`python\nprint("${long}")\n\`\`\`\n${long}`;
    const writer = new StageStore(dataDir, "validate").newPart();
    writer.append({
      s: 0,
      o: [
        {
          id: "d1",
          messages: [
            { role: "user", content },
            { role: "assistant", content },
          ],
          lang: "python",
          meta: {
            validation: {
              outcome: "failed",
              blocks: [
                { message: 1, block: 0, lang: "python", outcome: "failed", exit_code: 1, stdout: printed },
              ],
              gates: [],
            },
          },
        },
      ],
    });
    writer.close();
    const app = new ReviewApp(
      {
        dataDir,
        stages: ["validate"],
        look: (name) => ({ name, state: "complete", parts: new StageStore(dataDir, name).parts() }),
      },
      ["other"],
    );
    let server: ReviewServer | undefined;
    try {
      server = await serveReview(app, { host: "127.0.0.1", port: 0, reviewer: "t", stage: "validate" });
      const page = await browser.newPage();
      const happened = await watch(page);
      await page.goto(server.url);
      await page.waitForSelector("body[data-ready]");
      await page.click("#rows tr.row");
      await page.waitForSelector("#record .block");
      for (const more of await page.$$("#record button.more")) await more.click();
      expect(await page.$$("#record button.more")).toEqual([]);
      const text = (await page.textContent("#record")) ?? "";
      expect(text.length).toBeGreaterThan(4 * long.length);
      expect(await page.textContent("#record .block .stream.stdout pre")).toBe(printed);
      expect(await page.$$("#record script, #record img, #record a[href], #record b")).toEqual([]);
      expect(await page.evaluate("window.pwned")).toBeUndefined();
      expect(happened).toEqual([]);
      await page.close();
    } finally {
      await server?.close();
      app.close();
    }
  });
});

describe.runIf(run)("the review queue in Chromium", () => {
  it("walks a --sample queue with j and k, and marks with g", async () => {
    const dataDir = tempDir("cf-review-queue-");
    const writer = new StageStore(dataDir, "validate").newPart();
    for (const [s, id] of ["q1", "q2", "q3"].entries())
      writer.append({
        s,
        o: [{ id, messages: [{ role: "user", content: `task ${id}` }], method: "m", lang: "python" }],
      });
    writer.close();
    const app = new ReviewApp(
      {
        dataDir,
        stages: ["validate"],
        look: (name) => ({ name, state: "complete", parts: new StageStore(dataDir, name).parts() }),
      },
      ["other"],
    );
    const queue = app.sample("validate", 2, 1);
    const server = await serveReview(app, {
      host: "127.0.0.1",
      port: 0,
      reviewer: "qa",
      stage: "validate",
      queue,
    });
    const browser = await chromium.launch({
      executablePath: executable!,
      args: ["--no-sandbox", "--disable-gpu"],
    });
    try {
      const page = await browser.newPage();
      await page.goto(server.url);
      await page.waitForSelector("body[data-ready]");
      const shown = () => page.textContent("#record .judge strong");
      expect(await shown()).toBe(`validate ${queue[0]}`);
      await page.locator("#queue-state", { hasText: "queue 1 of 2" }).waitFor();
      await page.keyboard.press("j");
      await page.locator("#record .judge strong", { hasText: queue[1]! }).waitFor();
      await page.keyboard.press("g");
      await page.locator("#mark-status", { hasText: "good by qa" }).waitFor();
      await page.keyboard.press("k");
      await page.locator("#record .judge strong", { hasText: queue[0]! }).waitFor();
      expect(await page.textContent("#mark-status")).toBe("");
    } finally {
      await browser.close();
      await server.close();
      app.close();
    }
  });
});

async function collectRejects(dataDir: string): Promise<{ id: string; reason: string }[]> {
  const found: { id: string; reason: string }[] = [];
  for await (const r of new StageStore(dataDir, "export").read({ rejects: true }))
    found.push(r as unknown as { id: string; reason: string });
  return found;
}
