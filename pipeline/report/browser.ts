// The report as a browser shows it: headless Chromium (Debian's `chromium`, installed by
// scripts/install.sh) loads the file, runs its self-check, and hands back the DOM it ended with and,
// when asked, a screenshot. Used by `pnpm pipeline report --screenshot` and by the report's test.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { UserError } from "../errors.js";

const run = promisify(execFile);

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

/** `$CHROMIUM`, else the first browser installed in the usual places. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.CHROMIUM) return env.CHROMIUM;
  return CANDIDATES.find((c) => existsSync(c));
}

export interface BrowserView {
  /** the document after its scripts ran */
  dom: string;
  screenshot?: string | undefined;
}

export async function viewInBrowser(
  file: string,
  options: { screenshot?: string; width?: number; height?: number; chromium?: string } = {},
): Promise<BrowserView> {
  const chromium = options.chromium ?? findChromium();
  if (!chromium) {
    throw new UserError(
      "no Chromium found to render the report; install Debian's `chromium` (scripts/install.sh does) or set $CHROMIUM to a Chrome/Chromium binary",
    );
  }
  // a profile of its own: two renders at once must not find each other's lock
  const profile = await mkdtemp(path.join(tmpdir(), "cf-chromium-"));
  const common = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    `--user-data-dir=${profile}`,
    `--window-size=${options.width ?? 1200},${options.height ?? 5200}`,
  ];
  const url = pathToFileURL(path.resolve(file)).href;
  try {
    const { stdout } = await run(chromium, [...common, "--dump-dom", url], {
      maxBuffer: 64 << 20,
      timeout: 60_000,
    });
    if (options.screenshot) {
      await run(chromium, [...common, `--screenshot=${path.resolve(options.screenshot)}`, url], {
        timeout: 60_000,
      });
      if (!existsSync(options.screenshot)) {
        throw new UserError(`${chromium} ran but wrote no screenshot to ${options.screenshot}`);
      }
    }
    return { dom: stdout, screenshot: options.screenshot };
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}
