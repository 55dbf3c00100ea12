import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { criterionLabels, parseComplexityScore } from "../../stages/filter/score-parser.js";

const prompt1 = readFileSync(new URL("../../prompts/complexity-1.md", import.meta.url), "utf8");
const prompt2 = readFileSync(new URL("../../prompts/complexity-2.md", import.meta.url), "utf8");
const labels1 = criterionLabels(prompt1);
const labels2 = criterionLabels(prompt2);

// Realistic answers, in the shapes chat models actually give.
const table: [answer: string, score: number | undefined][] = [
  ["4", 4],
  ["5", 5],
  ["4.", 4],
  ["  3\n\nThe query needs a loop and a dictionary.", 3],
  ["Score: 4", 4],
  ["score: 2\nExplanation: basic string handling.", 2],
  ["Score: 4/5", 4],
  ["Rating: 5/5", 5],
  ["Rating: 5 / 5 - it requires a custom concurrent data structure.", 5],
  ["**4 Points** - Difficult", 4],
  ["**4 Points - Difficult**: The query involves advanced programming skills.", 4],
  ["4 Points - Difficult: The query involves advanced programming skills, including complex logic.", 4],
  ["1 Point - Very Basic: printing a list is a simple operation.", 1],
  ["I would rate this query a 4.", 4],
  ["I would rate this query a 4 because it requires implementing a balanced tree.", 4],
  ["I'd rate it as a 3 on the complexity scale.", 3],
  ["Based on the scoring criteria, I would give this query a score of 3.", 3],
  ["I would rate the complexity of this query as 4 Points - Difficult.", 4],
  ["This query deserves a 5 out of 5: it asks for a new algorithm.", 5],
  ["The score for this query is 2.", 2],
  ["Score: 3 (Intermediate)\n\nThe task needs several steps but no advanced algorithms.", 3],
  ["## Score: 5\n\n### Explanation\nDesigning a distributed lock manager is expert work.", 5],
  ["Complexity: 4", 4],
  ["Difficulty level: 2", 2],
  ["评分：4分\n\n这个问题需要动态规划。", 4],
  ["得分：３", 3],
  ["3分。需要一些编程经验。", 3],
  ["[4]", 4],
  ["(5) Very Difficult", 5],
  ["On a scale of 1 to 5, I would rate this query a 4.", 4],
  ["Rating this query on a scale from 1 to 5, it is a 2 Points - Basic.", 2],
  ["Score: 4\n\nIt is not a 5 because the algorithm is well known.", 4],
  [
    "The query asks for a function over 2 lists and 3 dictionaries.\n\nScore: 2 - Basic, it uses common functions.",
    2,
  ],
  // The scale restated before the score, and a score with its reasons.
  ["On a 1 to 5 scale, I'd give it 3.", 3],
  ["Using the 1 to 5 scale where 1 is the easiest and 5 is the most difficult, I'd give it 3.", 3],
  ["Considering the 1 to 5 scale, with 5 being reserved for novel algorithms, I'd give it 3.", 3],
  ["Given that 5 is the most difficult, I'd rate it a 4.", 4],
  ["Score: 4/5 (not 5 because the algorithm is well known)", 4],
  ["Score: 4/5 (not a 5: no new algorithm is needed)", 4],
  ["There are 2 parts: parsing and sorting. Score: 3", 3],
  ["1. Score: 4\n2. Explanation: it needs a heap.", 4],
  ["Scoring: 4", 4],
  ["Final score: 4", 4],
  ["Based on the criteria, this query scores a 5.", 5],
  ["This would be a 4 (Difficult).", 4],
  ["The complexity of this query is 4 (Difficult).", 4],
  // Ambiguous or off-scale: asked again, never guessed.
  ["Score:\n4\n\nIt needs a trie and careful memory use.", 4],
  ["## Score\n\n4\n\n## Why\nA custom allocator is advanced work.", 4],
  ["Complexity rating:\n  5", 5],
  ["Score:\n4.\nA lock-free queue is advanced.", 4],
  ["Difficulty\n1. Parse the input\n2. Build the graph\n3. Run Dijkstra", undefined],
  ["Score: 4.0", 4],
  ["Rating: 3.00/5", 3],
  ["I would not rate it 5, rather 4.", undefined],
  ["I wouldn't give it a 5; it is a standard dynamic-programming task.", undefined],
  ["Score: 3-4", undefined],
  ["I would rate this between 3 and 4.", undefined],
  ["I'd say 3 or 4.", undefined],
  ["Score: 4.5", undefined],
  ["Rating: 8/10", undefined],
  ["Score: 10", undefined],
  ["Score: 0", undefined],
  // A number first that a labelled score contradicts: neither is trusted.
  ["3 nested loops are needed here.\n\nScore: 2", undefined],
  // A digit next to another score's name.
  ["This would be a 4 (Very Basic).", undefined],
  ["", undefined],
  // Refusals and answers about something else.
  ["I'm sorry, but I can't help with that.", undefined],
  [
    "As an AI language model, I cannot evaluate the complexity of this query without more context.",
    undefined,
  ],
  ["I cannot rate this query because it is not a programming question.", undefined],
  ["Sorry, I can't determine that. Could you rate it between 1 and 5 yourself?", undefined],
  ["I apologize, but I am unable to provide a score.", undefined],
  ["The query is about sorting a list of numbers in Python.", undefined],
  ["Please provide the query you want me to rate.", undefined],
];

