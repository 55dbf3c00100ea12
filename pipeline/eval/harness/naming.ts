// BabelCode asks each language for the entry function in that language's own style: a question's
// `groupByLength` is `group_by_length` in Python, Rust, Lua and R, `GroupByLength` in C#, and stays
// `groupByLength` in C++, Java, Go, JavaScript, TypeScript, PHP and Scala. Predictions written for
// BabelCode define the styled name, so the evaluator must call that one.

export type NamingConvention = "snake" | "camel" | "pascal";

/**
 * Splits a name into words where the case changes or an underscore stands: `parseHTTPRequest2x`
 * gives parse, HTTP, Request2x; `max_sub_array` gives max, sub, array.
 */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/(?<=.)([A-Z])(?=[a-z])/g, " $1")
    .replace(/_/g, " ")
    .split(/\s+/)
    .filter((word) => word !== "");
}

const title = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase();

/** `name` in the convention; a name with no letters or digits comes back unchanged. */
export function styleName(name: string, convention: NamingConvention): string {
  const words = nameWords(name);
  if (words.length === 0) return name;
  switch (convention) {
    case "snake":
      return words.map((w) => w.toLowerCase()).join("_");
    case "camel":
      return words[0]!.toLowerCase() + words.slice(1).map(title).join("");
    case "pascal":
      return words.map(title).join("");
  }
}
