// Magicoder-OSS-Instruct-75K: problems written by an LLM from open-source code snippets. Each row has
// `problem` and `solution`, plus the language OSS-Instruct itself assigned (`lang`).
import { isObject, pairFromFields, type SourceAdapter } from "./adapter.js";

export const magicoderAdapter: SourceAdapter = {
  resource: "magicoder",
  dataset: "Magicoder-OSS-Instruct-75K",
  adapt(row, index) {
    const pair = pairFromFields(row, index, "problem", "solution");
    if ("reject" in pair || !isObject(row)) return pair;
    const lang = typeof row.lang === "string" ? row.lang : undefined;
    const rowId =
      typeof row.index === "number" || typeof row.index === "string" ? String(row.index) : undefined;
    return { ...pair, declaredLang: lang, rowId };
  },
};