describe("parseComplexityScore", () => {
  // With the round-1 prompt's criterion names, as the stage calls it.
  it.each(table)("%j -> %s", (answer, expected) => {
    expect(parseComplexityScore(answer, labels1)?.score).toBe(expected);
  });

  it("takes a criterion name at the start of the answer when the prompt's labels are given", () => {
    expect(parseComplexityScore("Very Difficult: it needs an original algorithm.", labels1)?.score).toBe(5);
    expect(parseComplexityScore("Difficult. It needs a trie.", labels1)?.score).toBe(4);
    // The second prompt uses other names for the same points.
    expect(parseComplexityScore("Highly Challenging - graph algorithms are needed.", labels2)?.score).toBe(3);
    expect(parseComplexityScore("Challenging: recursion.", labels2)?.score).toBe(2);
    expect(parseComplexityScore("Difficulty aside, this is fine.", labels1)).toBeUndefined();
    // Without the prompt's names nothing is read from them.
    expect(parseComplexityScore("Very Difficult: it needs an original algorithm.")).toBeUndefined();
    expect(parseComplexityScore("This would be a 4 (Difficult).")).toBeUndefined();
  });

  it("reads the criteria of both prompts", () => {
    expect(Object.fromEntries(labels1)).toEqual({
      "very basic": 1,
      basic: 2,
      intermediate: 3,
      difficult: 4,
      "very difficult": 5,
    });
    expect(labels2.get("expert level")).toBe(5);
    expect(labels2.get("moderately difficult")).toBe(1);
  });

  it("ignores a restated criteria list and finds the score said after it", () => {
    const answer = [
      "Scoring Criteria:",
      "1 Point - Very Basic: simple operations",
      "2 Points - Basic: fundamental concepts",
      "3 Points - Intermediate: multiple steps",
      "4 Points - Difficult: complex logic",
      "5 Points - Very Difficult: unique algorithm design",
      "",
      "My rating: 4",
    ].join("\n");
    expect(parseComplexityScore(answer)?.score).toBe(4);
  });

  it("says in which form it found the score", () => {
    expect(parseComplexityScore("4")?.form).toBe("leading");
    expect(parseComplexityScore("Score: 4")?.form).toBe("label");
    expect(parseComplexityScore("I would rate it a 4")?.form).toBe("verb");
    expect(parseComplexityScore("It is 4 points")?.form).toBe("points");
    expect(parseComplexityScore("It is 4/5")?.form).toBe("fraction");
  });
});
