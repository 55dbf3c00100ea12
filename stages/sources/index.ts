// Reading a source's rows by its configured mapping: `columns` or `chat` (stages/sources/source.ts).
// `dialogues` sources are audited whole by validate, `none` (TACO) is read by the leetcode stage.
export { type Adapted, adaptChat, adaptColumns, type SeedPair, valueAt } from "./adapter.js";
export { type ChatKeys, chatPairs, chatTurns, detectChatKeys } from "./chat.js";
export {
  ADAPTER_NAMES,
  type ChatMapping,
  type ColumnMapping,
  mappingOf,
  PAPER_MAPPINGS,
  resourceOf,
  type SourceAdapterName,
  type SourceSpec,
  sourceSchema,
} from "./source.js";
