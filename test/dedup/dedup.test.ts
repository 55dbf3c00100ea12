import { describe, expect, it } from "vitest";
import { NgramIndex } from "../../pipeline/dedup/decontaminate.js";
import { Deduplicator } from "../../pipeline/dedup/deduplicator.js";
import { LshIndex, optimalLshParameters } from "../../pipeline/dedup/lsh.js";
import { estimateJaccard, MinHasher } from "../../pipeline/dedup/minhash.js";
import { exactKey, wordHashes } from "../../pipeline/dedup/text.js";
import { seededUint32 } from "../../pipeline/random.js";
import type { PipelineRecord, Reject } from "../../pipeline/record.js";
import { dedupConfigSchema, deduplicateSeeds } from "../../stages/dedup.js";

function randomText(seed: number, words: number): string {
  const random = seededUint32(seed);
  return Array.from({ length: words }, () => `w${random() % 3000}`).join(" ");
}

function shingleJaccard(hasher: MinHasher, a: string, b: string): number {
  const sa = new Set(hasher.shingles(a));
  const sb = new Set(hasher.shingles(b));
  let both = 0;
  for (const x of sa) if (sb.has(x)) both++;
  return both / (sa.size + sb.size - both);
}

describe("text keys", () => {
  it("treat case, Unicode compatibility forms and whitespace runs as equal, and nothing else", () => {
    const same = [
      ["Sort  the\tList", "sort the list"],
      ["  leading and trailing \n", "Leading And Trailing"],
      ["ｆｕｌｌ width", "full width"],
    ];
    for (const [a, b] of same) {
      expect(exactKey(a!)).toBe(exactKey(b!));
    }
    for (const [a, b] of [
      ["a+b", "a-b"],
      ["ab", "a b"],
      ["x", "y"],
    ]) {
      expect(exactKey(a!)).not.toBe(exactKey(b!));
    }
  });

  it("hash words, ignoring punctuation and case", () => {
    expect(Array.from(wordHashes("Hello, world! hello_world"))).toEqual(
      Array.from(wordHashes("hello world HELLO_WORLD")),
    );
    expect(wordHashes("¿Qué tal? 中文").length).toBe(3);
    expect(wordHashes("...").length).toBe(0);
  });

  it("hash each word alone, lowercasing beyond ASCII, into an array of the caller's own", () => {
    const first = wordHashes("Alpha, ÉCOLE beta");
    const parts = ["alpha", "école", "BETA"].map((word) => Array.from(wordHashes(word)));
    expect(wordHashes(randomText(2, 20_000))).toHaveLength(20_000);
    expect(Array.from(first)).toEqual(parts.flat());
  });
});

describe("MinHash", () => {
  it("estimates shingle Jaccard similarity within a few points", () => {
    const hasher = new MinHasher({ numPerm: 256, shingleWords: 3 });
    const base = randomText(1, 200);
    const words = base.split(" ");
    for (const changed of [5, 20, 60, 120]) {
      const edited = words.map((w, i) => (i % Math.floor(200 / changed) === 0 ? `x${i}` : w)).join(" ");
      const truth = shingleJaccard(hasher, base, edited);
      const estimate = estimateJaccard(hasher.signature(base), hasher.signature(edited));
      expect(Math.abs(estimate - truth)).toBeLessThan(0.1);
    }
  });

  it("computes exactly the minimum of each seeded permutation", () => {
    // the definition, one permutation and one unsigned comparison at a time
    const reference = (hasher: MinHasher, shingles: Uint32Array, seed: number) => {
      const random = seededUint32(seed);
      return Array.from({ length: hasher.numPerm }, () => {
        const a = random() | 1;
        const b = random();
        let min = 0xffffffff;
        for (const x of shingles) {
          let v = Math.imul(x ^ b, a);
          v = (v ^ (v >>> 15)) >>> 0;
          min = Math.min(min, v);
        }
        return min;
      });
    };
    for (const numPerm of [0, 1, 16, 18, 128]) {
      const hasher = new MinHasher({ numPerm, shingleWords: 3, seed: 5 });
      for (const text of [randomText(3, 50), "two words", ""]) {
        const shingles = hasher.shingles(text);
        expect(Array.from(hasher.signatureOf(shingles))).toEqual(reference(hasher, shingles, 5));
      }
    }
  });

  it("gives a long text's signature as the minimum of its parts' signatures", () => {
    const hasher = new MinHasher({ numPerm: 40, shingleWords: 3, seed: 9 });
    const random = seededUint32(9);
    const shingles = Uint32Array.from({ length: 60_000 }, () => random() & 0x3fffffff);
    const whole = Array.from(hasher.signatureOf(shingles));
    const parts = [0, 1, 2, 3, 4, 5].map((i) =>
      Array.from(hasher.signatureOf(shingles.subarray(i * 10_000, (i + 1) * 10_000))),
    );
    expect(whole).toEqual(whole.map((_, p) => Math.min(...parts.map((part) => part[p]!))));
  });

  it("gives identical signatures for texts that differ only in case and punctuation", () => {
    const hasher = new MinHasher({ numPerm: 64, shingleWords: 5 });
    expect(hasher.signature("Write a function, please!")).toEqual(
      hasher.signature("write A FUNCTION please"),
    );
  });
});

