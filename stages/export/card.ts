// The dataset card (README.md): the hub's YAML metadata (licence, tasks, size, one config per file set
// so the viewer and `datasets.load_dataset` find the Parquet files), then what a reader needs to trust
// the data: which methods ran, counts per method and language next to the paper's (a deviation over
// 20% marked), every source a released row came from with its licence, revision and commit, the
// method step by step, the models that wrote it, and BibTeX for the paper and the sources.
import { stringify } from "yaml";
import { type DialogueMethod, signedPercent } from "../../pipeline/dialogue.js";
import { citations } from "./citations.js";
import type { ExportConfig } from "./config.js";
import { KNOWN_SOURCE_LICENSES } from "./config.js";
import { compareLanguages } from "./languages.js";
import { type AuditVerdict, auditsOnly, type ExportSummary, type SourceUse } from "./stats.js";

const SIZE_CATEGORIES: [number, string][] = [
  [1_000, "n<1K"],
  [10_000, "1K<n<10K"],
  [100_000, "10K<n<100K"],
  [1_000_000, "100K<n<1M"],
  [10_000_000, "1M<n<10M"],
];

export function sizeCategory(n: number): string {
  for (const [limit, name] of SIZE_CATEGORIES) if (n < limit) return name;
  return "n>10M";
}

const FULL_FEATURES = [
  { name: "id", dtype: "int64" },
  { name: "dialogue_id", dtype: "string" },
  { name: "method", dtype: "string" },
  { name: "lang", dtype: "string" },
  { name: "sources", sequence: "string" },
  {
    name: "messages",
    list: [
      { name: "role", dtype: "string" },
      { name: "content", dtype: "string" },
    ],
  },
  { name: "system", dtype: "string" },
  { name: "validation", dtype: "string" },
  { name: "validation_tags", sequence: "string" },
];

