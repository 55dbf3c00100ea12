// The languages the sandbox runs: SandboxFusion's language ids, how each one is compiled (where it is)
// and run, and which Debian toolchain it needs. Every command is an absolute path under /usr so the
// sandbox never depends on a PATH lookup, and never sees toolchains installed under /root or /usr/local.

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
}

export interface LanguageSpec {
  /** SandboxFusion's language id */
  id: string;
  /** other spellings requests may use (lowercase) */
  aliases: readonly string[];
  name: string;
  /** file the code is written to; may depend on the code (Java's public class) */
  sourceFile(code: string): string;
  compile?(ctx: LanguageContext): string[];
  run(ctx: LanguageContext): string[];
  /** executables (and jars) that must exist on the host; the first one is the language's main toolchain */
  requires(ctx: Pick<LanguageContext, "nodePath" | "esbuildPath">): (string | null)[];
  /** prints the toolchain version (first non-empty line of stdout or stderr is kept) */
  version(ctx: Pick<LanguageContext, "nodePath" | "esbuildPath">): string[];
  /**
   * Runtimes that reserve far more address space than they use (JVM, Go, V8, Mono) cannot live
   * under RLIMIT_AS; they get a larger address-space limit and bound their heap with a flag instead.
   */
  addressSpaceMb?(memoryMb: number): number | null;
  /** extra environment on top of the sandbox's own (PATH, HOME, LANG, TMPDIR) */
  env?: Readonly<Record<string, string>>;
  /** how long compile steps of this language typically need, to scale the compile-time memory */
  compileMemoryMb?: number;
  /** Debian packages providing the toolchain, for advice when it is missing */
  debianPackages: readonly string[];
}

// Serial GC and C1 only: short programs on few cores start faster; deep recursion is common in answers.
const JVM_FLAGS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Xss16m"];

function javaMainClass(code: string): string {
  // javac insists a public class lives in a file of its name; fall back to Main.
  const publicClass =
    /\bpublic\s+(?:final\s+|abstract\s+)*(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)/.exec(code);
  return publicClass?.[1] ?? "Main";
}

