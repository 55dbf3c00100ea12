// The `sandbox:` section of the YAML config. Every key has a default so `sandbox: {}` parses; the
// defaults are SandboxFusion's where it has one (10 s compile, 10 s run) and conservative elsewhere.
import { availableParallelism } from "node:os";
import { z } from "zod";
import { balanceSchema } from "../balance/config.js";
import { operational } from "../hash.js";

/** Per-run resource limits; a request may lower the memory limit but never raise any of these. */
export const sandboxLimitsSchema = z
  .object({
    /** address space per process in MiB when a request gives no `memory_limit_MB` */
    memory_mb: z.number().int().min(64).default(1024),
    /** the most `memory_limit_MB` a request may ask for */
    max_memory_mb: z.number().int().min(64).default(4096),
    /** processes and threads the untrusted uid may hold at once (RLIMIT_NPROC) */
    processes: z.number().int().min(4).max(4096).default(128),
    /** largest file a run may write, MiB (RLIMIT_FSIZE) */
    file_size_mb: z.number().int().min(1).default(64),
    /** open file descriptors per process (RLIMIT_NOFILE) */
    open_files: z.number().int().min(16).default(256),
    /** size of the private work dir, MiB (a tmpfs when the sandbox runs as root) */
    work_dir_mb: z.number().int().min(1).default(256),
    /** size of the private /tmp, MiB */
    tmp_mb: z.number().int().min(1).default(128),
    /**
     * with cgroups: what a run's processes may hold together beyond its memory limit, MiB (runtime
     * overhead outside the heap flag, files in its tmpfs dirs). The whole tree is capped at
     * memory limit + this; without cgroups only RLIMIT_AS per process applies.
     */
    memory_headroom_mb: z.number().int().min(0).default(256),
  })
  .strict();

export const sandboxConfigSchema = z
  .object({
    /**
     * `bwrap`: every run in a fresh bubblewrap sandbox (refuses to run code if bwrap cannot start).
     * `none`: run directly on the host as this user. Only for code you trust; it warns on every start.
     */
    isolation: z.enum(["bwrap", "none"]).default("bwrap"),
    /**
     * `auto`: put each command's process tree in fresh memory + pids cgroups when this machine lets
     * us (root, cgroup v1, or v2 with `cgroup_parent` or a free hierarchy root); `off`: rlimits only.
     */
    cgroups: z.enum(["auto", "off"]).default("auto"),
    /** cgroup v2 only: an existing cgroup dir without processes of its own to create run cgroups in */
    cgroup_parent: z.string().startsWith("/").optional(),
    /**
     * a remote SandboxFusion-compatible server (e.g. `http://10.0.0.5:8080`), or a list of them that
     * runs are spread over; unset runs embedded
     */
    url: z.union([z.string().url(), z.array(z.string().url()).min(1)]).optional(),
    /** with several `url`s: when one is taken out of rotation and tried again */
    balance: operational(balanceSchema.prefault({})),
    /** runs at once; default: the number of cores. With `url`, requests in flight to each server */
    workers: operational(z.number().int().positive().max(1024).optional()),
    /** runs waiting for a worker before new ones are refused (backpressure) */
    queue: operational(z.number().int().min(0).default(1024)),
    /** default compile timeout in seconds when a request gives none */
    compile_timeout_s: z.number().positive().default(10),
    /** default run timeout in seconds when a request gives none */
    run_timeout_s: z.number().positive().default(10),
    /** the largest timeout a request may ask for, seconds */
    max_timeout_s: z.number().positive().default(300),
    /** bytes of stdout and of stderr kept per command; the rest is dropped and flagged truncated */
    max_output_bytes: z
      .number()
      .int()
      .min(1024)
      .default(1 << 20),
    /** output beyond which the run is killed as a runaway (the kept part stays capped) */
    kill_output_bytes: z
      .number()
      .int()
      .min(1024)
      .default(64 << 20),
    /** largest request accepted (code + stdin + files), bytes */
    max_request_bytes: z
      .number()
      .int()
      .min(1024)
      .default(32 << 20),
    /** server only: request bodies held at once (read, queued, running) before new ones get 503 */
    max_pending_bytes: z
      .number()
      .int()
      .min(1 << 20)
      .default(1 << 30),
    limits: sandboxLimitsSchema.prefault({}),
    /**
     * first host uid/gid untrusted code runs as when the sandbox runs as root; worker N uses
     * `uid_base + N`, so process limits are per worker. Pick a range no real user owns.
     */
    uid_base: z.number().int().min(1000).max(4_000_000_000).default(61000),
    /** client only: seconds to wait for a remote answer beyond the request's own timeouts */
    client_slack_s: z.number().positive().default(30),
    /** client only: retries on connection errors and 5xx answers */
    client_retries: z.number().int().min(0).max(20).default(3),
    /**
     * client only: seconds servers that have never answered in this run (refused, unknown host, TLS,
     * timeouts) are tried before the run stops with exit 3, instead of failing record after record
     */
    probe_s: operational(z.number().positive().default(30)),
    /** client only: seconds every server may fail (after one answered) before `on_outage` applies */
    outage_s: operational(z.number().positive().default(300)),
    /** client only: `wait` for a server (runs stop spending retries) or `stop` the run with exit 3 */
    on_outage: operational(z.enum(["wait", "stop"]).default("wait")),
  })
  .strict();

export type SandboxConfig = z.infer<typeof sandboxConfigSchema>;

export function defaultWorkers(): number {
  return Math.max(1, availableParallelism());
}