/** The card of what export released (its summary), with the methods the run declares. */
export function datasetCard(
  config: ExportConfig["card"],
  summary: Omit<ExportSummary, "dir" | "files">,
  facts: {
    declared: readonly DialogueMethod[];
    parquet: boolean;
    full: boolean;
    /** whether the release has the filtered-instruction files (default: it has) */
    filtered?: boolean;
  },
): string {
  const filtered = facts.filtered ?? true;
  const { code_feedback: released, filtered_instruction: pairs } = summary;
  // a run that only audits datasets made nothing the paper's shape or models could describe
  const audit = auditsOnly(summary);
  const ext = facts.parquet ? "parquet" : "jsonl";
  // the release's file sets, in the order the card lists them: one hub config each
  const sets = [
    {
      name: "code-feedback",
      rows: released.dialogues,
      features: FULL_FEATURES.filter((f) => f.name === "id" || f.name === "messages"),
      columns: "`id` (integer), `messages` (`role`, `content`)",
    },
    ...(facts.full
      ? [
          {
            name: "code-feedback-full",
            rows: released.dialogues,
            features: FULL_FEATURES,
            columns: FULL_FEATURES.map((f) => `\`${f.name}\``).join(", "),
          },
        ]
      : []),
    ...(filtered
      ? [
          {
            name: "filtered-instruction",
            rows: pairs.rows,
            features: ["query", "answer", "resource", "lang"].map((name) => ({ name, dtype: "string" })),
            columns: "`query`, `answer`, `resource`, `lang`",
          },
        ]
      : []),
  ];
  const metadata = {
    pretty_name: config.pretty_name,
    license: config.license,
    task_categories: config.task_categories,
    language: config.language,
    tags: config.tags,
    size_categories: [sizeCategory(Math.max(released.dialogues, pairs.rows))],
    configs: sets.map((set, i) => ({
      config_name: set.name,
      ...(i === 0 ? { default: true } : {}),
      data_files: [{ split: "train", path: `${set.name}.${ext}` }],
    })),
    dataset_info: sets.map((set) => ({
      config_name: set.name,
      features: set.features,
      splits: [{ name: "train", num_examples: set.rows }],
    })),
  };
  const licenses = { ...KNOWN_SOURCE_LICENSES, ...config.source_licenses };
  const n = (x: number) => x.toLocaleString("en-US");
  const files = (stem: string) => `\`${stem}.jsonl\`${facts.parquet ? `, \`${stem}.parquet\`` : ""}`;
  const ran = summary.shape.methods.filter((m) => m.state !== "disabled").map((m) => m.method);
  const disabled = summary.shape.methods.filter((m) => m.state === "disabled").map((m) => m.method);
  const lines: string[] = [
    "---",
    stringify(metadata, { lineWidth: 0 }).trimEnd(),
    "---",
    "",
    `# ${config.pretty_name}`,
    "",
    ...(audit
      ? [
          "Multi-turn code dialogues taken as found and audited by the codefeedback pipeline, the way",
          "OpenCodeInterpreter (Zheng et al., 2024, arXiv:2402.14658) validated Code-Feedback: every code",
          "block of every dialogue was run in an isolated sandbox, and only the dialogues that passed are",
          "released.",
          "",
          `Datasets audited: ${ran.join(", ")}.`,
        ]
      : [
          "Multi-turn code-instruction dialogues with execution feedback, built the way OpenCodeInterpreter",
          "(Zheng et al., 2024, arXiv:2402.14658) built Code-Feedback, by the codefeedback pipeline. Every code",
          "block of every dialogue was run in an isolated sandbox before release.",
          "",
          `Dialogue methods run: ${ran.length ? ran.join(", ") : "none"}${disabled.length ? `; not run (disabled): ${disabled.join(", ")}` : ""}.`,
        ]),
    "",
    "## Files",
    "",
    "| config | file | rows | columns |",
    "| --- | --- | ---: | --- |",
    ...sets.map((set) => `| ${set.name} | ${files(set.name)} | ${n(set.rows)} | ${set.columns} |`),
    "",
    "`code-feedback` has the columns and types of m-a-p/Code-Feedback, so the two concatenate: `id` is an",
    "integer derived from the dialogue's stable id (the same on every rerun), and `messages` holds",
    released.keep_system
      ? "user and assistant turns, after the system prompt of the methods that have one."
      : "only user and assistant turns (the system prompt of the methods that have one is in `code-feedback-full`'s `system`).",
    "",
    audit ? "## Dialogues per dataset" : "## Dialogues per method",
    "",
    ...(audit ? auditedShape(summary, n) : paperShapeLines(summary, n)),
    "",
    ...auditLines(summary.audits ?? [], n),
    "## Languages",
    "",
    "| method | language | dialogues |",
    "| --- | --- | ---: |",
    ...Object.entries(released.by_method).flatMap(([method, r]) =>
      Object.entries(r.by_lang).map(([lang, count]) => `| ${method} | ${lang} | ${n(count)} |`),
    ),
    "",
    ...(filtered ? filteredLanguages(pairs.by_lang, n) : []),
    "## Sources and licences",

    "",
    "Every dataset a released row was made from:",
    "",
    "| source | dataset | revision | commit | rows in the filtered set | dialogues built from it | licence |",
    "| --- | --- | --- | --- | ---: | ---: | --- |",
    ...summary.sources.map(
      (s) =>
        `| ${s.name} | ${datasetCell(s)} | ${s.revision ? `\`${s.revision}\`` : ""} | ${versionCell(s)} | ${n(s.rows)} | ${n(s.dialogues)} | ${licenses[s.repo] ?? "not stated here: check the source's card"} |`,
    ),
    ...configuredSources(summary.sources),
    "",
    "The sources' licences bind the rows derived from them, whatever the licence in this card's metadata.",
    "",
    "## Method",
    "",
    ...(audit
      ? [
          "1. Each audited dataset's dialogues are read as found; none is written or changed here.",
          "2. Validation: every assistant code block runs in the sandbox (Python blocks of one dialogue share",
        ]
      : [
          "1. The instruction sources are read into one pool of `{query, answer, resource, lang}` pairs, and",
          "   near-duplicates are removed.",
          "2. An LLM rates every query's complexity from 1 to 5 with two prompts in turn; queries rated 4 or 5",
          "   by both are kept (`filtered-instruction`).",
          ...madeWays(facts.declared),
          "4. Validation: every assistant code block runs in the sandbox (Python blocks of one dialogue share",
        ]),
    "   a session); a dialogue whose final code fails or times out is dropped, one whose code cannot run",
    "   there (a missing package, a network, a display, input) is kept.",
    "",
    "Final-code validation outcomes of the released dialogues:",
    "",
    "| outcome | dialogues |",
    "| --- | ---: |",
    ...sorted(released.validation).map(([outcome, count]) => `| ${outcome} | ${n(count)} |`),
    "",
    ...(audit
      ? []
      : [
          "## Models",
          "",
          "| role | model |",
          "| --- | --- |",
          ...Object.entries(summary.models).map(([role, model]) => `| ${role} | \`${model}\` |`),
          "",
        ]),
    "## Citation",
    "",
    "The method is OpenCodeInterpreter's; the data comes from the sources above. Please cite them:",
    "",
    "```bibtex",
    citations(summary.sources).join("\n\n"),
    "```",
    "",
  ];
  return `${lines.join("\n")}\n`;
}