function javaEntryClass(code: string, fallback: string): string {
  // The class declaring `static void main` is the one to launch; it may not be the public one.
  const classes = [...code.matchAll(/\b(?:class|enum|record|interface)\s+([A-Za-z_$][\w$]*)/g)];
  const mainAt = code.search(/\bstatic\s+(?:public\s+)?void\s+main\s*\(/);
  if (mainAt < 0) return fallback;
  let entry = fallback;
  for (const match of classes) if ((match.index ?? 0) < mainAt) entry = match[1]!;
  return entry;
}

function scalaEntryObject(code: string): string {
  const withMain = /\bobject\s+([A-Za-z_$][\w$]*)\s+extends\s+App\b/.exec(code);
  if (withMain) return withMain[1]!;
  const objects = [...code.matchAll(/\bobject\s+([A-Za-z_$][\w$]*)/g)];
  const mainAt = code.search(/\bdef\s+main\s*\(/);
  let entry = objects[0]?.[1] ?? "Main";
  for (const match of objects) if (mainAt >= 0 && (match.index ?? 0) < mainAt) entry = match[1]!;
  return entry;
}

/** Big reservations (code cache, class space, GC tables) sit outside the heap the flag bounds. */
const jvmAddressSpace = (memoryMb: number) => memoryMb + 4096;
const unlimitedAddressSpace = () => null;

// OpenBLAS sizes its thread pool to the host; one thread keeps the process limit meaningful.
const PYTHON_ENV = {
  OPENBLAS_NUM_THREADS: "1",
  OMP_NUM_THREADS: "1",
  MPLBACKEND: "Agg",
  PYTHONDONTWRITEBYTECODE: "1",
};

/** What `go` and `go_test` share. Caches in the run dir, modules off the network (there is none). */
const GO_TOOLCHAIN = {
  requires: () => ["/usr/bin/go"],
  version: () => ["/usr/bin/go", "version"],
  addressSpaceMb: unlimitedAddressSpace,
  env: {
    GOCACHE: "/tmp/go-cache",
    GOPATH: "/tmp/go",
    GOFLAGS: "-mod=mod",
    GOPROXY: "off",
    GO111MODULE: "auto",
  },
  compileMemoryMb: 2048,
  debianPackages: ["golang-go"],
} satisfies Partial<LanguageSpec>;

/** javac for `java` and `junit`: classes into the work dir, with the JVM flags of the run. */
function javac(source: string, classPath?: string): string[] {
  const cp = classPath ? ["-cp", classPath] : [];
  return [
    "/usr/bin/javac",
    ...JVM_FLAGS.map((f) => `-J${f}`),
    "-encoding",
    "UTF-8",
    ...cp,
    "-d",
    ".",
    source,
  ];
}

// Debian's JUnit 5: the console launcher (with the Jupiter API and engine inside; its manifest adds
// the vintage engine), and JUnit 4 for tests written against it.
const JUNIT_CONSOLE = "/usr/share/java/junit-platform-console-standalone.jar";
const JUNIT4 = "/usr/share/java/junit4.jar";
const JUNIT_CLASSPATH = `${JUNIT_CONSOLE}:${JUNIT4}`;

export const LANGUAGE_SPECS: readonly LanguageSpec[] = [
  {
    id: "python",
    aliases: ["python3", "py", "py3"],
    name: "Python 3 (Debian, with numpy/pandas/scipy/sympy/networkx)",
    sourceFile: () => "main.py",
    run: (c) => ["/usr/bin/python3", "-u", c.source],
    requires: () => ["/usr/bin/python3"],
    version: () => ["/usr/bin/python3", "--version"],
    env: PYTHON_ENV,
    debianPackages: ["python3", "python3-numpy", "python3-pandas", "python3-scipy", "python3-sympy"],
  },
  {
    // SandboxFusion's `pytest`: the code is a test module; the run passes when every test does.
    id: "pytest",
    aliases: [],
    name: "Python tests (pytest, Debian)",
    sourceFile: () => "test_main.py",
    // No cache dir, no colours, the work dir as pytest's root, and no configuration or plugin from
    // anywhere else (an empty ini file instead of searching the parent dirs; no entry-point plugins).
    run: (c) => [
      "/usr/bin/python3",
      "-m",
      "pytest",
      "-q",
      "-c",
      "/dev/null",
      "-p",
      "no:cacheprovider",
      "--color=no",
      "--rootdir=.",
      c.source,
    ],
    requires: () => ["/usr/bin/python3", "/usr/bin/pytest-3"],
    version: () => ["/usr/bin/python3", "-m", "pytest", "--version"],
    env: { ...PYTHON_ENV, PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1" },
    debianPackages: ["python3", "python3-pytest"],
  },
  {
    id: "nodejs",
    aliases: ["javascript", "js", "node"],
    name: "JavaScript (Node.js)",
    sourceFile: () => "main.js",
    run: (c) => [c.nodePath, `--max-old-space-size=${c.memoryMb}`, c.source],
    requires: (c) => [c.nodePath],
    version: (c) => [c.nodePath, "--version"],
    addressSpaceMb: unlimitedAddressSpace,
    debianPackages: ["nodejs"],
  },
  {
    id: "typescript",
    aliases: ["ts"],
    name: "TypeScript (esbuild transpile, then Node.js; no type check)",
    sourceFile: () => "main.ts",
    compile: (c) => [
      c.esbuildPath ?? "esbuild",
      c.source,
      "--outfile=main.js",
      "--format=cjs",
      "--platform=node",
      "--target=node20",
      "--log-level=warning",
    ],
    run: (c) => [c.nodePath, `--max-old-space-size=${c.memoryMb}`, "main.js"],
    requires: (c) => [c.esbuildPath, c.nodePath],
    version: (c) => [c.esbuildPath ?? "esbuild", "--version"],
    addressSpaceMb: unlimitedAddressSpace,
    debianPackages: ["nodejs"],
  },
  {
    id: "c",
    aliases: ["c11", "c99", "gcc"],
    name: "C (gcc, -std=gnu17 -O2)",
    sourceFile: () => "main.c",
    compile: (c) => ["/usr/bin/gcc", "-std=gnu17", "-O2", "-o", "main", c.source, "-lm"],
    run: () => ["./main"],
    requires: () => ["/usr/bin/gcc"],
    version: () => ["/usr/bin/gcc", "--version"],
    debianPackages: ["gcc", "libc6-dev"],
  },
  {
    id: "cpp",
    aliases: ["c++", "cxx", "cc", "g++"],
    name: "C++ (g++, -std=gnu++17 -O2)",
    sourceFile: () => "main.cpp",
    compile: (c) => ["/usr/bin/g++", "-std=gnu++17", "-O2", "-o", "main", c.source, "-lm"],
    run: () => ["./main"],
    requires: () => ["/usr/bin/g++"],
    version: () => ["/usr/bin/g++", "--version"],
    compileMemoryMb: 2048,
    debianPackages: ["g++"],
  },
  {
    id: "java",
    aliases: ["jdk"],
    name: "Java (OpenJDK, javac + java)",
    sourceFile: (code) => `${javaMainClass(code)}.java`,
    compile: (c) => javac(c.source),
    run: (c) => [
      "/usr/bin/java",
      ...JVM_FLAGS,
      `-Xmx${c.memoryMb}m`,
      "-cp",
      ".",
      javaEntryClass(c.code, c.source.replace(/\.java$/, "")),
    ],
    requires: () => ["/usr/bin/javac", "/usr/bin/java"],
    version: () => ["/usr/bin/javac", "-version"],
    addressSpaceMb: jvmAddressSpace,
    compileMemoryMb: 1024,
    debianPackages: ["default-jdk-headless"],
  },
  {
    // SandboxFusion's `junit`: the code is a JUnit test class (Jupiter, or JUnit 4 through the
    // vintage engine); compiled against Debian's JUnit 5 and run by its console launcher, which exits
    // non-zero when a test fails or none is found.
    id: "junit",
    aliases: [],
    name: "Java tests (JUnit 5 console launcher, Debian)",
    sourceFile: (code) => `${javaMainClass(code)}.java`,
    compile: (c) => javac(c.source, JUNIT_CLASSPATH),
    run: (c) => [
      "/usr/bin/java",
      ...JVM_FLAGS,
      `-Xmx${c.memoryMb}m`,
      "-jar",
      JUNIT_CONSOLE,
      "--class-path",
      ".",
      "--scan-class-path",
      // every class, not only JUnit's default *Test/Test*/*Tests names: a `Solution` holds tests too
      "--include-classname=.*",
      "--disable-banner",
      "--disable-ansi-colors",
      "--details=tree",
      "--fail-if-no-tests",
    ],
    requires: () => ["/usr/bin/javac", "/usr/bin/java", JUNIT_CONSOLE, JUNIT4],
    version: () => ["/usr/bin/java", "-jar", JUNIT_CONSOLE, "--version"],
    addressSpaceMb: jvmAddressSpace,
    compileMemoryMb: 1024,
    debianPackages: ["default-jdk-headless", "junit5", "junit4"],
  },
  {
    id: "go",
    aliases: ["golang"],
    name: "Go",
    sourceFile: () => "main.go",
    compile: (c) => ["/usr/bin/go", "build", "-o", "main", c.source],
    run: () => ["./main"],
    ...GO_TOOLCHAIN,
  },
  {
    // SandboxFusion's `go_test`: the code is a `_test.go` file; compiled with `go test -c`, then the
    // test binary runs verbosely, so compile errors and test failures land in their own steps. (A
    // file without any Test function passes, as it does under `go test`.)
    id: "go_test",
    aliases: ["gotest"],
    name: "Go tests (go test)",
    sourceFile: () => "main_test.go",
    compile: (c) => ["/usr/bin/go", "test", "-c", "-o", "main.test", c.source],
    run: () => ["./main.test", "-test.v"],
    ...GO_TOOLCHAIN,
  },
  {
    id: "rust",
    aliases: ["rs"],
    name: "Rust (rustc, edition 2021)",
    sourceFile: () => "main.rs",
    compile: (c) => [
      "/usr/bin/rustc",
      "--edition",
      "2021",
      "-C",
      "opt-level=1",
      "-C",
      "debuginfo=0",
      "-C",
      "strip=debuginfo",
      "-o",
      "main",
      c.source,
    ],
    run: () => ["./main"],
    requires: () => ["/usr/bin/rustc"],
    version: () => ["/usr/bin/rustc", "--version"],
    compileMemoryMb: 2048,
    debianPackages: ["rustc"],
  },
  {
    id: "csharp",
    aliases: ["cs", "c#"],
    name: "C# (Mono mcs + mono)",
    sourceFile: () => "main.cs",
    compile: (c) => [
      "/usr/bin/mcs",
      "-langversion:experimental",
      "-r:System.Numerics.dll",
      "-out:main.exe",
      c.source,
    ],
    run: () => ["/usr/bin/mono", "main.exe"],
    requires: () => ["/usr/bin/mcs", "/usr/bin/mono"],
    version: () => ["/usr/bin/mono", "--version"],
    addressSpaceMb: unlimitedAddressSpace,
    env: { MONO_GC_PARAMS: "nursery-size=8m" },
    debianPackages: ["mono-mcs", "mono-runtime"],
  },
  {
    id: "php",
    aliases: ["php8"],
    name: "PHP (CLI)",
    sourceFile: () => "main.php",
    run: (c) => ["/usr/bin/php", "-d", `memory_limit=${c.memoryMb}M`, c.source],
    requires: () => ["/usr/bin/php"],
    version: () => ["/usr/bin/php", "--version"],
    debianPackages: ["php-cli"],
  },
  {
    id: "ruby",
    aliases: ["rb"],
    name: "Ruby",
    sourceFile: () => "main.rb",
    run: (c) => ["/usr/bin/ruby", c.source],
    requires: () => ["/usr/bin/ruby"],
    version: () => ["/usr/bin/ruby", "--version"],
    debianPackages: ["ruby"],
  },
  {
    id: "bash",
    aliases: ["sh", "shell"],
    name: "Bash",
    sourceFile: () => "main.sh",
    run: (c) => ["/usr/bin/bash", c.source],
    requires: () => ["/usr/bin/bash"],
    version: () => ["/usr/bin/bash", "--version"],
    debianPackages: ["bash"],
  },
  {
    id: "perl",
    aliases: ["pl"],
    name: "Perl 5",
    sourceFile: () => "main.pl",
    run: (c) => ["/usr/bin/perl", c.source],
    requires: () => ["/usr/bin/perl"],
    version: () => ["/usr/bin/perl", "-e", 'print "perl $^V\\n"'],
    debianPackages: ["perl"],
  },
  {
    id: "lua",
    aliases: ["lua5.4"],
    name: "Lua 5.4",
    sourceFile: () => "main.lua",
    run: (c) => ["/usr/bin/lua5.4", c.source],
    requires: () => ["/usr/bin/lua5.4"],
    version: () => ["/usr/bin/lua5.4", "-v"],
    debianPackages: ["lua5.4"],
  },
  {
    id: "R",
    aliases: ["r", "rscript"],
    name: "R (Rscript)",
    sourceFile: () => "main.R",
    run: (c) => ["/usr/bin/Rscript", "--vanilla", c.source],
    requires: () => ["/usr/bin/Rscript"],
    version: () => ["/usr/bin/Rscript", "--version"],
    // R maps ~250 MB before the first line runs (its libraries, OpenBLAS's buffers): under a
    // 256 MB address-space limit it loses its default packages or fails its first allocation.
    // The memory cgroup (or the data limit) still bounds what it really uses.
    addressSpaceMb: (memoryMb) => memoryMb + 512,
    env: { OPENBLAS_NUM_THREADS: "1", OMP_NUM_THREADS: "1" },
    debianPackages: ["r-base-core"],
  },
  {
    id: "sql",
    aliases: ["sqlite", "sqlite3"],
    name: "SQL (SQLite 3 CLI, in-memory database)",
    sourceFile: () => "main.sql",
    // `-bail` stops at the first error so a broken statement fails the run, as a DBMS client would.
    run: (c) => ["/usr/bin/sqlite3", "-bail", "-batch", ":memory:", `.read ${c.source}`],
    requires: () => ["/usr/bin/sqlite3"],
    version: () => ["/usr/bin/sqlite3", "--version"],
    debianPackages: ["sqlite3"],
  },
  {
    id: "scala",
    aliases: ["sc"],
    name: "Scala 2 (scalac + scala)",
    sourceFile: () => "main.scala",
    compile: (c) => ["/usr/bin/scalac", `-J-Xmx${c.memoryMb}m`, "-nobootcp", "-d", ".", c.source],
    run: (c) => ["/usr/bin/scala", `-J-Xmx${c.memoryMb}m`, "-nobootcp", "-cp", ".", scalaEntryObject(c.code)],
    requires: () => ["/usr/bin/scalac", "/usr/bin/scala", "/usr/bin/java"],
    version: () => ["/usr/bin/scala", "-version"],
    addressSpaceMb: jvmAddressSpace,
    env: { JAVA_OPTS: "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss16m" },
    compileMemoryMb: 1024,
    debianPackages: ["scala", "default-jdk-headless"],
  },
];

const BY_NAME = new Map<string, LanguageSpec>();
for (const spec of LANGUAGE_SPECS) {
  BY_NAME.set(spec.id, spec);
  BY_NAME.set(spec.id.toLowerCase(), spec);
  for (const alias of spec.aliases) BY_NAME.set(alias, spec);
}

/** The spec for a SandboxFusion language id or one of its aliases (case-insensitive), if known. */
export function findLanguage(language: string): LanguageSpec | undefined {
  return BY_NAME.get(language) ?? BY_NAME.get(language.trim().toLowerCase());
}

export function languageIds(): string[] {
  return LANGUAGE_SPECS.map((spec) => spec.id);
}
