// The baseline the ingest and end-to-end benchmarks hold normalize against: the same rows streamed
// from the sources' plain JSONL, each parsed and written back, with nothing else done to them.
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";

async function write(stream: WriteStream, text: string): Promise<void> {
  if (!stream.write(text)) await new Promise<void>((resolve) => stream.once("drain", () => resolve()));
}

/** Lines of a file, split with indexOf: the cheapest honest way to stream JSONL. */
async function* lines(file: string): AsyncGenerator<string> {
  let carry = "";
  for await (const chunk of createReadStream(file, { encoding: "utf8", highWaterMark: 1 << 20 })) {
    const text = carry + (chunk as string);
    let start = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
      if (nl > start) yield text.slice(start, nl);
      start = nl + 1;
    }
    carry = text.slice(start);
  }
  if (carry !== "") yield carry;
}

/** Copies every row of `files` into `outFile` through JSON.parse/stringify; returns the row count. */
export async function streamingCopy(files: readonly string[], outFile: string): Promise<number> {
  const out = createWriteStream(outFile);
  let rows = 0;
  for (const file of files) {
    for await (const line of lines(file)) {
      await write(out, `${JSON.stringify(JSON.parse(line))}\n`);
      rows++;
    }
  }
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
  return rows;
}