/** Each method's dialogues and turns beside the paper's table, and whether the run has its shape. */
function paperShapeLines(summary: Pick<ExportSummary, "shape">, n: (x: number) => string): string[] {
  return [
    `This run ${summary.shape.verdict}.`,
    "",
    "| method | dialogues | turns per dialogue | paper: dialogues | paper: turns per dialogue | deviation |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    ...summary.shape.methods.map((m) => {
      const inPaper = m.paper_dialogues !== undefined;
      const paper = inPaper ? `${n(m.paper_dialogues!)} | ${m.paper_turns_per_dialogue}` : " | ";
      if (m.state === "disabled") return `| ${m.method} | not run (disabled) | | ${paper} | |`;
      if (m.state === "none") return `| ${m.method} | 0 | | ${paper} | |`;
      const deviation = inPaper ? deviationCell(m.deviation, m.deviates) : "";
      return `| ${m.method} | ${n(m.dialogues)} | ${m.turns_per_dialogue} | ${paper} | ${deviation} |`;
    }),
    "",
    "A turn is a user message and its answer; a deviation over 20% of the paper's figure is marked **over 20%**.",
  ];
}

/** An audit's dialogues per dataset: the paper has no figure to set beside them. */
function auditedShape(summary: Pick<ExportSummary, "shape">, n: (x: number) => string): string[] {
  return [
    "| dataset | dialogues released | turns per dialogue |",
    "| --- | ---: | ---: |",
    ...summary.shape.methods
      .filter((m) => m.state !== "disabled")
      .map((m) => `| ${m.method} | ${n(m.dialogues)} | ${m.state === "ran" ? m.turns_per_dialogue : ""} |`),
    "",
    "A turn is a user message and its answer.",
  ];
}

/** The filtered set's languages beside the paper's CodeFeedback-Filtered-Instruction. */
function filteredLanguages(byLang: Record<string, number>, n: (x: number) => string): string[] {
  const languages = compareLanguages(byLang);
  return [
    "Filtered instructions by language, beside the paper's CodeFeedback-Filtered-Instruction:",
    "",
    "| language | rows | share | paper | deviation |",
    "| --- | ---: | ---: | ---: | ---: |",
    ...(languages?.rows ?? []).map(
      (l) =>
        `| ${l.lang} | ${n(l.count)} | ${l.percent.toFixed(2)}% | ${l.paper}% | ${deviationCell(l.deviation, l.deviates)} |`,
    ),
    ...(languages && Object.keys(languages.other).length
      ? [
          "",
          `\`other\`: ${sorted(languages.other)
            .map(([lang, count]) => `${lang} ${n(count)}`)
            .join(", ")}.`,
        ]
      : []),
    "",
  ];
}