describe("LSH", () => {
  it("chooses bands that catch pairs above the threshold and rarely pairs far below", () => {
    const { bands, rows } = optimalLshParameters(0.8, 128);
    expect(bands * rows).toBeLessThanOrEqual(128);
    const candidate = (s: number) => 1 - (1 - s ** rows) ** bands;
    expect(candidate(0.9)).toBeGreaterThan(0.97);
    expect(candidate(0.4)).toBeLessThan(0.05);
  });

  it("finds a stored document after its tables have grown many times", () => {
    const index = new LshIndex({ bands: 4, rows: 2 });
    const keysOf = (i: number) => Uint32Array.from([i * 4 + 1, i * 4 + 2, i * 4 + 3, i * 4 + 4]);
    for (let i = 0; i < 10_000; i++) index.insert(keysOf(i));
    const found: number[] = [];
    index.forEachCandidate(keysOf(4321), (doc) => {
      found.push(doc);
      return undefined;
    });
    expect(found).toEqual([4321, 4321, 4321, 4321]);
    const shared = Uint32Array.from([1, 999_999, 999_998, 999_997]);
    const docs: number[] = [];
    index.forEachCandidate(shared, (doc) => {
      docs.push(doc);
      return undefined;
    });
    expect(docs).toEqual([0]);
  });
});

describe("Deduplicator", () => {
  const options = { exact: true, near: true, threshold: 0.8, numPerm: 128, shingleWords: 5 };
  const long = randomText(7, 120);
  const nearCopy = long.replace(/w\d+$/, "different ending words here");

  it("keeps the first copy and names it in every later duplicate", () => {
    const dedup = new Deduplicator(options);
    expect(dedup.check("a", long)).toEqual({ kind: "unique" });
    expect(dedup.check("b", long.toUpperCase())).toEqual({ kind: "exact-duplicate", of: "a" });
    const near = dedup.check("c", nearCopy);
    expect(near.kind).toBe("near-duplicate");
    expect(near.kind === "near-duplicate" && near.of).toBe("a");
    expect(dedup.check("d", randomText(8, 120))).toEqual({ kind: "unique" });
  });

  it("lets the earliest survivor win when several match", () => {
    const dedup = new Deduplicator({ ...options, exact: false });
    expect(dedup.check("first", long).kind).toBe("unique");
    expect(dedup.check("second", randomText(9, 120)).kind).toBe("unique");
    const verdict = dedup.check("third", long);
    expect(verdict).toMatchObject({ kind: "near-duplicate", of: "first", similarity: 1 });
  });

  it("keeps near copies when near-duplicate detection is off, and exact ones when exact is off too", () => {
    const exactOnly = new Deduplicator({ ...options, near: false });
    exactOnly.check("a", long);
    expect(exactOnly.check("c", nearCopy).kind).toBe("unique");
    const none = new Deduplicator({ ...options, near: false, exact: false });
    none.check("a", long);
    expect(none.check("b", long).kind).toBe("unique");
  });

  it("finds near copies of survivors kept early and late among thousands", () => {
    const dedup = new Deduplicator({ ...options, exact: false });
    const texts = Array.from({ length: 5000 }, (_, i) => randomText(100 + i, 40));
    texts.forEach((t, i) => {
      expect(dedup.check(String(i), t).kind).toBe("unique");
    });
    for (const i of [10, 4095, 4096, 4999]) {
      const copy = `${texts[i]} and one more`;
      expect(dedup.check(`copy-${i}`, copy)).toMatchObject({ kind: "near-duplicate", of: String(i) });
    }
  });

  it("reaches the same verdicts on every run", () => {
    const texts = Array.from({ length: 300 }, (_, i) =>
      i % 7 === 0 ? randomText(i - (i % 14), 60) : randomText(i, 60),
    );
    const run = () => {
      const dedup = new Deduplicator(options);
      return texts.map((t, i) => dedup.check(String(i), t));
    };
    expect(run()).toEqual(run());
  });
});

