// A benchmark's options on its command line: `--name value`, anywhere after the script's path
// (`pnpm bench NAME -- --name value`).

/** The word after `--name`; undefined when the option is not given. */
export function textArg(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

/** The number after `--name`; `fallback` when the option is not given. */
export function numberArg(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}
