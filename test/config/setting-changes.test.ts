// How `status` names what changed in a stage's configuration: the settings its hash covered, kept in
// its manifest one by one, compared with today's, named as a user writes them.
import { describe, expect, it } from "vitest";
import { settingChanges, settingsOf } from "../../pipeline/hash.js";

const prompt = "Rate the query's complexity from 1 to 5. ".repeat(10);

describe("the settings a stale stage's configuration changed", () => {
  it("names the stage's own keys under stages.<stage>, a fingerprint's by name, long values as edited", () => {
    const before = settingsOf({
      stage: "filter",
      config: { threshold: 4, rounds: ["complexity-1", "complexity-2"] },
      extra: { model: "Qwen/Qwen-72B-Chat", prompts: [prompt] },
    })!;
    const after = settingsOf({
      stage: "filter",
      config: { threshold: 3, rounds: ["complexity-1", "complexity-2"] },
      extra: { model: "Qwen/Qwen-72B-Chat", prompts: [`${prompt}!`], provider: "embedded" },
    })!;
    expect(settingChanges("filter", before, after)).toBe(
      'stages.filter.threshold 4 -> 3, prompts.0 edited, provider unset -> "embedded"',
    );
    expect(settingChanges("filter", before, before)).toBe("");
  });

  it("says a digest was edited rather than printing two hashes (export's review verdicts)", () => {
    const before = settingsOf({ stage: "export", extra: { review_verdicts: "0123456789abcdef" } })!;
    const after = settingsOf({ stage: "export", extra: { review_verdicts: "fedcba9876543210" } })!;
    expect(settingChanges("export", before, after)).toBe("review_verdicts edited");
    expect(settingChanges("export", settingsOf({ stage: "export" })!, after)).toBe("review_verdicts edited");
  });

  it("keeps nothing named like a credential, and keeps max_tokens", () => {
    const settings = settingsOf({
      extra: { api_key: "sk-1", hf_token: "hf_2", sampling: { max_tokens: 512 } },
    })!;
    expect(settings).toEqual({ "extra.sampling.max_tokens": "512" });
  });

  it("names three and counts the rest", () => {
    const before = settingsOf({ config: { a: 1, b: 1, c: 1, d: 1, e: 1 } })!;
    const after = settingsOf({ config: { a: 2, b: 2, c: 2, d: 2, e: 2 } })!;
    expect(settingChanges("s", before, after)).toBe(
      "stages.s.a 1 -> 2, stages.s.b 1 -> 2, stages.s.c 1 -> 2 and 2 more",
    );
  });

  it("keeps none one by one past a few hundred settings", () => {
    expect(settingsOf({ files: Array.from({ length: 1000 }, (_, i) => `f${i}`) })).toBeUndefined();
  });
});
