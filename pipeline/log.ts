// Plain leveled logging to stderr, so stdout stays clean for `cat` and JSON output; and how a size reads
// in a log line.

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

export function createLogger(prefix?: string): Logger {
  const tag = prefix ? `[${prefix}] ` : "";
  // on a terminal a progress bar may own the current line: clear it, the bar redraws on its next tick
  const clear = process.stderr.isTTY ? "\r\x1b[2K" : "";
  const write = (m: string) => process.stderr.write(`${clear}${tag}${m}\n`);
  return {
    info: (m) => write(m),
    warn: (m) => write(`warning: ${m}`),
    debug: (m) => {
      if (process.env.CODEFEEDBACK_DEBUG) write(`debug: ${m}`);
    },
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, debug() {} };

/** A size as log lines give it: `512 B`, `3.4 KiB`, `12.0 MiB`, `1.25 GiB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1 << 30) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  return `${(n / (1 << 30)).toFixed(2)} GiB`;
}
