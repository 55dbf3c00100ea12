// The dataset card (README.md): the hub's YAML metadata (licence, tasks, size, one config per file set
// so the viewer and `datasets.load_dataset` find the Parquet files), then what a reader needs to trust
// the data: counts per method and language next to the paper's, the sources with their licences and
// commits, the method step by step, and the models that wrote it.
import { stringify } from "yaml";
import type { DialogueTally } from "../../pipeline/dialogue.js";
import type { ExportConfig } from "./config.js";
import { KNOWN_SOURCE_LICENSES } from "./config.js";

export interface SourceUse {
  /** the `resource` name (magicoder, sharegpt, ...) */
  resource: string;
  repo: string;
  commits: string[];
  /** rows of the filtered set that came from it */
  rows: number;
}

export interface CardFacts {
  dialogues: number;
  instructions: number;
  methods: ReturnType<DialogueTally["result"]>;
  /** filtered instructions per language and per source */
  instructionLangs: Record<string, number>;
  sources: SourceUse[];
  /** role -> model, for the roles the pipeline's LLM calls go through */
  models: Record<string, string>;
  /** other models named by the dialogues (embedders) */
  otherModels: string[];
  /** final-code validation outcomes of the exported dialogues */
  validation: Record<string, number>;
  parquet: boolean;
}

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

export function datasetCard(config: ExportConfig["card"], facts: CardFacts): string {
  const ext = facts.parquet ? "parquet" : "jsonl";
  const metadata = {
    pretty_name: config.pretty_name,
    license: config.license,
    task_categories: config.task_categories,
    language: config.language,
    tags: config.tags,
    size_categories: [sizeCategory(Math.max(facts.dialogues, facts.instructions))],
    configs: [
      {
        config_name: "code-feedback",
        default: true,
        data_files: [{ split: "train", path: `code-feedback.${ext}` }],
      },
      {
        config_name: "filtered-instruction",
        data_files: [{ split: "train", path: `filtered-instruction.${ext}` }],
      },
    ],
    dataset_info: [
      {
        config_name: "code-feedback",
        features: [
          { name: "id", dtype: "string" },
          {
            name: "messages",
            list: [
              { name: "role", dtype: "string" },
              { name: "content", dtype: "string" },
            ],
          },
        ],
        splits: [{ name: "train", num_examples: facts.dialogues }],
      },
      {
        config_name: "filtered-instruction",
        features: ["query", "answer", "resource", "lang"].map((name) => ({ name, dtype: "string" })),
        splits: [{ name: "train", num_examples: facts.instructions }],
      },
    ],
  };
  const licenses = { ...KNOWN_SOURCE_LICENSES, ...config.source_licenses };
  const n = (x: number) => x.toLocaleString("en-US");
  const lines: string[] = [
    "---",
    stringify(metadata, { lineWidth: 0 }).trimEnd(),
    "---",
    "",
    `# ${config.pretty_name}`,
    "",
    "Multi-turn code-instruction dialogues with execution feedback, built the way OpenCodeInterpreter",
    "(Zheng et al., 2024, arXiv:2402.14658) built Code-Feedback, by the codefeedback pipeline. Every code",
    "block of every dialogue was run in an isolated sandbox before release.",
    "",
    "## Files",
    "",
    "| config | file | rows | columns |",
    "| --- | --- | ---: | --- |",
    `| code-feedback | \`code-feedback.jsonl\`${facts.parquet ? ", `code-feedback.parquet`" : ""} | ${n(facts.dialogues)} | \`id\`, \`messages\` (\`role\`, \`content\`) |`,
    `| filtered-instruction | \`filtered-instruction.jsonl\`${facts.parquet ? ", `filtered-instruction.parquet`" : ""} | ${n(facts.instructions)} | \`query\`, \`answer\`, \`resource\`, \`lang\` |`,
    "",
    "## Dialogues per method",
    "",
    "| method | dialogues | turns per dialogue | paper: dialogues | paper: turns per dialogue |",
    "| --- | ---: | ---: | ---: | ---: |",
    ...Object.entries(facts.methods).map(
      ([method, r]) =>
        `| ${method} | ${n(r.dialogues)} | ${r.turns_per_dialogue} | ${n(r.paper.dialogues)} | ${r.paper.turns_per_dialogue} |`,
    ),
    "",
    "## Languages",
    "",
    "| method | language | dialogues |",
    "| --- | --- | ---: |",
    ...Object.entries(facts.methods).flatMap(([method, r]) =>
      Object.entries(r.by_lang).map(([lang, count]) => `| ${method} | ${lang} | ${n(count)} |`),
    ),
    "",
    "Filtered instructions by language:",
    "",
    "| language | rows |",
    "| --- | ---: |",
    ...sorted(facts.instructionLangs).map(([lang, count]) => `| ${lang} | ${n(count)} |`),
    "",
    "## Sources and licences",
    "",
    "| source | dataset | commit | rows in the filtered set | licence |",
    "| --- | --- | --- | ---: | --- |",
    ...facts.sources.map(
      (s) =>
        `| ${s.resource} | [${s.repo}](https://huggingface.co/datasets/${s.repo}) | ${s.commits.map((c) => `\`${c.slice(0, 12)}\``).join(", ")} | ${n(s.rows)} | ${licenses[s.repo] ?? "not stated here: check the source's card"} |`,
    ),
    "",
    "The sources' licences bind the rows derived from them, whatever the licence in this card's metadata.",
    "",
    "## Method",
    "",
    "1. The instruction sources are read into one pool of `{query, answer, resource, lang}` pairs, and",
    "   near-duplicates are removed.",
    "2. An LLM rates every query's complexity from 1 to 5 with two prompts in turn; queries rated 4 or 5",
    "   by both are kept (`filtered-instruction`).",
    "3. Multi-turn dialogues are made five ways: single-turn packing (similar queries joined by sentence",
    "   embeddings and nearest neighbours), interaction simulation (a weaker model answers, its code runs,",
    "   a stronger model simulates the user's feedback and the fixes), code correction (faulty answers",
    "   corrected from their execution errors), and LeetCode similar problems and follow-ups.",
    "4. Validation: every assistant code block runs in the sandbox (Python blocks of one dialogue share",
    "   a session); a dialogue whose final code fails or times out is dropped, one whose code cannot run",
    "   there (a missing package, a network, a display, input) is kept.",
    "",
    "Final-code validation outcomes of the released dialogues:",
    "",
    "| outcome | dialogues |",
    "| --- | ---: |",
    ...sorted(facts.validation).map(([outcome, count]) => `| ${outcome} | ${n(count)} |`),
    "",
    "## Models",
    "",
    "| role | model |",
    "| --- | --- |",
    ...Object.entries(facts.models).map(([role, model]) => `| ${role} | \`${model}\` |`),
    ...facts.otherModels.map((model) => `| embeddings | \`${model}\` |`),
    "",
  ];
  return `${lines.join("\n")}\n`;
}

function sorted(counts: Record<string, number>): [string, number][] {
  return Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}
