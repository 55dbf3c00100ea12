// Canonical programming-language names used across the pipeline, the aliases model answers and
// datasets spell them with, and the SandboxFusion language id each one runs under.

interface LanguageInfo {
  /** Spellings seen in fence info strings, dataset fields and file extensions (lowercase). */
  aliases: readonly string[];
  /** SandboxFusion /run_code language id, when the language can be executed. */
  sandboxId?: string;
  /** A markup or data format, not a program: never executed, never an entry point. */
  markup?: true;
}

const TABLE = {
  python: {
    aliases: ["py", "python3", "py3", "python2", "ipython", "ipython3", "pycon", "jupyter", "sage"],
    sandboxId: "python",
  },
  javascript: {
    aliases: ["js", "node", "nodejs", "node.js", "jsx", "mjs", "cjs", "ecmascript", "es6", "javascriptreact"],
    sandboxId: "nodejs",
  },
  typescript: { aliases: ["ts", "tsx", "mts", "cts", "typescriptreact", "deno"], sandboxId: "typescript" },
  java: { aliases: ["jdk", "java8", "java11", "java17"], sandboxId: "java" },
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
  },
  c: { aliases: ["h", "c99", "c11", "ansi-c", "c89"], sandboxId: "c" },
  csharp: { aliases: ["c#", "cs", "c-sharp", "dotnet", ".net", "mono"], sandboxId: "csharp" },
  go: { aliases: ["golang"], sandboxId: "go" },
  rust: { aliases: ["rs"], sandboxId: "rust" },
  php: { aliases: ["php7", "php8", "php5"], sandboxId: "php" },
  ruby: { aliases: ["rb", "jruby", "irb"], sandboxId: "ruby" },
  swift: { aliases: [], sandboxId: "swift" },
  // not run although the sandbox serves kotlin_script: Debian's Kotlin (1.3) lacks the stdlib that
  // model-written Kotlin calls (lowercase(), maxByOrNull), so its verdicts would drop correct code
  kotlin: { aliases: ["kt", "kts"] },
  scala: { aliases: ["sc"], sandboxId: "scala" },
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
  },
  shell: {
    aliases: ["bash", "sh", "zsh", "ksh", "shellscript", "shell-script", "console", "terminal", "cmd"],
    sandboxId: "bash",
  },
  r: { aliases: ["rscript", "rlang", "splus"], sandboxId: "R" },
  perl: { aliases: ["pl", "perl5", "pm"], sandboxId: "perl" },
  lua: { aliases: ["luajit"], sandboxId: "lua" },
  julia: { aliases: ["jl"], sandboxId: "julia" },
  haskell: { aliases: ["hs"] },
  dart: { aliases: ["flutter"] },
  elixir: { aliases: ["ex", "exs"] },
  objectivec: { aliases: ["objective-c", "objc", "obj-c", "m"] },
  matlab: { aliases: ["octave"] },
  fortran: { aliases: ["f90", "f95", "f77"] },
  powershell: { aliases: ["ps1", "pwsh", "ps"] },
  vb: { aliases: ["vbnet", "vb.net", "visualbasic", "vba", "vbscript"] },
  fsharp: { aliases: ["f#", "fs"] },
  clojure: { aliases: ["clj", "cljs"] },
  erlang: { aliases: ["erl"] },
  ocaml: { aliases: ["ml"] },
  racket: { aliases: ["scheme", "rkt"], sandboxId: "racket" },
  verilog: { aliases: ["systemverilog", "sv", "v"], sandboxId: "verilog" },
  assembly: { aliases: ["asm", "nasm", "x86asm", "masm", "gas"] },
  html: { aliases: ["htm", "xhtml", "html5", "vue", "svelte"], markup: true },
  css: { aliases: ["scss", "sass", "less"], markup: true },
  json: { aliases: ["jsonc", "json5", "jsonl"], markup: true },
  yaml: { aliases: ["yml"], markup: true },
  xml: { aliases: ["svg", "xsl", "xslt", "plist"], markup: true },
  markdown: { aliases: ["md", "mdx"], markup: true },
  dockerfile: { aliases: ["docker", "containerfile"], markup: true },
  makefile: { aliases: ["make", "mk", "cmake"], markup: true },
} satisfies Record<string, LanguageInfo>;

export type LanguageName = keyof typeof TABLE;
const LANGUAGES: Record<LanguageName, LanguageInfo> = TABLE;
/** Every canonical name, in the table's order. */
export const LANGUAGE_NAMES = Object.keys(TABLE) as [LanguageName, ...LanguageName[]];

const ALIAS_TO_NAME: ReadonlyMap<string, LanguageName> = (() => {
  const map = new Map<string, LanguageName>();
  for (const name of LANGUAGE_NAMES) {
    map.set(name, name);
    for (const alias of LANGUAGES[name].aliases) map.set(alias, name);
  }
  // Spellings of the display names (BabelCode writes "C++", "CSharp", "Javascript", "TypeScript").
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
  return !LANGUAGES[language].markup;
}
