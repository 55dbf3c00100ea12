// Aligned plain-text tables for terminal output.

export function printTable(
  header: string[],
  rows: (string | number)[][],
  out: NodeJS.WritableStream = process.stdout,
): void {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  for (const row of cells) {
    out.write(
      `${row
        .map((c, i) => (c ?? "").padEnd(widths[i]!))
        .join("  ")
        .trimEnd()}\n`,
    );
  }
}
