// The parts several entries of the language table (languages.ts) share: the JVM's flags, javac and
// JUnit's jars, how the class or object to launch is found in the code, the Go toolchain, Python's
// environment, and the address-space limits of runtimes that reserve more than they use.
import { GO_BUILD_ENV, warmGoCache } from "./go-cache.js";
import type { LanguageContext, LanguageSpec } from "./language-spec.js";

// Serial GC and C1 only: short programs on few cores start faster; deep recursion is common in answers.
export const JVM_FLAGS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Xss16m"];
/** The flags of a program's own JVM: SandboxFusion runs Java with assertions on (`assert` fails the run). */
export const JAVA_RUN_FLAGS = [...JVM_FLAGS, "-ea"];

export function javaMainClass(code: string): string {
  // javac insists a public class lives in a file of its name; fall back to Main.
  const publicClass =
    /\bpublic\s+(?:final\s+|abstract\s+)*(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)/.exec(code);
  return publicClass?.[1] ?? "Main";
}

export function javaEntryClass(code: string, fallback: string): string {
  // The class declaring `static void main` is the one to launch; it may not be the public one.
  const classes = [...code.matchAll(/\b(?:class|enum|record|interface)\s+([A-Za-z_$][\w$]*)/g)];
  const mainAt = code.search(/\bstatic\s+(?:public\s+)?void\s+main\s*\(/);
  if (mainAt < 0) return fallback;
  let entry = fallback;
  for (const match of classes) if ((match.index ?? 0) < mainAt) entry = match[1]!;
  return entry;
}

export function scalaEntryObject(code: string): string {
  const withMain = /\bobject\s+([A-Za-z_$][\w$]*)\s+extends\s+App\b/.exec(code);
  if (withMain) return withMain[1]!;
  const objects = [...code.matchAll(/\bobject\s+([A-Za-z_$][\w$]*)/g)];
  const mainAt = code.search(/\bdef\s+main\s*\(/);
  let entry = objects[0]?.[1] ?? "Main";
  for (const match of objects) if (mainAt >= 0 && (match.index ?? 0) < mainAt) entry = match[1]!;
  return entry;
}

/** Big reservations (code cache, class space, GC tables) sit outside the heap the flag bounds. */
export const jvmAddressSpace = (memoryMb: number) => memoryMb + 4096;
export const unlimitedAddressSpace = () => null;

// OpenBLAS sizes its thread pool to the host; one thread keeps the process limit meaningful.
export const PYTHON_ENV = {
  OPENBLAS_NUM_THREADS: "1",
  OMP_NUM_THREADS: "1",
  MPLBACKEND: "Agg",
  PYTHONDONTWRITEBYTECODE: "1",
};

/**
 * What `go` and `go_test` share: the shared warm build cache (go-cache.ts), modules off the network
 * (there is none); without a go.mod, imports resolve in GOPATH, where Debian's Go libraries
 * (testify) live.
 */
export const GO_TOOLCHAIN = {
  requires: () => ["/usr/bin/go"],
  version: () => ["/usr/bin/go", "version"],
  addressSpaceMb: unlimitedAddressSpace,
  env: (c: LanguageContext) => ({ GOCACHE: c.goCache, ...GO_BUILD_ENV }),
  prepare: warmGoCache,
  compileMemoryMb: 2048,
  debianPackages: ["golang-go", "golang-github-stretchr-testify-dev"],
} satisfies Partial<LanguageSpec>;

/** javac for `java` and `junit`: classes into the work dir, with the JVM flags of the run. */
export function javac(source: string, classPath?: string): string[] {
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
export const JUNIT_CONSOLE = "/usr/share/java/junit-platform-console-standalone.jar";
export const JUNIT4 = "/usr/share/java/junit4.jar";
// Debian's javatuples, on every Java class path as in SandboxFusion's image.
export const JAVATUPLES = "/usr/share/java/javatuples.jar";
export const JAVA_CLASSPATH = `.:${JAVATUPLES}`;
export const JUNIT_CLASSPATH = `${JUNIT_CONSOLE}:${JUNIT4}:${JAVATUPLES}`;

// Debian's Node.js libraries (lodash): where `require` looks after the work dir's node_modules.
export const NODE_ENV = { NODE_PATH: "/usr/share/nodejs" };

// Debian's jest, run by the pipeline's node. Its packages also live in /usr/lib/nodejs, where only
// Debian's own node looks unasked.
export const JEST = "/usr/share/nodejs/jest/bin/jest.js";
export const JEST_NODE_PATH = "/usr/share/nodejs:/usr/lib/nodejs";
const BABEL = "/usr/share/nodejs/@babel";

/**
 * SandboxFusion's jest set-up (babel-jest with preset-env for the running node and
 * preset-typescript), given on the command line so that no config file the request brings (a
 * babel.config.js, a package.json) is read. Debian's modules are not compiled, as SandboxFusion's
 * node_modules are not: babel on lodash alone costs seconds.
 */
export const JEST_CONFIG = JSON.stringify({
  transform: {
    "\\.[cm]?[jt]sx?$": [
      "/usr/share/nodejs/babel-jest",
      {
        configFile: false,
        babelrc: false,
        presets: [[`${BABEL}/preset-env`, { targets: { node: "current" } }], `${BABEL}/preset-typescript`],
      },
    ],
  },
  transformIgnorePatterns: ["/node_modules/", "^/usr/(share|lib)/nodejs/"],
});

/**
 * The namespaces a .NET 6 console project imports implicitly, put before the code of a C# program
 * (mcs knows no `global using`); `#line 1` keeps the compiler's line numbers the code's own.
 */
export function csharpWithImplicitUsings(code: string): string {
  const namespaces = [
    "System",
    "System.Collections.Generic",
    "System.IO",
    "System.Linq",
    "System.Net.Http",
    "System.Threading",
    "System.Threading.Tasks",
  ];
  return `${namespaces.map((ns) => `using ${ns};`).join(" ")}\n#line 1\n${code}`;
}