describe("decontamination", () => {
  const prompt =
    "def running_maximum(values: list) -> list:\n    Given a list of integers, return a list where the element at each position is the largest value seen so far";

  it("names the benchmark item a query contains or quotes", () => {
    const index = new NgramIndex(10);
    index.add({ benchmark: "humaneval", id: "HumanEval/0", text: prompt });
    index.add({ benchmark: "mbpp", id: "12", text: randomText(3, 40) });
    const hit = index.match(`Please complete this function:\n${prompt}\nThanks!`, 0.5);
    expect(hit?.item).toEqual({ benchmark: "humaneval", id: "HumanEval/0", text: prompt });
    expect(hit?.overlap).toBe(1);
    // a query that is a piece of the prompt counts against its own length
    expect(index.match(prompt.split("\n")[1]!, 0.5)?.item.id).toBe("HumanEval/0");
    expect(index.match(randomText(4, 60), 0.5)).toBeUndefined();
    // fewer words than n: cannot be judged, so never dropped
    expect(index.match("running maximum", 0.5)).toBeUndefined();
    expect(index.add({ benchmark: "x", id: "short", text: "too short to index" })).toBe(false);
  });

  it("finds each of a thousand indexed prompts, and none of the texts it was not given", () => {
    const index = new NgramIndex(10);
    for (let i = 0; i < 1000; i++)
      index.add({ benchmark: "b", id: String(i), text: randomText(100 + i, 60) });
    for (let i = 0; i < 1000; i += 7)
      expect(index.match(randomText(100 + i, 60), 0.5)?.item.id).toBe(String(i));
    for (let i = 0; i < 100; i++) expect(index.match(randomText(5000 + i, 60), 0.5)).toBeUndefined();
  });
});

describe("deduplicateSeeds", () => {
  it("drops contaminated queries first, then duplicates, each reject saying what it matched", async () => {
    const benchmarks = new NgramIndex(10);
    const benchText = randomText(21, 30);
    benchmarks.add({ benchmark: "mbpp", id: "14", text: benchText });
    const q = randomText(5, 80);
    const records: PipelineRecord[] = [
      { id: "s:0", query: benchText },
      { id: "s:1", query: q },
      { id: "s:2", query: `  ${q.toUpperCase()} ` },
      { id: "s:3", query: benchText },
    ];
    const out: string[] = [];
    const rejects: Reject[] = [];
    async function* stream() {
      yield* records;
    }
    await deduplicateSeeds(stream(), dedupConfigSchema.parse({}), benchmarks, {
      out: async (r) => {
        out.push(r.id);
      },
      reject: async (r) => {
        rejects.push(r);
      },
    });
    expect(out).toEqual(["s:1"]);
    expect(rejects.map((r) => [r.id, r.reason])).toEqual([
      ["s:0", "benchmark-contamination"],
      ["s:2", "exact-duplicate"],
      ["s:3", "benchmark-contamination"],
    ]);
    expect(rejects[0]!.detail).toContain("mbpp item 14");
    expect(rejects[1]!.record).toMatchObject({ id: "s:2", duplicate_of: "s:1" });
    expect(rejects[2]!.record).toMatchObject({ contaminated_by: "mbpp/14" });
  });
});
