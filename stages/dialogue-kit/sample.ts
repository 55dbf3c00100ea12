// Which filtered records a dialogue stage works on: those whose language the stage takes (by default
// every language the sandbox runs), and of those a seeded sample of `count` when a count is set
// (the sample is the store's: `ctx.sample`, pipeline/store/output-index.ts).
import { canonicalLanguage, type LanguageName } from "../../pipeline/code/index.js";
import { runnable } from "../../pipeline/execution/index.js";
import type { SampleOptions } from "../../pipeline/store/output-index.js";
import type { Selection } from "./config.js";

/** The record's language if the selection takes it. */
export function selectedLanguage(
  record: Readonly<Record<string, unknown>>,
  selection: Selection,
): LanguageName | undefined {
  const lang = canonicalLanguage(typeof record.lang === "string" ? record.lang : undefined);
  if (!lang || !runnable(lang)) return undefined;
  if (selection.languages === "runnable") return lang;
  return selection.languages.some((l) => canonicalLanguage(l) === lang) ? lang : undefined;
}

/** The selection as `ctx.sample` takes it. */
export function sampleOptions(selection: Selection): SampleOptions {
  return {
    field: "lang",
    where: (lang) => selectedLanguage({ lang }, selection) !== undefined,
    count: selection.count,
    seed: selection.seed,
  };
}