/** The audited datasets' verdicts, when the run audits any: pass rate, drops by reason, languages. */
function auditLines(audits: readonly AuditVerdict[], n: (x: number) => string): string[] {
  if (audits.length === 0) return [];
  return [
    "## Audited datasets",
    "",
    "Dialogues taken as found, not made here: every assistant code block ran in the sandbox with the same",
    "execution, gates and verdicts as the dialogues made here, and only those that passed are released.",
    "",
    "| dataset | source | dialogues read | released | pass rate | dropped by reason |",
    "| --- | --- | ---: | ---: | ---: | --- |",
    ...audits.map(
      (a) =>
        `| ${a.method} | \`${a.where}\` | ${n(a.read)} | ${n(a.released)} | ${(a.pass_rate * 100).toFixed(1)}% | ${
          sorted(a.dropped_by)
            .map(([reason, count]) => `${reason} ${n(count)}`)
            .join(", ") || "none"
        } |`,
    ),
    "",
    "| dataset | language | released | dropped |",
    "| --- | --- | ---: | ---: |",
    ...audits.flatMap((a) =>
      Object.entries(a.by_lang).map(
        ([lang, c]) => `| ${a.method} | ${lang} | ${n(c.released)} | ${n(c.dropped)} |`,
      ),
    ),
    "",
  ];
}

const NUMBERS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];

/** Step 3 of the card's method: the ways dialogues are made, as the declared methods name them. */
function madeWays(declared: readonly DialogueMethod[]): string[] {
  const ways = [...new Set(declared.map((m) => m.card))];
  if (ways.length === 0) return ["3. No stage of this run makes multi-turn dialogues."];
  const list = ways.length < 3 ? ways.join(" and ") : `${ways.slice(0, -1).join(", ")}, and ${ways.at(-1)}`;
  const count = declared.length;
  const words = `3. Multi-turn dialogues are made ${NUMBERS[count] ?? count} way${count === 1 ? "" : "s"}: ${list}.`;
  // wrapped as the rest of the section is, after at most 101 characters
  const lines = [""];
  for (const word of words.split(" ")) {
    const line = lines.at(-1)!;
    if (line !== "" && line.length + 1 + word.length > 101) lines.push(`   ${word}`);
    else lines[lines.length - 1] = line === "" ? word : `${line} ${word}`;
  }
  return lines;
}

function deviationCell(deviation: number, deviates: boolean): string {
  return deviates ? `**${signedPercent(deviation)}, over 20%**` : signedPercent(deviation);
}

function sorted(counts: Record<string, number>): [string, number][] {
  return Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

/** A hub dataset as a link to it; a local source as its path. */
function datasetCell(s: SourceUse): string {
  if (s.path !== undefined) return `local \`${s.path.replaceAll("|", "\\|").replaceAll("`", "'")}\``;
  return `[${s.repo}](https://huggingface.co/datasets/${s.repo})`;
}

/** The commits a hub source was fetched at; the fingerprint (sha256 of its files) of a local one. */
function versionCell(s: SourceUse): string {
  if (s.fingerprint !== undefined) return `sha256 \`${s.fingerprint.slice(0, 12)}\``;
  return s.commits.map((c) => `\`${c.slice(0, 12)}\``).join(", ");
}

/** The sources this run read that the paper did not, with their adapters (none: nothing, as in the paper's run). */
function configuredSources(sources: readonly SourceUse[]): string[] {
  const own = sources.filter((s) => s.adapter !== undefined);
  if (own.length === 0) return [];
  return [
    "",
    'Sources read by configuration (README, "Your own data"):',
    "",
    "| source | dataset or path | revision or fingerprint | adapter | rows in the filtered set | dialogues |",
    "| --- | --- | --- | --- | ---: | ---: |",
    ...own.map(
      (s) =>
        `| ${s.name} | ${datasetCell(s)} | ${s.path !== undefined ? versionCell(s) : `\`${s.revision}\` ${versionCell(s)}`} | ${s.adapter} | ${s.rows.toLocaleString("en-US")} | ${s.dialogues.toLocaleString("en-US")} |`,
    ),
  ];
}
