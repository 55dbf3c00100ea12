// Python-Code-23k-ShareGPT: conversations `[{from: human|gpt, value}]`. The seed pair is the first human
// turn that a gpt turn answers; later turns depend on it and would not stand alone as a query.
import { checkNonEmpty, isObject, notAnObject, type SourceAdapter } from "./adapter.js";

export const sharegptAdapter: SourceAdapter = {
  resource: "sharegpt",
  dataset: "Python-Code-23k-ShareGPT",
  adapt(row, index) {
    if (!isObject(row)) return notAnObject(row, index);
    const turns = row.conversations;
    if (turns === undefined || turns === null) {
      return { reject: "missing-field", detail: `row ${index} has no \`conversations\`` };
    }
    if (!Array.isArray(turns)) {
      return { reject: "non-string-field", detail: `row ${index}: \`conversations\` is not a list` };
    }
    for (let t = 0; t + 1 < turns.length; t++) {
      const human = turns[t];
      const gpt = turns[t + 1];
      if (!isObject(human) || !isObject(gpt) || human.from !== "human" || gpt.from !== "gpt") continue;
      if (typeof human.value !== "string" || typeof gpt.value !== "string") {
        return {
          reject: "non-string-field",
          detail: `row ${index}: turn ${t} or ${t + 1} has a non-string \`value\``,
        };
      }
      const pair = checkNonEmpty(human.value, gpt.value, index);
      if ("reject" in pair) return pair;
      const rowId = typeof row.id === "string" || typeof row.id === "number" ? String(row.id) : undefined;
      return { ...pair, rowId };
    }
    return { reject: "no-human-gpt-pair", detail: `row ${index} has no human turn followed by a gpt turn` };
  },
};
