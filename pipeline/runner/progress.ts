// Progress of one stage: a redrawn bar with rate and ETA on a terminal, a plain line every few
// seconds otherwise (CI logs, files).

export interface Progress {
  /** `n` records finished in this run */
  tick(n?: number): void;
  /** records found already done by an earlier run */
  skip(n?: number): void;
  setTotal(total: number | undefined): void;
  done(): void;
}

export function createProgress(
  stage: string,
  options: { total?: number; stream?: NodeJS.WriteStream } = {},
): Progress {
  const stream = options.stream ?? process.stderr;
  const tty = Boolean(stream.isTTY);
  const interval = tty ? 200 : 10_000;
  let total = options.total;
  let finished = 0;
  let skipped = 0;
  const started = Date.now();
  let lastDraw = 0;

  const line = (): string => {
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? finished / seconds : 0;
    const count = finished + skipped;
    const parts = [`${stage}`];
    if (total) {
      const fraction = Math.min(1, count / total);
      const width = 24;
      const filled = Math.round(fraction * width);
      parts.push(
        `[${"#".repeat(filled)}${".".repeat(width - filled)}]`,
        `${count}/${total}`,
        `${(fraction * 100).toFixed(1)}%`,
      );
    } else {
      parts.push(`${count} records`);
    }
    parts.push(`${rate.toFixed(1)}/s`);
    if (total && rate > 0) parts.push(`ETA ${formatDuration(((total - count) / rate) * 1000)}`);
    if (skipped) parts.push(`(${skipped} resumed)`);
    return parts.join(" ");
  };

  const draw = (force = false): void => {
    const now = Date.now();
    if (!force && now - lastDraw < interval) return;
    lastDraw = now;
    if (tty) stream.write(`\r\x1b[2K${line()}`);
    else stream.write(`${line()}\n`);
  };

  return {
    tick(n = 1) {
      finished += n;
      draw();
    },
    skip(n = 1) {
      skipped += n;
    },
    setTotal(t) {
      total = t;
    },
    done() {
      if (tty) stream.write(`\r\x1b[2K${line()}\n`);
      else if (finished > 0) stream.write(`${line()}\n`);
    },
  };
}

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return "?";
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}
