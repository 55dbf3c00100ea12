// A source as `stages.download.sources` says it: where its files are (a hub dataset, or `path:` on the
// local or shared file system) and how normalize reads a row (`columns`, `chat`), or not at all
// (`dialogues` for the audit, `none` for TACO). The paper's adapters are names for such mappings.
import { z } from "zod";
import { FILE_FORMATS, type FileFormat } from "../../pipeline/readers/index.js";
import type { ChatKeys } from "./chat.js";

/** `columns:` a dotted PATH into the row for each field of the seed pair. */
export interface ColumnMapping {
  query: string;
  answer: string;
  /** unset or not a string in a row: the language is detected from the answer */
  lang?: string | undefined;
  /** unset or absent in a row: the row number is the record's only id */
  id?: string | undefined;
}

/** `chat:` where the turns are (unset keys are detected) and which pairs become seed pairs. */
export interface ChatMapping extends Partial<ChatKeys> {
  /** `first`: the first user/assistant pair; `each`: one record per pair */
  turns: "first" | "each";
  id?: string | undefined;
  lang?: string | undefined;
}

export const MAPPED_ADAPTERS = ["columns", "chat"] as const;
/** `dialogues`: whole dialogues, audited by validate; `none`: fetched only (TACO, read by leetcode). */
export const PLAIN_ADAPTERS = ["dialogues", "none"] as const;
export type SourceAdapterName = (typeof MAPPED_ADAPTERS)[number] | (typeof PLAIN_ADAPTERS)[number];

/** The paper's four instruction sets: each adapter name stands for its mapping, as configs/default.yaml spells it. */
export const PAPER_MAPPINGS: Record<string, Pick<SourceSpec, "adapter" | "columns" | "chat">> = {
  magicoder: {
    adapter: "columns",
    columns: { query: "problem", answer: "solution", lang: "lang", id: "index" },
  },
  wizardcoder: { adapter: "columns", columns: { query: "instruction", answer: "response" } },
  evolinstruct: { adapter: "columns", columns: { query: "instruction", answer: "output" } },
  sharegpt: {
    adapter: "chat",
    chat: {
      field: "conversations",
      role_key: "from",
      content_key: "value",
      user: "human",
      assistant: "gpt",
      system: "system",
      turns: "first",
      id: "id",
    },
  },
};

export const ADAPTER_NAMES = [...MAPPED_ADAPTERS, ...PLAIN_ADAPTERS, ...Object.keys(PAPER_MAPPINGS)];

export interface SourceSpec {
  /** short name: the prefix of record ids (`magicoder:000123`) */
  name: string;
  adapter: SourceAdapterName;
  /** the records' `resource` where it is not the name (a paper adapter under another name keeps its own) */
  resource?: string | undefined;
  /** a hub dataset `owner/name`, its revision and its files (paths or globs) */
  repo?: string | undefined;
  revision?: string | undefined;
  files?: string[] | undefined;
  /** instead of `repo`: a file, a directory or a glob on the local or shared file system */
  path?: string | undefined;
  /** how to read the files; by default from their names (.jsonl, .json, .parquet, optionally .gz) */
  format?: FileFormat | undefined;
  columns?: ColumnMapping | undefined;
  chat?: ChatMapping | undefined;
}

const NAME = /^[a-z0-9][a-z0-9_-]*$/;
const REPO = /^[\w.-]+\/[\w.-]+$/;
const COLUMN_KEYS = ["query", "answer", "lang", "id"];
const CHAT_KEYS = ["field", "role_key", "content_key", "user", "assistant", "system", "id", "lang", "turns"];

const rawSource = z
  .object({
    name: z.string().regex(NAME, "lowercase letters, digits, - and _"),
    adapter: z.string(),
    resource: z.string().regex(NAME, "lowercase letters, digits, - and _").optional(),
    repo: z.unknown().optional(),
    revision: z.string().min(1).optional(),
    files: z.array(z.string().min(1)).min(1).optional(),
    path: z.unknown().optional(),
    format: z.enum(FILE_FORMATS).optional(),
    columns: z.unknown().optional(),
    chat: z.unknown().optional(),
  })
  .strict();
type RawSource = z.infer<typeof rawSource>;

