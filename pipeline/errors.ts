// Errors a user can hit. Each one says what went wrong, where, and what to do; the CLI prints the
// message without a stack trace and exits with `exitCode`.
import { accessSync, constants, existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { formatBytes } from "./log.js";

export class UserError extends Error {
  readonly exitCode: number;
  constructor(message: string, options?: { cause?: unknown; exitCode?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.exitCode = options?.exitCode ?? 2;
  }
}

/** The configuration is invalid: names the file and the key. */
export class ConfigError extends UserError {}

/** A stage needs something that is not configured (e.g. an LLM endpoint) and cannot go on. */
export class NotConfiguredError extends UserError {}

/** The run was interrupted (SIGINT/SIGTERM) after flushing; rerunning resumes. */
export class InterruptedError extends UserError {
  constructor(message: string) {
    super(message, { exitCode: 130 });
  }
}

/**
 * A service the run needs (the hub, a sandbox server) cannot be reached or keeps answering with
 * errors. Not the user's usage (2) nor a record's failure (1): nothing is wrong with the command, so
 * rerunning it once the service is back continues where it stopped.
 */
export class OperationalError extends UserError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { ...options, exitCode: 4 });
  }
}

const NO_ROOM: Record<string, string> = {
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is exceeded",
  EROFS: "the file system is read-only",
  SQLITE_FULL: "no space left on the device",
  // the WAL index (the -shm file) could not grow
  SQLITE_IOERR_SHMSIZE: "no space left on the device",
  SQLITE_READONLY: "the file system is read-only",
  SQLITE_CANTOPEN: "it cannot be created there (a read-only file system, or no permission)",
};

/** The data dir or a cache cannot be written: the disk is full, a quota spent, or it is read-only. */
export class DiskFullError extends UserError {}

/**
 * `error` as a DiskFullError when it is a full disk, a quota or a read-only file system (in a stage,
 * whose files are in `dir`); undefined for any other error.
 */
export function diskFull(error: unknown, stage?: { name: string; dir: string }): DiskFullError | undefined {
  if (error instanceof DiskFullError) return error;
  const given = (error ?? {}) as { code?: unknown; path?: unknown; setting?: unknown; syscall?: unknown };
  const { path, setting } = given;
  const making = given.syscall === "mkdir";
  const code = given.code === "ENOENT" && making ? mkdirRefusal(path) : given.code;
  if (typeof code !== "string") return undefined;
  // a folder the run may not make (a data dir without write permission) is no bug either
  const why =
    making && code === "EACCES"
      ? "no permission to make a folder there"
      : Object.hasOwn(NO_ROOM, code)
        ? NO_ROOM[code]
        : undefined;
  if (why === undefined) return undefined;
  const file =
    typeof path === "string"
      ? path
      : code.startsWith("SQLITE")
        ? "a cache (SQLite)"
        : (stage?.dir ?? "the data dir");
  const move = typeof setting === "string" ? `move it (${setting})` : "move data_dir (--data-dir)";
  const readOnly = ["EROFS", "EACCES", "SQLITE_READONLY", "SQLITE_CANTOPEN"].includes(code);
  // The stage's folder holds what it wrote and nothing else (records, manifest, work files), this
  // run's and those of the runs it resumes; the caches it shares with other stages live elsewhere.
  const written = stage
    ? `; ${stage.name} has written ${formatBytes(bytesUnder(stage.dir))} so far (its folder ${stage.dir}, caches aside)`
    : "";
  return new DiskFullError(
    `${stage ? `${stage.name}: ` : ""}cannot write ${file}: ${why} (${code})${written}. ` +
      "What was committed before is kept. " +
      `${readOnly ? "Make it writable again" : "Free space there"}, or ${move} to a ${readOnly ? "writable" : "larger"} disk, ` +
      "then run the same command again: it resumes where it stopped.",
    { cause: error },
  );
}

/** `error` (a failed write to a cache) marked with the cache's file and the setting that places it. */
export function inCache(error: unknown, path: string, setting: string): unknown {
  if (error instanceof Error) Object.assign(error, { path, setting });
  return error;
}

/**
 * Why a folder cannot be made under `path`'s nearest existing parent (EROFS, ENOSPC...), or ENOENT:
 * Node's recursive mkdir says ENOENT for a parent on a read-only file system, whatever the cause.
 */
function mkdirRefusal(path: unknown): string {
  if (typeof path !== "string") return "ENOENT";
  let parent = dirname(path);
  while (!existsSync(parent) && dirname(parent) !== parent) parent = dirname(parent);
  try {
    accessSync(parent, constants.W_OK);
    return "ENOENT";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return typeof code === "string" ? code : "ENOENT";
  }
}

function bytesUnder(dir: string): number {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .reduce((sum, e) => sum + statSync(join(e.parentPath, e.name)).size, 0);
  } catch {
    return 0;
  }
}

/** Socket errors that mean no server was reached at all (a connection dropped mid-answer is not one). */
const UNREACHED =
  /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|EPROTO|ERR_TLS_.*|ERR_SSL_.*|CERT_.*|.*_CERT.*|UNABLE_TO_.*)$/;

export function unreached(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === "string" && UNREACHED.test(code)) return true;
    // several addresses tried (localhost: ::1 and 127.0.0.1), each refused
    if (e instanceof AggregateError && e.errors.every(unreached)) return e.errors.length > 0;
  }
  return false;
}

/**
 * `text` without its closing full stop, for quoting one message inside another sentence: "... is
 * right.. Check the sandbox" is what quoting a whole sentence gave.
 */
export function clause(text: string): string {
  return text.trimEnd().replace(/\.+$/, "");
}
