// A hand-made export directory for the push tests: the files export writes (two JSONL files and a
// Parquet file large enough to get a commit each, a dataset card, the report) next to the stage's
// own bookkeeping, which must never be uploaded. Push treats every file as opaque bytes.
import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

export const LARGE = ["code-feedback.jsonl", "code-feedback.parquet", "filtered-instruction.jsonl"];
export const SMALL = ["README.md", "report.html"];

function dialogueLine(i: number): string {
  const messages = [
    { role: "user", content: `Write a function that returns the ${i}th triangular number.` },
    {
      role: "assistant",
      content: `\`\`\`python\ndef triangular(n):\n    return n * (n + 1) // 2\n\nprint(triangular(${i}))\n\`\`\``,
    },
    { role: "user", content: "Execution result:\n" + String((i * (i + 1)) / 2) },
    { role: "assistant", content: "The function works: the sum of the first n integers is n(n+1)/2." },
  ];
  return JSON.stringify({ id: `pack-${createHash("sha256").update(String(i)).digest("hex")}`, messages });
}

function instructionLine(i: number): string {
  return JSON.stringify({
    query: `Reverse the words of sentence number ${i} without using split().`,
    answer:
      "```javascript\nconst reverseWords = (s) => s.trim().replace(/\\s+/g, ' ').split(' ').reverse().join(' ');\n```",
    resource: i % 2 ? "evolinstruct" : "magicoder",
    lang: i % 2 ? "javascript" : "python",
  });
}

/** Bytes that look like nothing compressible, from a seed. */
function opaqueBytes(size: number, seed: string): Buffer {
  const out = Buffer.alloc(size);
  let block = createHash("sha256").update(seed).digest();
  for (let at = 0; at < size; at += block.length) {
    block.copy(out, at);
    block = createHash("sha256").update(block).digest();
  }
  return out;
}

export interface ExportFixture {
  dir: string;
  files: Record<string, Buffer>;
}

/** The files of the fixture release (the report among them), by name. */
export function exportFixtureFiles(variant = ""): Record<string, Buffer> {
  const lines = (n: number, f: (i: number) => string) =>
    Buffer.from(`${Array.from({ length: n }, (_, i) => f(i)).join("\n")}\n`);
  return {
    "code-feedback.jsonl": lines(4200, dialogueLine),
    "code-feedback.parquet": Buffer.concat([
      Buffer.from("PAR1"),
      opaqueBytes(1_300_000, `parquet${variant}`),
      Buffer.from("PAR1"),
    ]),
    "filtered-instruction.jsonl": lines(5600, instructionLine),
    "README.md": Buffer.from(
      `---\nlicense: apache-2.0\n---\n# Code-Feedback (reproduction)${variant}\n\n4,200 dialogues.\n`,
    ),
    "report.html": Buffer.from("<!doctype html><title>report</title><p>run report</p>\n"),
  };
}

/** Writes the fixture under `<dataDir>/export`; `stats.files` lists what "export wrote". */
export async function writeExportFixture(dataDir: string, variant = ""): Promise<ExportFixture> {
  const dir = path.join(dataDir, "export");
  await mkdir(path.join(dir, "parts"), { recursive: true });
  const files = exportFixtureFiles(variant);
  for (const [name, bytes] of Object.entries(files)) await writeFile(path.join(dir, name), bytes);
  const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
  const manifest = {
    version: 1,
    stage: "export",
    state: "complete",
    configHash: "fixture",
    upstream: {},
    counts: { in: 9800, out: 4, rejected: 0, failed: 0 },
    runs: 1,
    startedAt: new Date(0).toISOString(),
    updatedAt: new Date(0).toISOString(),
    elapsedMs: 1,
    stats: {
      files: Object.entries(files)
        .filter(([name]) => name !== "report.html")
        .map(([name, bytes]) => ({ name, rows: 0, bytes: bytes.length, sha256: sha(bytes) })),
    },
  };
  await writeFile(path.join(dir, "manifest.json"), JSON.stringify(manifest));
  await writeFile(path.join(dir, "parts", "part-00000.jsonl"), '{"s":0,"o":[]}\n');
  // what a killed export leaves behind: a temporary, never part of the release
  await writeFile(path.join(dir, "code-feedback.jsonl.tmp-4242"), "half a file");
  return { dir, files };
}

export function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}
