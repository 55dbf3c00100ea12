// Plain leveled logging to stderr, so stdout stays clean for `cat` and JSON output.

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

export function createLogger(prefix?: string, options: { verbose?: boolean } = {}): Logger {
  const tag = prefix ? `[${prefix}] ` : "";
  // on a terminal a progress bar may own the current line: clear it, the bar redraws on its next tick
  const clear = process.stderr.isTTY ? "\r\x1b[2K" : "";
  const write = (m: string) => process.stderr.write(`${clear}${tag}${m}\n`);
  return {
    info: (m) => write(m),
    warn: (m) => write(`warning: ${m}`),
    debug: (m) => {
      if (options.verbose || process.env.CODEFEEDBACK_DEBUG) write(`debug: ${m}`);
    },
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, debug() {} };
