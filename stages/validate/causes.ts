// Why a block cannot say anything about its code. Some blocks are not worth sending (no language, a
// language the sandbox lacks, an install command); most are run first, and a failure or a time-out is
// then read for a cause that is not the code's fault: a package the sandbox does not have, a network
// or a display it does not give, input nobody types, tables nobody created, code elided by the author.
// Only what is left is a real failure.
import type { CodeBlock, LanguageName } from "../../pipeline/code/index.js";
import { isProgrammingLanguage } from "../../pipeline/code/index.js";
import type { ExecutionResult } from "../../pipeline/execution/index.js";
import { runnable } from "../../pipeline/execution/index.js";
import type { NotRunnableReason } from "./config.js";

export interface NotRunnable {
  reason: NotRunnableReason;
  detail: string;
}

// Fence tags that mark program output or prose, not code.
const OUTPUT_TAGS = new Set([
  "text",
  "txt",
  "plaintext",
  "plain",
  "output",
  "out",
  "result",
  "log",
  "none",
  "nohighlight",
]);

const INSTALL_COMMAND =
  /^\s*(?:\$\s*)?(?:sudo\s+)?(?:pip3?|python3?\s+-m\s+pip|npm|yarn|pnpm|apt(?:-get)?|brew|conda|gem|cargo|composer|dotnet|go)\s+(?:install|add|get)\b/m;

