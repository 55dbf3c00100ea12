// Where a dataset lives on the hub, as the config says it for dedup's benchmark sets; `download`'s
// hub sources (stages/sources/source.ts) name the same keys, and both are fetched by fetch.ts.
import { z } from "zod";
import { FILE_FORMATS } from "../../pipeline/readers/index.js";

export const hubFilesSchema = z
  .object({
    /** dataset id on the hub, `owner/name` */
    repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/, "expected a dataset id like owner/name"),
    /** branch, tag or commit id; the commit it resolves to is recorded with every downloaded file */
    revision: z.string().min(1).default("main"),
    /** paths in the dataset, or globs (`*`, `?`, `**`), e.g. `ALL/train-*.parquet` */
    files: z.array(z.string().min(1)).min(1),
    /** how to read the files; by default from their names (.jsonl, .json, .parquet, optionally .gz) */
    format: z.enum(FILE_FORMATS).optional(),
  })
  .strict();
export type HubFilesSpec = z.infer<typeof hubFilesSchema>;
