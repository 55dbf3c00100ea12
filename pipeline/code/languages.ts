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
  /** Usual file extension, without the dot. */
  extension: string;
  /** Markup and data formats are not programs: never executed, never an entry point. */
  program: boolean;
}

const LANGUAGES: Record<LanguageName, LanguageInfo> = {
  python: {
    aliases: ["py", "python3", "py3", "python2", "ipython", "ipython3", "pycon", "jupyter", "sage"],
    sandboxId: "python",
    extension: "py",
    program: true,
  },
  javascript: {
    aliases: ["js", "node", "nodejs", "node.js", "jsx", "mjs", "cjs", "ecmascript", "es6", "javascriptreact"],
    sandboxId: "nodejs",
    extension: "js",
    program: true,
  },
  typescript: {
    aliases: ["ts", "tsx", "mts", "cts", "typescriptreact", "deno"],
    sandboxId: "typescript",
    extension: "ts",
    program: true,
  },
  java: {
    aliases: ["jdk", "java8", "java11", "java17"],
    sandboxId: "java",
    extension: "java",
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
    extension: "cpp",
    program: true,
  },
  c: { aliases: ["h", "c99", "c11", "ansi-c", "c89"], sandboxId: "c", extension: "c", program: true },
  csharp: {
    aliases: ["c#", "cs", "c-sharp", "dotnet", ".net", "mono"],
    sandboxId: "csharp",
    extension: "cs",
    program: true,
  },
  go: { aliases: ["golang"], sandboxId: "go", extension: "go", program: true },
  rust: { aliases: ["rs"], sandboxId: "rust", extension: "rs", program: true },
  php: { aliases: ["php7", "php8", "php5"], sandboxId: "php", extension: "php", program: true },
  ruby: { aliases: ["rb", "jruby", "irb"], sandboxId: "ruby", extension: "rb", program: true },
  swift: { aliases: [], sandboxId: "swift", extension: "swift", program: true },
  kotlin: { aliases: ["kt", "kts"], sandboxId: "kotlin_script", extension: "kt", program: true },
  scala: { aliases: ["sc"], sandboxId: "scala", extension: "scala", program: true },
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
    extension: "sql",
    program: true,
  },
  shell: {
    aliases: ["bash", "sh", "zsh", "ksh", "shellscript", "shell-script", "console", "terminal", "cmd"],
    sandboxId: "bash",
    extension: "sh",
    program: true,
  },
  r: { aliases: ["rscript", "rlang", "splus"], sandboxId: "R", extension: "r", program: true },
  perl: { aliases: ["pl", "perl5", "pm"], sandboxId: "perl", extension: "pl", program: true },
  lua: { aliases: ["luajit"], sandboxId: "lua", extension: "lua", program: true },
  julia: { aliases: ["jl"], sandboxId: "julia", extension: "jl", program: true },
  haskell: { aliases: ["hs"], extension: "hs", program: true },
  dart: { aliases: ["flutter"], extension: "dart", program: true },
  elixir: { aliases: ["ex", "exs"], extension: "ex", program: true },
  objectivec: { aliases: ["objective-c", "objc", "obj-c", "m"], extension: "m", program: true },
  matlab: { aliases: ["octave"], extension: "m", program: true },
  fortran: { aliases: ["f90", "f95", "f77"], extension: "f90", program: true },
  powershell: { aliases: ["ps1", "pwsh", "ps"], extension: "ps1", program: true },
  vb: { aliases: ["vbnet", "vb.net", "visualbasic", "vba", "vbscript"], extension: "vb", program: true },
  fsharp: { aliases: ["f#", "fs"], extension: "fs", program: true },
  clojure: { aliases: ["clj", "cljs"], extension: "clj", program: true },
  erlang: { aliases: ["erl"], extension: "erl", program: true },
  ocaml: { aliases: ["ml"], extension: "ml", program: true },
  racket: { aliases: ["scheme", "rkt"], sandboxId: "racket", extension: "rkt", program: true },
  verilog: { aliases: ["systemverilog", "sv", "v"], sandboxId: "verilog", extension: "v", program: true },
  assembly: { aliases: ["asm", "nasm", "x86asm", "masm", "gas"], extension: "s", program: true },
  html: { aliases: ["htm", "xhtml", "html5", "vue", "svelte"], extension: "html", program: false },
  css: { aliases: ["scss", "sass", "less"], extension: "css", program: false },
  json: { aliases: ["jsonc", "json5", "jsonl"], extension: "json", program: false },
  yaml: { aliases: ["yml"], extension: "yaml", program: false },
  xml: { aliases: ["svg", "xsl", "xslt", "plist"], extension: "xml", program: false },
  markdown: { aliases: ["md", "mdx"], extension: "md", program: false },
  dockerfile: { aliases: ["docker", "containerfile"], extension: "dockerfile", program: false },
  makefile: { aliases: ["make", "mk", "cmake"], extension: "mk", program: false },
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

export function isLanguageName(value: string): value is LanguageName {
  return (LANGUAGE_NAMES as readonly string[]).includes(value);
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

export function fileExtension(language: LanguageName): string {
  return LANGUAGES[language].extension;
}

/** False for markup and data formats (html, css, json, yaml, xml, markdown, ...), which are never run. */
export function isProgrammingLanguage(language: LanguageName): boolean {
  return LANGUAGES[language].program;
}
