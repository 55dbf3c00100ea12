// Go's build cache, warmed once per machine and mounted read-only in every sandbox: a go_test that
// imports testify would otherwise compile testify, its dependencies and their vet facts on every
// run. Go uses a cache it cannot write to and builds what is missing in its temporary dir, so the
// program gains speed and no writable place. `current` links to the warm cache once one is built,
// to an empty one before (and should the warm-up fail).
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readlinkSync, symlinkSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { processAlive } from "../pid.js";
import { toolCacheDir } from "./launcher.js";

const run = promisify(execFile);
const GO = "/usr/bin/go";
/** Where the cache's root is mounted inside the sandbox; GOCACHE is its `current` link. */
export const GO_CACHE_INSIDE = "/opt/sandbox-tools/go-cache";

/** The environment Go builds in, inside the sandbox and for the warm-up alike (the cache keys on it). */
export const GO_BUILD_ENV = {
  GOPATH: "/tmp/go:/usr/share/gocode",
  GOFLAGS: "-mod=mod",
  GOPROXY: "off",
  GO111MODULE: "auto",
};

/** What the warm-up builds: the standard library's common packages, testing and testify. */
const WARM_MAIN = `package main

import (
	"bufio"
	"container/heap"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

func main() {
	_ = bufio.NewReader(os.Stdin)
	_ = heap.Init
	_, _ = json.Marshal(1)
	_ = math.Abs(-1)
	_ = regexp.MustCompile("x")
	sort.Ints([]int{2, 1})
	_ = strconv.Itoa(1)
	_ = strings.ToUpper("x")
	_ = time.Now()
	_ = unicode.IsLetter('x')
	fmt.Println("warm")
}
`;
const WARM_TEST = `package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWarm(t *testing.T) {
	assert.Equal(t, 1, 1)
	require.True(t, true)
}
`;

/** GOCACHE where the warm cache is not mounted: in the run's private /tmp. */
export const PRIVATE_GO_CACHE = "/tmp/go-cache";

/** GOCACHE inside a sandbox that mounts `binds`. */
export function goCacheInside(binds: readonly (readonly [string, string])[]): string {
  return binds.some(([, inside]) => inside === GO_CACHE_INSIDE)
    ? `${GO_CACHE_INSIDE}/current`
    : PRIVATE_GO_CACHE;
}

/** The host dir mounted at GO_CACHE_INSIDE, or null where there is no tool cache to keep it in. */
let root: string | null | undefined;

/** Creates the cache's root (with its empty cache and `current` link) and returns it. */
export async function goCacheRoot(): Promise<string | null> {
  if (root !== undefined) return root;
  const tools = existsSync(GO) ? await toolCacheDir() : null;
  root = tools ? join(tools, "go-cache") : null;
  if (root) {
    try {
      // Go refuses a cache without its 256 subdirs when it cannot create them
      for (let i = 0; i < 256; i++)
        mkdirSync(join(root, "empty", i.toString(16).padStart(2, "0")), { recursive: true, mode: 0o755 });
      if (!lstatSync(join(root, "current"), { throwIfNoEntry: false }))
        symlinkSync("empty", join(root, "current"));
    } catch {
      root = null;
    }
  }
  return root;
}

let warming: Promise<void> | null = null;

/**
 * Warms the cache once per machine (once per process checks it): awaited by Go requests before
 * their steps start, so the first one waits for the warm-up instead of compiling testify itself.
 */
export function warmGoCache(): Promise<void> {
  warming ??= warm().catch((error: unknown) => {
    process.emitWarning(
      `sandbox: Go's build cache could not be warmed, go runs compile everything: ${(error as Error).message}`,
      {
        code: "CODEFEEDBACK_SANDBOX_GO_CACHE",
      },
    );
  });
  return warming;
}

async function warm(): Promise<void> {
  const dir = await goCacheRoot();
  if (!dir) return;
  const { stdout } = await run(GO, ["version"], { env: { PATH: "/usr/bin:/bin" } });
  const name = `warm-${createHash("sha256").update(stdout).digest("hex").slice(0, 16)}`;
  const current = join(dir, "current");
  if (readlinkSync(current) === name) return;
  if (!existsSync(join(dir, name))) await buildOnce(dir, name);
  const link = `${current}.${process.pid}`;
  await rm(link, { force: true });
  await symlink(name, link);
  await rename(link, current);
}

/**
 * Builds the warm cache unless another process is building it: then waits for that one (the test
 * suite and several servers start sandboxes at once; one warm-up is enough). A lock whose holder
 * died is taken over.
 */
async function buildOnce(dir: string, name: string): Promise<void> {
  const lock = join(dir, `${name}.lock`);
  for (;;) {
    if (existsSync(join(dir, name))) return;
    try {
      await mkdir(lock);
    } catch {
      const holder = Number(await readFile(join(lock, "pid"), "utf8").catch(() => "0"));
      // a lock without its pid is being taken right now, or was left by a kill in between
      const age = Date.now() - ((await stat(lock).catch(() => null))?.mtimeMs ?? Date.now());
      if (holder > 0 ? !processAlive(holder) : age > 30_000) await rm(lock, { recursive: true, force: true });
      await sleep(500);
      continue;
    }
    try {
      await writeFile(join(lock, "pid"), String(process.pid));
      if (!existsSync(join(dir, name))) await build(dir, name);
      return;
    } finally {
      await rm(lock, { recursive: true, force: true });
    }
  }
}

async function build(dir: string, name: string): Promise<void> {
  const partial = await mkdtemp(join(dir, `${name}.partial-`));
  const work = await mkdtemp(join(tmpdir(), "codefeedback-go-warm-"));
  try {
    await writeFile(join(work, "main.go"), WARM_MAIN);
    await writeFile(join(work, "main_test.go"), WARM_TEST);
    const env = {
      PATH: "/usr/bin:/bin",
      HOME: work,
      TMPDIR: work,
      GOENV: "off",
      GOCACHE: partial,
      ...GO_BUILD_ENV,
    };
    const options = { cwd: work, env, timeout: 600_000 };
    // as the sandbox runs them: `go build` of a program, `go test -v` of a test file (with vet)
    await run(GO, ["build", "-o", join(work, "main"), "main.go"], options);
    await run(GO, ["test", "-v", "main_test.go"], options);
    // readable by the sandbox's uids, writable by nobody but us
    await run("/usr/bin/chmod", ["-R", "a+rX,go-w", partial]);
    await rename(partial, join(dir, name)).catch(async (error: NodeJS.ErrnoException) => {
      // another process built it meanwhile
      if (!existsSync(join(dir, name))) throw error;
    });
  } finally {
    await rm(partial, { recursive: true, force: true });
    await rm(work, { recursive: true, force: true });
  }
}
