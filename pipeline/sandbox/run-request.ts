// One request in one worker slot: its run dir (fresh, or prepared ahead), its files and source, the
// compile step where the language has one and the run step, each in a sandbox of its own, and the
// SandboxFusion response built from their results.
import type { SandboxConfig } from "./config.js";
import { goCacheInside, PRIVATE_GO_CACHE } from "./go-cache.js";
import { isRoot } from "./host-area.js";
import type { ProcessLimits } from "./isolation.js";
import type { LanguageContext, LanguageSpec } from "./languages.js";
import { disposeSandbox, type PreparedSandbox, type SandboxSupply } from "./prepared.js";
import { runStatus } from "./request.js";
import { runStep, type StepHost } from "./step.js";
import { toolchainPaths } from "./toolchains.js";
import type { CommandRunResult, RunCodeRequest, RunCodeResponse } from "./types.js";
import { RunDirectory } from "./workdir.js";

/** The environment every program starts from; languages add their own variables. */
const BASE_ENV: Readonly<Record<string, string>> = {
  PATH: "/usr/bin:/bin",
  HOME: "/tmp",
  TMPDIR: "/tmp",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  USER: "sandbox",
  LOGNAME: "sandbox",
  TERM: "dumb",
};

const COMPILE_FILE_SIZE_MB = 128;

/** Where a request runs: the sandbox's config and one worker slot with what it needs. */
export interface RequestSlot extends StepHost {
  config: SandboxConfig;
  /** the slot's sandboxes built ahead, or null where each is built when its step starts */
  supply: SandboxSupply | null;
}

