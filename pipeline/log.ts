// Plain leveled logging to stderr, so stdout stays clean for `cat` and JSON output.

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

export function createLogger(prefix?: string, options: { verbose?: boolean } = {}): Logger {
  const tag = prefix ? `[${prefix}] ` : "";
  return {
    info: (m) => process.stderr.write(`${tag}${m}\n`),
    warn: (m) => process.stderr.write(`${tag}warning: ${m}\n`),
    debug: (m) => {
      if (options.verbose || process.env.CODEFEEDBACK_DEBUG) process.stderr.write(`${tag}debug: ${m}\n`);
    },
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, debug() {} };
