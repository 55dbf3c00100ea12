// File patterns in source configs: `*` and `?` stay within one path segment, `**` crosses segments.
// Enough for `ALL/train-*.parquet` or `data/**/*.jsonl`; anything fancier belongs in an explicit list.

export function isGlob(pattern: string): boolean {
  return /[*?]/.test(pattern);
}

export function globToRegExp(pattern: string): RegExp {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      // `**/` matches zero or more whole directories
      if (pattern[i + 2] === "/") {
        source += "(?:.*/)?";
        i += 2;
      } else {
        source += ".*";
        i += 1;
      }
    } else if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else source += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

/** The directory a pattern can be listed from: its segments before the first wildcard. */
export function globBase(pattern: string): string {
  const segments = pattern.split("/");
  const fixed: string[] = [];
  for (const s of segments.slice(0, -1)) {
    if (isGlob(s)) break;
    fixed.push(s);
  }
  return fixed.join("/");
}
