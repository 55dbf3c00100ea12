// Which toolchains this machine has, where the sandbox sees what lives outside /usr (node, esbuild,
// the C# entry point, jest's preload), and the toolchains' versions for `pipeline sandbox languages`.
import { execFile } from "node:child_process";
import { accessSync, constants as fsConstants } from "node:fs";
import { createRequire } from "node:module";
import { arch, platform } from "node:os";
import { fileURLToPath } from "node:url";
import type { ToolchainContext } from "./language-spec.js";
import { LANGUAGE_SPECS, type LanguageSpec } from "./languages.js";

/** Host paths of toolchains outside /usr and where they appear inside the sandbox. */
export interface ToolchainPaths {
  host: ToolchainContext;
  inside: ToolchainContext;
  /** [host, inside] pairs to bind read-only */
  binds: [string, string][];
}

const NODE_INSIDE = "/opt/sandbox-tools/node";
const ESBUILD_INSIDE = "/opt/sandbox-tools/esbuild";
const CSHARP_ENTRY_INSIDE = "/opt/sandbox-tools/csharp-entry.cs";
const JEST_PRELOAD_INSIDE = "/opt/sandbox-tools/jest-preload.cjs";

function findEsbuild(): string | null {
  try {
    const require = createRequire(import.meta.url);
    const fromEsbuild = createRequire(require.resolve("esbuild"));
    const binary = fromEsbuild.resolve(`@esbuild/${platform()}-${arch()}/bin/esbuild`);
    accessSync(binary, fsConstants.X_OK);
    return binary;
  } catch {
    return null;
  }
}

let cachedPaths: ToolchainPaths | null = null;

export function toolchainPaths(): ToolchainPaths {
  if (cachedPaths) return cachedPaths;
  const nodeHost = process.execPath;
  const esbuildHost = findEsbuild();
  const csharpEntryHost = fileURLToPath(new URL("./support/csharp-entry.cs", import.meta.url));
  const jestPreloadHost = fileURLToPath(new URL("./support/jest-preload.cjs", import.meta.url));
  const binds: [string, string][] = [
    [csharpEntryHost, CSHARP_ENTRY_INSIDE],
    [jestPreloadHost, JEST_PRELOAD_INSIDE],
  ];
  // /usr is visible as is (but /usr/local is masked), so only binaries elsewhere need a bind.
  const visible = (path: string) => path.startsWith("/usr/") && !path.startsWith("/usr/local/");
  let nodeInside = nodeHost;
  if (!visible(nodeHost)) {
    binds.push([nodeHost, NODE_INSIDE]);
    nodeInside = NODE_INSIDE;
  }
  let esbuildInside: string | null = null;
  if (esbuildHost) {
    binds.push([esbuildHost, ESBUILD_INSIDE]);
    esbuildInside = ESBUILD_INSIDE;
  }
  cachedPaths = {
    host: {
      nodePath: nodeHost,
      esbuildPath: esbuildHost,
      csharpEntry: csharpEntryHost,
      jestPreload: jestPreloadHost,
    },
    inside: {
      nodePath: nodeInside,
      esbuildPath: esbuildInside,
      csharpEntry: CSHARP_ENTRY_INSIDE,
      jestPreload: JEST_PRELOAD_INSIDE,
    },
    binds,
  };
  return cachedPaths;
}

function executable(path: string | null): boolean {
  if (path === null) return false;
  try {
    // a jar on a class path is read, not executed
    accessSync(path, path.endsWith(".jar") ? fsConstants.R_OK : fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The required executables of `spec` that this machine lacks (empty when it can run). */
export function missingToolchain(spec: LanguageSpec): string[] {
  const required = spec.requires(toolchainPaths().host);
  return required
    .map((path, i) => path ?? `${spec.id} toolchain #${i + 1}`)
    .filter((_, i) => !executable(required[i] ?? null));
}

export interface LanguageInfo {
  id: string;
  name: string;
  aliases: readonly string[];
  /** first line of the toolchain's version output, or null when unavailable or it fails */
  version: string | null;
  available: boolean;
  /** what is missing and how to install it, when unavailable */
  missing?: string;
}

function firstLine(text: string): string | null {
  return (
    text
      .split("\n")
      .map((line) => line.trim())
      // a JVM's start-up warnings come before kotlinc's version
      .find((line) => line.length > 0 && !line.includes("VM warning:")) ?? null
  );
}

/**
 * The first line its version command prints, or null when that command fails: what a tool prints
 * as it refuses an option it lacks is no version.
 */
export function versionOf(spec: Pick<LanguageSpec, "version">): Promise<string | null> {
  const [file, ...args] = spec.version(toolchainPaths().host);
  return new Promise((resolve) => {
    execFile(
      file!,
      args,
      { timeout: 20_000, env: { PATH: "/usr/bin:/bin", HOME: "/tmp" } },
      (error, stdout, stderr) => {
        resolve(error ? null : (firstLine(String(stdout)) ?? firstLine(String(stderr))));
      },
    );
  });
}

/** Every language the sandbox knows, with its toolchain version and whether it can run here. */
export async function listLanguages(): Promise<LanguageInfo[]> {
  return Promise.all(
    LANGUAGE_SPECS.map(async (spec) => {
      const missing = missingToolchain(spec);
      const info: LanguageInfo = {
        id: spec.id,
        name: spec.name,
        aliases: spec.aliases,
        version: missing.length === 0 ? await versionOf(spec) : null,
        available: missing.length === 0,
      };
      if (missing.length > 0) {
        info.missing = `${missing.join(", ")} not found; install Debian package(s) ${spec.debianPackages.join(" ")} (scripts/install.sh does)`;
      }
      return info;
    }),
  );
}
