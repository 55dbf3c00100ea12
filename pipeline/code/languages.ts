// Canonical programming-language names used across the pipeline, the aliases model answers and
// datasets spell them with, and the SandboxFusion language id each one runs under.

export const LANGUAGE_NAMES = [
  "python",
  "javascript",
  "typescript",
  "java",
  "cpp",
  "c",
  "csharp",
  "go",
  "rust",
  "php",
  "ruby",
  "swift",
  "kotlin",
  "scala",
  "sql",
  "shell",
  "r",
  "perl",
  "lua",
  "julia",
  "haskell",
  "dart",
  "elixir",
  "objectivec",
  "matlab",
  "fortran",
  "powershell",
  "vb",
  "fsharp",
  "clojure",
  "erlang",
  "ocaml",
  "racket",
  "verilog",
  "assembly",
  "html",
  "css",
  "json",
  "yaml",
  "xml",
  "markdown",
  "dockerfile",
  "makefile",
] as const;

export type LanguageName = (typeof LANGUAGE_NAMES)[number];

interface LanguageInfo {
  /** Spellings seen in fence info strings, dataset fields and file extensions (lowercase). */
  aliases: readonly string[];
  /** SandboxFusion /run_code language id, when the language can be executed. */
  sandboxId?: string;
  /** Markup and data formats are not programs: never executed, never an entry point. */
  program: boolean;
}

const LANGUAGES: Record<LanguageName, LanguageInfo> = {
  python: {
    aliases: ["py", "python3", "py3", "python2", "ipython", "ipython3", "pycon", "jupyter", "sage"],
    sandboxId: "python",
    program: true,
  },
  javascript: {
    aliases: ["js", "node", "nodejs", "node.js", "jsx", "mjs", "cjs", "ecmascript", "es6", "javascriptreact"],
    sandboxId: "nodejs",
    program: true,
  },
  typescript: {
    aliases: ["ts", "tsx", "mts", "cts", "typescriptreact", "deno"],
    sandboxId: "typescript",
    program: true,
  },
  java: {
    aliases: ["jdk", "java8", "java11", "java17"],
    sandboxId: "java",
    program: true,
  },
  cpp: {
    aliases: [
      "c++",
      "cxx",
      "cc",
      "hpp",
      "hxx",
      "cplusplus",
      "c++11",
      "c++14",
      "c++17",
      "c++20",
      "cpp11",
      "cpp17",
    ],
    sandboxId: "cpp",
    program: true,
  },
  c: { aliases: ["h", "c99", "c11", "ansi-c", "c89"], sandboxId: "c", program: true },
  csharp: {
    aliases: ["c#", "cs", "c-sharp", "dotnet", ".net", "mono"],
    sandboxId: "csharp",
    program: true,
  },
  go: { aliases: ["golang"], sandboxId: "go", program: true },
  rust: { aliases: ["rs"], sandboxId: "rust", program: true },
  php: { aliases: ["php7", "php8", "php5"], sandboxId: "php", program: true },
  ruby: { aliases: ["rb", "jruby", "irb"], sandboxId: "ruby", program: true },
  swift: { aliases: [], sandboxId: "swift", program: true },
  // not run although the sandbox serves kotlin_script: Debian's Kotlin (1.3) lacks the stdlib that
  // model-written Kotlin calls (lowercase(), maxByOrNull), so its verdicts would drop correct code
  kotlin: { aliases: ["kt", "kts"], program: true },
  scala: { aliases: ["sc"], sandboxId: "scala", program: true },
  sql: {
    aliases: [
      "mysql",
      "postgresql",
      "postgres",
      "psql",
      "sqlite",
      "sqlite3",
      "plsql",
      "tsql",
      "t-sql",
      "pgsql",
    ],
    sandboxId: "sql",
    program: true,
  },
  shell: {
    aliases: ["bash", "sh", "zsh", "ksh", "shellscript", "shell-script", "console", "terminal", "cmd"],
    sandboxId: "bash",
    program: true,
  },
  r: { aliases: ["rscript", "rlang", "splus"], sandboxId: "R", program: true },
  perl: { aliases: ["pl", "perl5", "pm"], sandboxId: "perl", program: true },
  lua: { aliases: ["luajit"], sandboxId: "lua", program: true },
  julia: { aliases: ["jl"], sandboxId: "julia", program: true },
  haskell: { aliases: ["hs"], program: true },
  dart: { aliases: ["flutter"], program: true },
  elixir: { aliases: ["ex", "exs"], program: true },
  objectivec: { aliases: ["objective-c", "objc", "obj-c", "m"], program: true },
  matlab: { aliases: ["octave"], program: true },
  fortran: { aliases: ["f90", "f95", "f77"], program: true },
  powershell: { aliases: ["ps1", "pwsh", "ps"], program: true },
  vb: { aliases: ["vbnet", "vb.net", "visualbasic", "vba", "vbscript"], program: true },
  fsharp: { aliases: ["f#", "fs"], program: true },
  clojure: { aliases: ["clj", "cljs"], program: true },
  erlang: { aliases: ["erl"], program: true },
  ocaml: { aliases: ["ml"], program: true },
  racket: { aliases: ["scheme", "rkt"], sandboxId: "racket", program: true },
  verilog: { aliases: ["systemverilog", "sv", "v"], sandboxId: "verilog", program: true },
  assembly: { aliases: ["asm", "nasm", "x86asm", "masm", "gas"], program: true },
  html: { aliases: ["htm", "xhtml", "html5", "vue", "svelte"], program: false },
  css: { aliases: ["scss", "sass", "less"], program: false },
  json: { aliases: ["jsonc", "json5", "jsonl"], program: false },
  yaml: { aliases: ["yml"], program: false },
  xml: { aliases: ["svg", "xsl", "xslt", "plist"], program: false },
  markdown: { aliases: ["md", "mdx"], program: false },
  dockerfile: { aliases: ["docker", "containerfile"], program: false },
  makefile: { aliases: ["make", "mk", "cmake"], program: false },
};

