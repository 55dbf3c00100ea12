// The languages the sandbox runs: SandboxFusion's language ids, how each one is compiled (where it is)
// and run, and which Debian toolchain it needs. Every command is an absolute path under /usr so the
// sandbox never depends on a PATH lookup, and never sees toolchains installed under /root or /usr/local.
// The spec's shape is in language-spec.ts, the parts entries share in language-shared.ts.
import {
  csharpWithImplicitUsings,
  GO_TOOLCHAIN,
  JAVA_CLASSPATH,
  JAVA_RUN_FLAGS,
  JEST,
  JEST_CONFIG,
  JEST_NODE_PATH,
  JUNIT_CLASSPATH,
  JUNIT_CONSOLE,
  JUNIT4,
  javac,
  javaEntryClass,
  javaMainClass,
  jvmAddressSpace,
  NODE_ENV,
  PYTHON_ENV,
  scalaEntryObject,
  unlimitedAddressSpace,
} from "./language-shared.js";
import type { LanguageSpec } from "./language-spec.js";

export type { LanguageContext, LanguageSpec } from "./language-spec.js";

export const LANGUAGE_SPECS: readonly LanguageSpec[] = [
  {
    id: "python",
    aliases: ["python3", "py", "py3"],
    name: "Python 3 (Debian, with numpy/pandas/scipy/sympy/networkx/requests)",
    sourceFile: () => "main.py",
    run: (c) => ["/usr/bin/python3", "-u", c.source],
    requires: () => ["/usr/bin/python3"],
    version: () => ["/usr/bin/python3", "--version"],
    env: PYTHON_ENV,
    debianPackages: [
      "python3",
      "python3-numpy",
      "python3-pandas",
      "python3-scipy",
      "python3-sympy",
      "python3-requests",
    ],
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
    name: "JavaScript (Node.js, with Debian's lodash)",
    sourceFile: () => "main.js",
    run: (c) => [c.nodePath, `--max-old-space-size=${c.memoryMb}`, c.source],
    requires: (c) => [c.nodePath],
    version: (c) => [c.nodePath, "--version"],
    addressSpaceMb: unlimitedAddressSpace,
    env: NODE_ENV,
    debianPackages: ["nodejs", "node-lodash"],
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
    env: NODE_ENV,
    debianPackages: ["nodejs", "node-lodash"],
  },
  {
    // SandboxFusion's `jest`: the code is a TypeScript test file, next to the request's files; every
    // test file there runs, and the run passes when every test does. Babel compiles in the run step.
    id: "jest",
    aliases: [],
    name: "TypeScript tests (Debian's jest, babel-jest)",
    sourceFile: () => "main.test.ts",
    run: (c) => [
      c.nodePath,
      // named here, not in NODE_OPTIONS: a sandbox mounts the tools its command line names
      "--require",
      c.jestPreload,
      `--max-old-space-size=${c.memoryMb}`,
      JEST,
      "--ci",
      // one process: no workers to fork under the process limit, no worker start-up per run
      "--runInBand",
      "--no-cache",
      "--watchman=false",
      "--config",
      JEST_CONFIG,
    ],
    requires: (c) => [JEST, c.nodePath],
    version: (c) => [
      "/usr/bin/env",
      `NODE_PATH=${JEST_NODE_PATH}`,
      c.nodePath,
      "--require",
      c.jestPreload,
      JEST,
      "--version",
    ],
    addressSpaceMb: unlimitedAddressSpace,
    env: { NODE_PATH: JEST_NODE_PATH },
    compileMemoryMb: 512,
    compilesInRun: true,
    debianPackages: ["jest", "node-babel7", "node-lodash"],
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
    compile: (c) => javac(c.source, JAVA_CLASSPATH),
    run: (c) => [
      "/usr/bin/java",
      ...JAVA_RUN_FLAGS,
      `-Xmx${c.memoryMb}m`,
      "-cp",
      JAVA_CLASSPATH,
      javaEntryClass(c.code, c.source.replace(/\.java$/, "")),
    ],
    requires: () => ["/usr/bin/javac", "/usr/bin/java"],
    version: () => ["/usr/bin/javac", "-version"],
    addressSpaceMb: jvmAddressSpace,
    compileMemoryMb: 1024,
    debianPackages: ["default-jdk-headless", "libjavatuples-java"],
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
      ...JAVA_RUN_FLAGS,
      `-Xmx${c.memoryMb}m`,
      "-jar",
      JUNIT_CONSOLE,
      "--class-path",
      JAVA_CLASSPATH,
      "--scan-class-path",
      // every class, not only JUnit's default *Test/Test*/*Tests names: a `Solution` holds tests too
      "--include-classname=.*",
      "--disable-banner",
      "--disable-ansi-colors",
      "--details=tree",
      "--fail-if-no-tests",
    ],
    requires: () => ["/usr/bin/javac", "/usr/bin/java", JUNIT_CONSOLE, JUNIT4],
    // Debian's console launcher has no --version, and its jars carry no version of their own
    version: () => ["/usr/bin/dpkg-query", `--showformat=JUnit \${Version}\\n`, "--show", "junit5"],
    addressSpaceMb: jvmAddressSpace,
    compileMemoryMb: 1024,
    debianPackages: ["default-jdk-headless", "junit5", "junit4", "libjavatuples-java"],
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
    // SandboxFusion's `go_test`: the code is a `_test.go` file that `go test -v` builds and runs in
    // one step under the run timeout, as upstream times it (a compile error is a failed run). A file
    // without any Test function passes, as it does under `go test`.
    id: "go_test",
    aliases: ["gotest"],
    name: "Go tests (go test, with Debian's testify)",
    sourceFile: () => "main_test.go",
    run: (c) => ["/usr/bin/go", "test", "-v", c.source],
    ...GO_TOOLCHAIN,
    compilesInRun: true,
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
      // std as the shared library Debian ships on the default library path: half the link work
      "-C",
      "prefer-dynamic",
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
    name: "C# (Mono mcs + mono; .NET 6's implicit usings, DEBUG asserts on)",
    sourceFile: () => "main.cs",
    // As a `dotnet new console` project builds in Debug: implicit usings, DEBUG and TRACE defined,
    // and a failing Debug.Assert ends the run (support/csharp-entry.cs, the entry point).
    sourceText: csharpWithImplicitUsings,
    compile: (c) => [
      "/usr/bin/mcs",
      "-langversion:experimental",
      "-define:DEBUG",
      "-define:TRACE",
      // the implicit usings may repeat the code's own
      "-nowarn:105",
      "-r:System.Numerics.dll",
      "-r:System.Net.Http.dll",
      "-main:SandboxEntry",
      "-out:main.exe",
      c.source,
      c.csharpEntry,
    ],
    run: () => ["/usr/bin/mono", "main.exe"],
    requires: () => ["/usr/bin/mcs", "/usr/bin/mono"],
    version: () => ["/usr/bin/mono", "--version"],
    addressSpaceMb: unlimitedAddressSpace,
    env: { MONO_GC_PARAMS: "nursery-size=8m" },
    debianPackages: ["mono-mcs", "mono-runtime", "libmono-system-net-http4.0-cil"],
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
    name: "Perl 5 (with Debian's Test::Deep, Data::Compare)",
    sourceFile: () => "main.pl",
    run: (c) => ["/usr/bin/perl", c.source],
    requires: () => ["/usr/bin/perl"],
    version: () => ["/usr/bin/perl", "-e", 'print "perl $^V\\n"'],
    debianPackages: ["perl", "libtest-deep-perl", "libdata-compare-perl"],
  },
  {
    id: "lua",
    aliases: ["lua5.4"],
    name: "Lua 5.4 (with Debian's luaunit)",
    sourceFile: () => "main.lua",
    run: (c) => ["/usr/bin/lua5.4", c.source],
    requires: () => ["/usr/bin/lua5.4"],
    version: () => ["/usr/bin/lua5.4", "-v"],
    debianPackages: ["lua5.4", "lua-unit"],
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
  {
    // SandboxFusion's `D_ut`: D with its `unittest` blocks compiled in. The D runtime runs them
    // before main, and fails the run when one does; a program without any runs main alone.
    id: "D_ut",
    aliases: ["d", "d_ut", "dlang"],
    name: "D with unit tests (LDC, -unittest)",
    sourceFile: () => "main.d",
    compile: (c) => ["/usr/bin/ldc2", "-unittest", "-of=main", c.source],
    run: () => ["./main"],
    requires: () => ["/usr/bin/ldc2"],
    version: () => ["/usr/bin/ldc2", "--version"],
    compileMemoryMb: 1024,
    debianPackages: ["ldc"],
  },
  {
    // SandboxFusion's `kotlin_script`: a .kts script, compiled and run by kotlinc in one step.
    id: "kotlin_script",
    aliases: ["kts", "kotlin"],
    name: "Kotlin script (kotlinc -script, Debian)",
    sourceFile: () => "main.kts",
    run: (c) => ["/usr/bin/kotlinc", `-J-Xmx${c.memoryMb}m`, "-script", c.source],
    requires: () => ["/usr/bin/kotlinc", "/usr/bin/java"],
    version: () => ["/usr/bin/kotlinc", "-version"],
    addressSpaceMb: jvmAddressSpace,
    env: { JAVA_OPTS: "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss16m" },
    compileMemoryMb: 1024,
    compilesInRun: true,
    debianPackages: ["kotlin", "default-jdk-headless"],
  },
  {
    id: "racket",
    aliases: ["rkt"],
    name: "Racket (with rackunit)",
    sourceFile: () => "main.rkt",
    run: (c) => ["/usr/bin/racket", c.source],
    requires: () => ["/usr/bin/racket"],
    version: () => ["/usr/bin/racket", "--version"],
    addressSpaceMb: unlimitedAddressSpace,
    debianPackages: ["racket"],
  },
  {
    // SandboxFusion's `verilog`: a design with its testbench, compiled by Icarus Verilog as
    // SystemVerilog 2012 and simulated by vvp.
    id: "verilog",
    aliases: ["systemverilog", "iverilog"],
    name: "Verilog / SystemVerilog (Icarus Verilog, -g2012)",
    sourceFile: () => "main.sv",
    compile: (c) => ["/usr/bin/iverilog", "-g2012", "-o", "main.vvp", c.source],
    run: () => ["/usr/bin/vvp", "-n", "main.vvp"],
    requires: () => ["/usr/bin/iverilog", "/usr/bin/vvp"],
    version: () => ["/usr/bin/iverilog", "-V"],
    debianPackages: ["iverilog"],
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

/**
 * SandboxFusion's languages and modes this sandbox does not serve, with what is missing: asked for,
 * they get a SandboxError saying so, not "unknown language".
 */
export const UNSERVED_LANGUAGES: Readonly<Record<string, string>> = {
  julia: "Julia is not packaged in Debian 12 (bookworm)",
  swift: "Swift is not packaged in Debian 12 (bookworm)",
  lean: "Lean 4 and its Mathlib are not packaged in Debian",
  cuda: "CUDA mode needs an NVIDIA GPU and the CUDA toolkit, which this sandbox does not expose",
  python_gpu: "GPU mode needs an NVIDIA GPU and CUDA-enabled PyTorch, which this sandbox does not expose",
};

/** Why a SandboxFusion language id this sandbox knows of is not served, if it is one of those. */
export function unservedLanguage(language: string): string | undefined {
  const id = language.trim().toLowerCase();
  return Object.hasOwn(UNSERVED_LANGUAGES, id) ? UNSERVED_LANGUAGES[id] : undefined;
}