/** Every problem of one source, each naming the source and the key, as the config error prints them. */
function problemsOf(raw: RawSource): Array<{ key: (string | number)[]; message: string }> {
  const problems: Array<{ key: (string | number)[]; message: string }> = [];
  const say = (key: (string | number)[], message: string) =>
    problems.push({ key, message: `source ${raw.name}: ${message}` });
  if (!ADAPTER_NAMES.includes(raw.adapter)) {
    say(["adapter"], `unknown adapter ${JSON.stringify(raw.adapter)}; one of ${ADAPTER_NAMES.join(", ")}`);
  }
  if (raw.repo !== undefined && raw.path !== undefined) {
    say(
      ["path"],
      "`repo` and `path` together: give `repo` for a hub dataset or `path` for local files, not both",
    );
  } else if (raw.repo === undefined && raw.path === undefined) {
    say(["repo"], "needs `repo` (a hub dataset) or `path` (a local file, directory or glob)");
  } else if (raw.repo !== undefined) {
    if (typeof raw.repo !== "string" || !REPO.test(raw.repo))
      say(["repo"], "expected a dataset id like owner/name");
    if (raw.files === undefined) say(["files"], "a hub source needs `files` (paths or globs in the dataset)");
  } else {
    if (typeof raw.path !== "string" || raw.path === "") say(["path"], "`path` must be a non-empty string");
    if (raw.files !== undefined) say(["files"], "`files` is for hub sources; put a glob in `path` instead");
    if (raw.revision !== undefined)
      say(["revision"], "`revision` is for hub sources; a local file is fingerprinted");
  }
  const mappingKey = (key: "columns" | "chat", allowed: string[], required: string[]) => {
    const value = raw[key];
    if (value === undefined) {
      if (required.length > 0)
        say([key], `adapter ${key} needs \`${key}:\` (${required.join(", ")} at least)`);
      return;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      say([key], `\`${key}\` must be a mapping of keys to values`);
      return;
    }
    for (const name of required) {
      if (!(name in value)) say([key, name], `\`${key}.${name}\` is required`);
    }
    for (const [name, v] of Object.entries(value)) {
      if (!allowed.includes(name))
        say([key, name], `unknown key \`${key}.${name}\` (known: ${allowed.join(", ")})`);
      else if (name === "turns") {
        if (v !== "first" && v !== "each") say([key, name], "`chat.turns` is `first` or `each`");
      } else if (typeof v !== "string" || v === "") {
        say([key, name], `\`${key}.${name}\` must be a non-empty string (a PATH like meta.language)`);
      }
    }
  };
  // a paper adapter's name brings its own mapping, so neither key goes with it
  if (raw.adapter === "columns") mappingKey("columns", COLUMN_KEYS, ["query", "answer"]);
  else if (raw.columns !== undefined) say(["columns"], "`columns` is only for `adapter: columns`");
  if (raw.adapter === "chat" || raw.adapter === "dialogues") mappingKey("chat", CHAT_KEYS, []);
  else if (raw.chat !== undefined) say(["chat"], "`chat` is only for `adapter: chat` or `dialogues`");
  return problems;
}

function resolve(raw: RawSource): SourceSpec {
  const paper = PAPER_MAPPINGS[raw.adapter];
  const where =
    raw.path !== undefined
      ? { path: raw.path as string }
      : { repo: raw.repo as string, revision: raw.revision ?? "main", files: raw.files! };
  const spec: SourceSpec = {
    name: raw.name,
    adapter: (paper?.adapter ?? raw.adapter) as SourceAdapterName,
    ...where,
  };
  const resource = raw.resource ?? (paper ? raw.adapter : raw.name);
  if (resource !== raw.name) spec.resource = resource;
  if (raw.format) spec.format = raw.format;
  if (paper?.columns) spec.columns = paper.columns;
  else if (paper?.chat) spec.chat = paper.chat;
  else if (raw.columns) spec.columns = raw.columns as ColumnMapping;
  else if (raw.chat || spec.adapter === "chat") {
    spec.chat = { turns: "first", ...(raw.chat as Partial<ChatMapping> | undefined) };
  }
  return spec;
}

export const sourceSchema = rawSource
  .superRefine((raw, ctx) => {
    for (const problem of problemsOf(raw))
      ctx.addIssue({ code: "custom", path: problem.key, message: problem.message });
  })
  .transform(resolve);

/** The mapping normalize reads a downloaded file's rows with; files downloaded before mappings named only the adapter. */
export function mappingOf(file: {
  adapter: string;
  columns?: ColumnMapping | undefined;
  chat?: ChatMapping | undefined;
}): { columns: ColumnMapping } | { chat: ChatMapping } | undefined {
  if (file.columns) return { columns: file.columns };
  if (file.chat) return { chat: file.chat };
  const paper = PAPER_MAPPINGS[file.adapter];
  if (paper?.columns) return { columns: paper.columns };
  if (paper?.chat) return { chat: paper.chat };
  return undefined;
}

/** The `resource` of a file's records: the source's name unless the config (or a paper adapter) says otherwise. */
export function resourceOf(file: { source: string; adapter: string; resource?: string | undefined }): string {
  return file.resource ?? (PAPER_MAPPINGS[file.adapter] ? file.adapter : file.source);
}
