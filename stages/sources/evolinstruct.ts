// Evol-Instruct-Code-80k-v1: one JSON array of `{instruction, output}`.
import { pairFromFields, type SourceAdapter } from "./adapter.js";

export const evolinstructAdapter: SourceAdapter = {
  resource: "evolinstruct",
  dataset: "Evol-Instruct-Code-80k-v1",
  adapt: (row, index) => pairFromFields(row, index, "instruction", "output"),
};
