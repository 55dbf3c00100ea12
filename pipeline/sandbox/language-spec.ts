// What the sandbox knows of one language: the spec each entry of the language table (languages.ts)
// fills in, and the request facts its compile and run commands are built from. Apart from the table
// so that the helpers the table shares (language-shared.ts) can name these types without a circle.

/** Everything a compile or run command needs to know about one request. */
export interface LanguageContext {
  /** the source file name inside the work dir, e.g. `main.py` or `Main.java` */
  source: string;
  /** the request's code, for languages whose entry point is named inside it */
  code: string;
  /** the per-run memory limit in MiB (used by runtimes that size their own heap) */
  memoryMb: number;
  /** where the node binary lives (the one running the pipeline) */
  nodePath: string;
  /** where esbuild's native binary is visible inside the sandbox, when it was found */
  esbuildPath: string | null;
  /** where the C# entry point (support/csharp-entry.cs) is visible inside the sandbox */
  csharpEntry: string;
  /** where jest's preload (support/jest-preload.cjs) is visible inside the sandbox */
  jestPreload: string;
  /** Go's build cache: the warm one mounted read-only (go-cache.ts), else a private one in /tmp */
  goCache: string;
}

/** The toolchain paths a spec's requires() and version() see (the host's). */
export type ToolchainContext = Pick<
  LanguageContext,
  "nodePath" | "esbuildPath" | "csharpEntry" | "jestPreload"
>;

export interface LanguageSpec {
  /** SandboxFusion's language id */
  id: string;
  /** other spellings requests may use (lowercase) */
  aliases: readonly string[];
  name: string;
  /** file the code is written to; may depend on the code (Java's public class) */
  sourceFile(code: string): string;
  /** what is written to the source file, when it is not the code as sent */
  sourceText?(code: string): string;
  compile?(ctx: LanguageContext): string[];
  run(ctx: LanguageContext): string[];
  /** executables (and jars) that must exist on the host; the first one is the language's main toolchain */
  requires(ctx: ToolchainContext): (string | null)[];
  /** prints the toolchain version (first non-empty line of stdout or stderr is kept) */
  version(ctx: ToolchainContext): string[];
  /**
   * Runtimes that reserve far more address space than they use (JVM, Go, V8, Mono) cannot live
   * under RLIMIT_AS; they get a larger address-space limit and bound their heap with a flag instead.
   */
  addressSpaceMb?(memoryMb: number): number | null;
  /** extra environment on top of the sandbox's own (PATH, HOME, LANG, TMPDIR) */
  env?: Readonly<Record<string, string>> | ((ctx: LanguageContext) => Readonly<Record<string, string>>);
  /** work done once before the language's first run (awaited outside the run's timers) */
  prepare?(): Promise<void>;
  /** how much memory compile steps of this language typically need, to scale the compile-time memory */
  compileMemoryMb?: number;
  /** the run step compiles too (go test, kotlinc -script): it gets compileMemoryMb at least */
  compilesInRun?: boolean;
  /** Debian packages providing the toolchain, for advice when it is missing */
  debianPackages: readonly string[];
}
