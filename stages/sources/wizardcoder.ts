// Magicoder-Evol-Instruct-110K (called `wizardcoder` in CodeFeedback-Filtered-Instruction): Evol-Instruct
// queries with `instruction` and `response`.
import { pairFromFields, type SourceAdapter } from "./adapter.js";

export const wizardcoderAdapter: SourceAdapter = {
  resource: "wizardcoder",
  dataset: "Magicoder-Evol-Instruct-110K",
  adapt: (row, index) => pairFromFields(row, index, "instruction", "response"),
};