const ALIAS_TO_NAME: ReadonlyMap<string, LanguageName> = (() => {
  const map = new Map<string, LanguageName>();
  for (const name of LANGUAGE_NAMES) {
    map.set(name, name);
    for (const alias of LANGUAGES[name].aliases) map.set(alias, name);
  }
  // Spellings of the display names (BabelCode writes "C++", "CSharp", "Javascript", "TypeScript").
  map.set("csharp", "csharp");
  map.set("objective c", "objectivec");
  map.set("visual basic", "vb");
  return map;
})();

/** Maps a fence tag, dataset field or display name ("Python3", "C++", "node.js", "R") to its canonical name. */
export function canonicalLanguage(tag: string | undefined | null): LanguageName | undefined {
  if (!tag) return undefined;
  let key = tag.trim().toLowerCase();
  // Fence info strings come as "python", "{.python}", "language-python", "python title=x.py" or "py:main.py".
  key = key.replace(/^\{\s*\.?/, "").replace(/\}$/, "");
  key = key.replace(/^(?:language|lang)-/, "");
  const direct = ALIAS_TO_NAME.get(key);
  if (direct) return direct;
  const firstWord = key.split(/[\s,{:;]+/)[0] ?? "";
  return ALIAS_TO_NAME.get(firstWord);
}

/** The SandboxFusion language id ("javascript" -> "nodejs", "shell" -> "bash", "r" -> "R"), if it runs. */
export function sandboxLanguageId(language: LanguageName): string | undefined {
  return LANGUAGES[language].sandboxId;
}

/** Reverse of sandboxLanguageId: "nodejs" -> "javascript", "R" -> "r"; also accepts any alias. */
export function languageFromSandboxId(id: string): LanguageName | undefined {
  for (const name of LANGUAGE_NAMES) if (LANGUAGES[name].sandboxId === id) return name;
  return canonicalLanguage(id);
}

/** False for markup and data formats (html, css, json, yaml, xml, markdown, ...), which are never run. */
export function isProgrammingLanguage(language: LanguageName): boolean {
  return LANGUAGES[language].program;
}