export async function runRequest(
  where: RequestSlot,
  spec: LanguageSpec,
  request: RunCodeRequest,
  signal?: AbortSignal,
): Promise<RunCodeResponse> {
  const { config, mode, slot, supply } = where;
  const limits = config.limits;
  const seconds = (requested: number | undefined, fallback: number) =>
    Math.min(requested !== undefined && requested > 0 ? requested : fallback, config.max_timeout_s);
  const requestedMb = request.memory_limit_MB ?? 0;
  const memoryMb = Math.min(
    requestedMb > 0 ? Math.max(16, Math.floor(requestedMb)) : limits.memory_mb,
    limits.max_memory_mb,
  );
  const owner = isRoot() && mode !== "none" ? slot.uid : null;
  const taken = supply?.takeRun() ?? null;
  const dir = taken?.dir ?? RunDirectory.create(slot.runsDir, owner, { withTmp: mode === "none" });
  // sandboxes built for this request and not yet handed to a step, thrown away at its end
  const unused = new Set<PreparedSandbox>(taken ? [taken.sandbox] : []);
  let runSandbox: PreparedSandbox | undefined = taken?.sandbox;
  const prepareRunSandbox = () => {
    if (!supply) return;
    runSandbox = supply.prepareFor(dir);
    unused.add(runSandbox);
  };
  let env: Record<string, string> = { ...BASE_ENV };
  const step = async (
    argv: string[],
    timeoutSeconds: number,
    stdin: string | null,
    stepLimits: Pick<ProcessLimits, "addressSpaceMb" | "fileSizeMb">,
    stepMemoryMb: number,
    prepared: PreparedSandbox | undefined,
    afterStart: () => void,
  ) => {
    if (prepared) unused.delete(prepared);
    return runStep(where, {
      argv,
      env,
      workDir: dir.work,
      hostTmpDir: dir.tmp,
      timeoutSeconds,
      stdin,
      limits: {
        cpuSeconds: timeoutSeconds + 1,
        processes: limits.processes,
        openFiles: limits.open_files,
        ...stepLimits,
      },
      treeMemoryMb: stepMemoryMb + limits.memory_headroom_mb,
      tmpMb: limits.tmp_mb,
      maxOutputBytes: config.max_output_bytes,
      killOutputBytes: config.kill_output_bytes,
      ...(signal ? { signal } : {}),
      ...(prepared ? { prepared } : {}),
      afterStart,
    });
  };
  const respond = async (compile: CommandRunResult | null, run: CommandRunResult | null) => {
    const fetched = request.fetch_files?.length ? request.fetch_files : null;
    const files = fetched ? await dir.fetch(fetched, config.max_request_bytes) : {};
    const status = runStatus(compile, run);
    return { status, message: describe(compile, run), compile_result: compile, run_result: run, files };
  };
  try {
    for (const [path, content] of Object.entries(request.files ?? {})) {
      if (content !== null) dir.write(path, Buffer.from(content, "base64"));
    }
    const source = dir.write(spec.sourceFile(request.code), spec.sourceText?.(request.code) ?? request.code);
    const paths = toolchainPaths();
    const ctx: LanguageContext = {
      source,
      code: request.code,
      memoryMb,
      ...(mode === "none" ? paths.host : paths.inside),
      goCache: mode === "none" ? PRIVATE_GO_CACHE : goCacheInside(where.kit.toolBinds),
    };
    env = { ...BASE_ENV, ...(typeof spec.env === "function" ? spec.env(ctx) : spec.env) };
    await spec.prepare?.();

    let compileResult: CommandRunResult | null = null;
    if (spec.compile) {
      const timeout = seconds(request.compile_timeout, config.compile_timeout_s);
      const compileMb = Math.max(spec.compileMemoryMb ?? memoryMb, memoryMb);
      compileResult = await step(
        spec.compile({ ...ctx, memoryMb: compileMb }),
        timeout,
        null,
        {
          addressSpaceMb: spec.addressSpaceMb ? spec.addressSpaceMb(compileMb) : compileMb + 1024,
          // linkers write binaries bigger than programs usually write files; the work dir cap still holds
          fileSizeMb: Math.max(limits.file_size_mb, COMPILE_FILE_SIZE_MB),
        },
        compileMb,
        taken?.sandbox,
        // the run step's sandbox gets built while this compiles
        prepareRunSandbox,
      );
      if (compileResult.status !== "Finished" || compileResult.return_code !== 0) {
        return await respond(compileResult, null);
      }
    }
    const timeout = seconds(request.run_timeout, config.run_timeout_s);
    // a run that compiles first gets the compiler's memory, as a compile step would
    const runMb = spec.compilesInRun ? Math.max(spec.compileMemoryMb ?? memoryMb, memoryMb) : memoryMb;
    const runResult = await step(
      spec.run({ ...ctx, memoryMb: runMb }),
      timeout,
      request.stdin ?? null,
      {
        addressSpaceMb: spec.addressSpaceMb ? spec.addressSpaceMb(runMb) : runMb,
        fileSizeMb: limits.file_size_mb,
      },
      runMb,
      runSandbox,
      () => {},
    );
    return await respond(compileResult, runResult);
  } finally {
    const disposed = await Promise.allSettled([...unused].map(disposeSandbox));
    await dir.remove();
    // the slot's next request gets its sandbox built while the slot would otherwise idle, after
    // this answer has gone out
    supply?.prepareNextSoon();
    const failed = disposed.find((outcome) => outcome.status === "rejected");
    // biome-ignore lint/correctness/noUnsafeFinally: a sandbox that would not go is the request's answer
    if (failed) throw failed.reason;
  }
}

function describe(compile: CommandRunResult | null, run: CommandRunResult | null): string {
  const failed = (result: CommandRunResult) => {
    if (result.stopped_by?.includes("output")) return "killed: its output passed sandbox.kill_output_bytes";
    if (result.status === "TimeLimitExceeded") return "time limit exceeded";
    if (result.status === "Error") return result.stderr ?? "could not start";
    if (result.return_code === 0) return null;
    const exit = `exit code ${result.return_code}${result.signal ? ` (${result.signal})` : ""}`;
    return result.stopped_by?.includes("memory")
      ? `${exit}: out of memory, its processes together passed the memory limit (memory_limit_MB + sandbox.limits.memory_headroom_mb)`
      : exit;
  };
  const compileProblem = compile && failed(compile);
  if (compileProblem) return `compile: ${compileProblem}`;
  const runProblem = run && failed(run);
  return runProblem ? `run: ${runProblem}` : "";
}
