// The adapters by name, as `adapter:` in a source's config says. `none` downloads without normalizing
// (TACO, which the leetcode stage reads itself).
import type { SourceAdapter } from "./adapter.js";
import { evolinstructAdapter } from "./evolinstruct.js";
import { magicoderAdapter } from "./magicoder.js";
import { sharegptAdapter } from "./sharegpt.js";
import { wizardcoderAdapter } from "./wizardcoder.js";

export const ADAPTERS = {
  magicoder: magicoderAdapter,
  wizardcoder: wizardcoderAdapter,
  evolinstruct: evolinstructAdapter,
  sharegpt: sharegptAdapter,
} as const satisfies Record<string, SourceAdapter>;

export type AdapterName = keyof typeof ADAPTERS;
export const ADAPTER_NAMES = [...(Object.keys(ADAPTERS) as AdapterName[]), "none"] as const;

export type { Adapted, SourceAdapter } from "./adapter.js";
