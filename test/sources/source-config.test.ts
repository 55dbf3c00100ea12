// A source's config: the paper's adapter names resolve to their mappings, and every mistake names the
// source and the key.
import { describe, expect, it } from "vitest";
import { validate } from "../../pipeline/config/load.js";
import { DEFAULT_SOURCES, downloadConfigSchema } from "../../stages/download.js";
import { PAPER_MAPPINGS } from "../../stages/sources/source.js";

function parse(sources: unknown[]) {
  return validate(downloadConfigSchema, { sources }, ["stages", "download"], "test.yaml", new Map());
}

function problem(source: Record<string, unknown>): string {
  try {
    parse([{ name: "mine", ...source }]);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected a config error");
}

describe("source config", () => {
  it("reads a paper adapter name as its mapping, the same as the mapping spelled out", () => {
    const byName = parse([{ name: "sharegpt", adapter: "sharegpt", repo: "o/n", files: ["a.json"] }]);
    const spelled = parse([
      {
        name: "sharegpt",
        adapter: "chat",
        chat: PAPER_MAPPINGS.sharegpt!.chat,
        repo: "o/n",
        files: ["a.json"],
      },
    ]);
    expect(byName).toEqual(spelled);
    expect(byName.sources[0]).toMatchObject({ adapter: "chat", revision: "main", chat: { turns: "first" } });
    expect(downloadConfigSchema.parse({}).sources).toEqual(DEFAULT_SOURCES);
  });

  it("takes a local path with a mapping, chat keys left to detection", () => {
    const { sources } = parse([
      { name: "local", adapter: "columns", path: "data/*.jsonl", columns: { query: "q.text", answer: "a" } },
      { name: "talk", adapter: "chat", path: "talk.jsonl" },
    ]);
    expect(sources[0]).toEqual({
      name: "local",
      adapter: "columns",
      path: "data/*.jsonl",
      columns: { query: "q.text", answer: "a" },
    });
    expect(sources[1]).toEqual({
      name: "talk",
      adapter: "chat",
      path: "talk.jsonl",
      chat: { turns: "first" },
    });
  });

  it("names the source and the key of each mistake", () => {
    expect(problem({ adapter: "magic", repo: "o/n", files: ["a"] })).toMatch(
      /sources\.0\.adapter.*source mine: unknown adapter "magic"/,
    );
    expect(
      problem({ adapter: "columns", repo: "o/n", files: ["a"], columns: { query: 3, answer: "a" } }),
    ).toMatch(/sources\.0\.columns\.query.*source mine: `columns\.query` must be a non-empty string/);
    expect(problem({ adapter: "columns", repo: "o/n", files: ["a"], columns: { answer: "a" } })).toMatch(
      /columns\.query.*source mine: `columns\.query` is required/,
    );
    expect(
      problem({ adapter: "columns", repo: "o/n", path: "x.jsonl", columns: { query: "q", answer: "a" } }),
    ).toMatch(/sources\.0\.path.*source mine: `repo` and `path` together/);
    expect(problem({ adapter: "chat", path: 7 })).toMatch(
      /sources\.0\.path.*source mine: `path` must be a non-empty string/,
    );
    expect(problem({ adapter: "chat" })).toMatch(/sources\.0\.repo.*source mine: needs `repo`/);
    expect(problem({ adapter: "chat", path: "x", chat: { turns: "all" } })).toMatch(
      /chat\.turns.*`first` or `each`/,
    );
    expect(problem({ adapter: "chat", path: "x", chat: { speaker: "who" } })).toMatch(
      /unknown key `chat\.speaker`/,
    );
    expect(problem({ adapter: "chat", path: "x", columns: { query: "q", answer: "a" } })).toMatch(
      /`columns` is only for `adapter: columns`/,
    );
    expect(
      problem({ adapter: "columns", path: "x", files: ["a"], columns: { query: "q", answer: "a" } }),
    ).toMatch(/sources\.0\.files.*put a glob in `path`/);
  });
});
