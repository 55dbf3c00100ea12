// Compile speed: Go and Rust hello worlds and a testify go_test compiled in the embedded sandbox (Go
// on the shared warm build cache, go-cache.ts; Rust's std linked dynamically) against the same builds
// bare on the host (a fresh private Go build cache, Rust's std linked statically). Interleaved; medians.
//
//   pnpm bench sandbox-compile [--rounds 5]
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { GO_BUILD_ENV } from "../../pipeline/sandbox/go-cache.js";
import { EmbeddedSandbox, findLanguage, sandboxConfigSchema } from "../../pipeline/sandbox/index.js";
import { toolchainPaths } from "../../pipeline/sandbox/toolchains.js";
import { median } from "../median.js";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" } } });
const ROUNDS = Number(values.rounds);

const CASES = [
  { language: "go", code: 'package main\nimport "fmt"\nfunc main() { fmt.Println("hello") }\n' },
  { language: "rust", code: 'fn main() { println!("hello"); }\n' },
  {
    language: "go_test",
    code: 'package main\nimport (\n\t"testing"\n\t"github.com/stretchr/testify/assert"\n)\nfunc TestOne(t *testing.T) { assert.Equal(t, 1, 1) }\n',
  },
];

function spawnTimed(argv: string[], cwd: string, env: Record<string, string>): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd,
      env,
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve((performance.now() - started) / 1000) : reject(new Error(`${argv[0]}: ${stderr}`)),
    );
  });
}

/**
 * Seconds the bare toolchain takes for the case's build as every run did before (go_test: the whole
 * `go test`): Go with a fresh private cache, Rust linking std statically.
 */
async function bare(language: string, code: string): Promise<number> {
  const spec = findLanguage(language)!;
  const dir = await mkdtemp(join(tmpdir(), "bench-compile-"));
  try {
    const source = spec.sourceFile(code);
    await writeFile(join(dir, source), code);
    const env = {
      PATH: "/usr/bin:/bin",
      HOME: dir,
      TMPDIR: dir,
      GOENV: "off",
      ...GO_BUILD_ENV,
      GOCACHE: join(dir, "go-cache"),
    };
    const ctx = { source, code, memoryMb: 1024, ...toolchainPaths().host, goCache: env.GOCACHE };
    const argv = spec.compile ? spec.compile(ctx) : spec.run(ctx);
    // Rust as it was built before: std linked statically
    const before = argv.filter((arg, i) => arg !== "prefer-dynamic" && argv[i + 1] !== "prefer-dynamic");
    return await spawnTimed(before, dir, env);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Seconds the sandbox reports for the same step (its compile step; go_test: its run step). */
async function sandboxed(sandbox: EmbeddedSandbox, language: string, code: string): Promise<number> {
  const response = await sandbox.run({ language, code, compile_timeout: 60, run_timeout: 60 });
  const step = response.compile_result ?? response.run_result;
  if (response.status !== "Success" || step?.execution_time == null)
    throw new Error(`sandboxed ${language} failed: ${JSON.stringify(response).slice(0, 600)}`);
  return step.execution_time;
}

async function main(): Promise<void> {
  const sandbox = new EmbeddedSandbox(sandboxConfigSchema.parse({ workers: 1 }));
  try {
    // warm page caches and the shared build cache (a Go request waits for its warm-up)
    for (const { language, code } of CASES) {
      await bare(language, code);
      await sandboxed(sandbox, language, code);
    }
    console.log(
      `sandbox compile benchmark: ${ROUNDS} rounds, load average ${loadavg()[0]!.toFixed(1)} at start`,
    );
    for (const { language, code } of CASES) {
      const bareTimes: number[] = [];
      const sandboxTimes: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        await sandbox.settled();
        bareTimes.push(await bare(language, code));
        await sandbox.settled();
        sandboxTimes.push(await sandboxed(sandbox, language, code));
      }
      const b = median(bareTimes);
      const s = median(sandboxTimes);
      const what = language === "go_test" ? "go test (build, vet, run)" : "compile";
      console.log(
        `${language.padEnd(8)} ${what}: bare ${b.toFixed(3)} s${language === "rust" ? " (static std)" : " (fresh private cache)"}, sandboxed ${s.toFixed(3)} s, ratio (bare/sandboxed) ${(b / s).toFixed(2)}x, within SandboxFusion's 1 s compile_timeout: ${s <= 1 ? "yes" : "no"}`,
      );
    }
    console.log(`load average ${loadavg()[0]!.toFixed(1)} at the end`);
  } finally {
    await sandbox.close();
  }
}

await main();