/** A reason not to run the block at all, or undefined when it should be run. */
export function beforeRunning(block: CodeBlock): NotRunnable | undefined {
  const tag = block.tag.toLowerCase().split(/[\s{,]/)[0] ?? "";
  if (block.lang === undefined) {
    if (tag === "" || OUTPUT_TAGS.has(tag)) {
      return tag === ""
        ? {
            reason: "fragment",
            detail: "no fence tag and no recognisable language (pseudo-code or a fragment)",
          }
        : { reason: "not-code", detail: `a \`${tag}\` block shows output or prose, not code` };
    }
    if (/^pseudo/.test(tag)) return { reason: "fragment", detail: `a \`${tag}\` block is pseudo-code` };
    return { reason: "language-unavailable", detail: `\`${tag}\` is no language the sandbox runs` };
  }
  if (!isProgrammingLanguage(block.lang)) {
    return { reason: "not-code", detail: `${block.lang} is markup or data, not a program` };
  }
  if (!runnable(block.lang)) {
    return { reason: "language-unavailable", detail: `the sandbox has no ${block.lang} runtime` };
  }
  if (block.lang === "shell" && INSTALL_COMMAND.test(block.code)) {
    return {
      reason: "needs-network",
      detail: "installs packages, which needs the network the sandbox does not give",
    };
  }
  return undefined;
}

/** The sandbox said it cannot run the language at all (pipeline/execution's typed status). */
export function languageMissing(result: ExecutionResult): NotRunnable | undefined {
  if (result.status !== "language-unavailable") return undefined;
  return { reason: "language-unavailable", detail: result.message ?? "" };
}

/** Missing-module messages per toolchain; the first group names the module. */
const MISSING_PACKAGE: RegExp[] = [
  /ModuleNotFoundError: No module named '([^']+)'/,
  /ImportError: No module named '?([\w.]+)/,
  /Cannot find module '([^']+)'/,
  /Could not resolve "([^"]+)"/,
  /error: package ([\w.]+) does not exist/,
  /fatal error: ([\w./+-]+): No such file or directory/,
  /cannot find package "([^"]+)"/,
  /no required module provides package ([^\s;:]+)/,
  /package ([\w./-]+) is not in (?:GOROOT|std)/,
  /can't find crate for `(\w+)`/,
  /use of undeclared crate or module `(\w+)`/,
  /maybe a missing crate `(\w+)`/,
  /cannot load such file -- ([\w/.-]+)/,
  /Can't locate ([\w/.]+\.pm) in @INC/,
  /there is no package called [‘'"]([^’'"]+)/,
  /module '([^']+)' not found/,
  /Failed opening required '([^']*vendor\/autoload\.php)'/,
  /The type or namespace name `?'?([\w.]+)'? (?:could not be found|does not exist in the namespace)[^\n]*assembly reference/,
];

const NETWORK =
  /Temporary failure in name resolution|Name or service not known|No address associated with hostname|getaddrinfo|ENOTFOUND|EAI_AGAIN|Network is unreachable|UnknownHostException|Could not resolve host|Failed to establish a new connection|NewConnectionError|ECONNREFUSED|Connection refused/;

const NO_DISPLAY =
  /no display name and no \$DISPLAY|couldn't connect to display|cannot open display|Can't open display|HeadlessException|_tkinter\.TclError|No available video device|could not connect to display/i;

/** Browser JavaScript: the DOM is not in Node. */
const BROWSER_ONLY =
  /ReferenceError: (?:document|window|alert|localStorage|navigator|\$|jQuery) is not defined/;

const END_OF_INPUT = /EOFError: EOF when reading a line|java\.util\.NoSuchElementException|EOFError/;

// Static signs, used only to explain a failure or a time-out the run already showed.
const READS_INPUT =
  /\binput\s*\(|raw_input\s*\(|sys\.stdin|\bscanf\s*\(|\bgetchar\s*\(|\bgets\b|\bcin\s*>>|getline\s*\(\s*(?:std::)?cin|System\.in\b|Console\.Read(?:Line|Key)?\s*\(|os\.Stdin|fmt\.Scan|stdin\s*\(\)|process\.stdin|readline\.createInterface|\bprompt\s*\(|STDIN|<STDIN>|io\.read|StdIn\.|\breadLine\s*\(|^\s*read\s+(?:-\w+\s+)*\w+/m;
const SERVES_OR_FETCHES =
  /\.listen\s*\(|app\.run\s*\(|serve_forever|uvicorn\.run|ListenAndServe|ServerSocket|SpringApplication\.run|HttpServer\.create|requests\.(?:get|post|put|delete|Session)|urlopen|urllib\.request|\bfetch\s*\(|axios|https?\.get\s*\(|socket\.(?:socket|connect)|HttpClient|HttpURLConnection|\bcurl\b|\bwget\b/;
const DRAWS_WINDOWS =
  /tkinter|mainloop\s*\(|\bturtle\b|pygame|javax\.swing|java\.awt|JFrame|QApplication|wx\.App|cv2\.imshow|\bdocument\.|\bwindow\./;

/** Code its author elided or left as a placeholder. */
const ELIDED =
  /^\s*(?:\.\.\.|…)\s*$|^\s*(?:#|\/\/|--|\/\*)\s*(?:\.\.\.|…)|\.\.\.\s*(?:rest|your|other|existing|more)\b|\b(?:your|rest of(?: the)?) code (?:here|goes here)\b|<(?:your|insert)[ _-][^>]+>/im;
/** An author's marker, in capitals: a to-do app's `todo` list is no placeholder. */
const TODO_MARKER = /\bTODO\b/;

const SQL_DIALECT =
  /\bAUTO_INCREMENT\b|^\s*DELIMITER\b|\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:PROCEDURE|FUNCTION)\b|\bSERIAL\b|\bSELECT\s+TOP\s+\d|\bDECLARE\s+@|^\s*GO\s*$|\bENGINE\s*=|\bSHOW\s+TABLES\b|^\s*DESCRIBE\b|::\w+|\bILIKE\b|\bIDENTITY\s*\(|\bNVARCHAR\s*\(\s*MAX/im;

/** The module a missing-package message names, if any. */
export function missingPackage(text: string): string | undefined {
  for (const pattern of MISSING_PACKAGE) {
    const match = pattern.exec(text);
    if (match) return match[1];
  }
  return undefined;
}

/**
 * The cause of a failed or timed-out run that is not the code's fault, or undefined when the failure
 * is the code's own.
 */
export function afterRunning(
  result: ExecutionResult,
  block: { code: string; lang: LanguageName; complete: boolean },
): NotRunnable | undefined {
  if (result.status !== "compile-error" && result.status !== "runtime-error" && result.status !== "timeout") {
    return undefined;
  }
  const { code, lang } = block;
  const text = `${result.stderr}\n${result.stdout}`;
  if (result.status === "timeout") {
    if (SERVES_OR_FETCHES.test(code)) {
      return {
        reason: "needs-network",
        detail: "timed out serving or fetching over a network the sandbox does not give",
      };
    }
    if (READS_INPUT.test(code))
      return { reason: "needs-input", detail: "timed out waiting for input nobody types" };
    if (DRAWS_WINDOWS.test(code))
      return { reason: "needs-gui", detail: "timed out in a window's event loop" };
    return undefined;
  }
  const missing = missingPackage(text);
  if (missing)
    return { reason: "missing-package", detail: `needs ${missing}, which the sandbox does not have` };
  const network = NETWORK.exec(text);
  if (network) return { reason: "needs-network", detail: `no network in the sandbox (${network[0]})` };
  const display = NO_DISPLAY.exec(text);
  if (display) return { reason: "needs-gui", detail: `no display in the sandbox (${display[0]})` };
  if (BROWSER_ONLY.test(text))
    return { reason: "needs-gui", detail: "browser JavaScript (the DOM is not in Node)" };
  if (END_OF_INPUT.test(text) && READS_INPUT.test(code)) {
    return { reason: "needs-input", detail: "reads interactive input, and nobody types any" };
  }
  if (lang === "sql") {
    if (/no such table/i.test(text) || (/no such column/i.test(text) && !/\bCREATE\s+TABLE\b/i.test(code))) {
      return { reason: "sql-without-schema", detail: "queries tables the block does not create" };
    }
    if (/syntax error|Parse error/i.test(text) && SQL_DIALECT.test(code)) {
      return {
        reason: "language-unavailable",
        detail: "written for another SQL dialect; the sandbox runs SQLite",
      };
    }
  }
  if (lang === "shell" && /No such file or directory|can't open file|command not found/i.test(text)) {
    return { reason: "fragment", detail: "a command line for files or tools outside the dialogue" };
  }
  if (!block.complete)
    return { reason: "fragment", detail: "the fence never closes (the answer was cut off)" };
  if (ELIDED.test(code) || TODO_MARKER.test(code))
    return { reason: "fragment", detail: "code elided or left as a placeholder by its author" };
  return undefined;
}

/** The first line of the error that explains a failure, for tags and reject details. */
export function errorLine(result: ExecutionResult): string {
  if (result.status === "timeout") return result.message ?? "timed out";
  if (result.status === "sandbox-error" || result.status === "language-unavailable")
    return result.message ?? "sandbox error";
  const lines = `${result.stderr}\n${result.stdout}`
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  // a traceback's last line, or a compiler's first "error" line, names the problem
  // "error" in gcc, javac, rustc, mcs; Go prints `file:line:col: message` under a `# package` line
  const compilerError =
    lines.find((l) => /\berror\b/i.test(l) && !/^Traceback/.test(l)) ??
    lines.find((l) => /:\d+(?::\d+)?:\s/.test(l) && !l.startsWith("#"));
  const raised =
    [...lines].reverse().find((l) => /(?:Error|Exception|panic)\b/.test(l) && !/^\s*at\s/.test(l)) ??
    // a tool that says "error" in lower case (sqlite3: "Parse error near line 1: ...", then the
    // statement and "^--- error here"): its first such line
    lines.find((l) => /\berror\b/i.test(l));
  const chosen =
    result.status === "runtime-error" ? (raised ?? lines[lines.length - 1]) : (compilerError ?? lines[0]);
  const line =
    chosen ?? `exit code ${result.exitCode ?? "unknown"}${result.signal ? ` (${result.signal})` : ""}`;
  return line.length > 300 ? `${line.slice(0, 300)}...` : line;
}
