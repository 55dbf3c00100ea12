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
export function findChromium(): string | undefined {
  return process.env.CHROMIUM || CANDIDATES.find((c) => existsSync(c));
}

/** The page size the report's own script measured once laid out (`data-page-width/height` on body). */
export function pageSize(dom: string): { width: number; height: number } | undefined {
  const body = /<body\b[^>]*>/.exec(dom)?.[0] ?? "";
  const width = Number(/data-page-width="(\d+)"/.exec(body)?.[1]);
  const height = Number(/data-page-height="(\d+)"/.exec(body)?.[1]);
  return width > 0 && height > 0 ? { width, height } : undefined;
}

/** Chromium refuses windows past this; a longer page is cut there (and says so). */
const MAX_SIDE = 16_384;

/**
 * Loads the page in headless Chromium: its DOM after the scripts ran, and on request a screenshot of
 * the whole page (the size the page measured itself at).
 */
export async function viewInBrowser(
  file: string,
  options: { screenshot?: string } = {},
): Promise<{ dom: string; size: { width: number; height: number } }> {
  const chromium = findChromium();
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
  ];
  const window = (width: number, height: number) => `--window-size=${width},${height}`;
  const url = pathToFileURL(path.resolve(file)).href;
  try {
    // laid out at the screenshot's width, so the height it measures is the one the screenshot needs
    const { stdout } = await run(chromium, [...common, window(1200, 900), "--dump-dom", url], {
      maxBuffer: 64 << 20,
      timeout: 60_000,
    });
    const measured = pageSize(stdout);
    const size = {
      width: Math.min(MAX_SIDE, measured?.width ?? 1200),
      height: Math.min(MAX_SIDE, measured?.height ?? 900),
    };
    if (options.screenshot) {
      await run(
        chromium,
        [...common, window(size.width, size.height), `--screenshot=${path.resolve(options.screenshot)}`, url],
        { timeout: 60_000 },
      );
      if (!existsSync(options.screenshot)) {
        throw new UserError(`${chromium} ran but wrote no screenshot to ${options.screenshot}`);
      }
    }
    return { dom: stdout, size };
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}
