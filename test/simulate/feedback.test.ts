// How simulate reads the reviewer's answer: the feedback JSON as models write it, and the feedback
// category.
import { describe, expect, it } from "vitest";
import { categoryOfText, namedCategory } from "../../stages/simulate/categories.js";
import { readFeedback } from "../../stages/simulate/feedback.js";

describe("feedback JSON", () => {
  it("reads bare, fenced, prose-wrapped and trailing-comma JSON, and list values", () => {
    const want = { feedback: "Add tests.", satisfied: "Works.", not_satisfied: "No tests." };
    const body = '{"satisfied": "Works.", "not_satisfied": "No tests.", "feedback": "Add tests."}';
    expect(readFeedback(body)).toMatchObject({ ok: true, value: want });
    expect(readFeedback(`Sure:\n\`\`\`json\n${body}\n\`\`\`\nThanks`)).toMatchObject({
      ok: true,
      value: want,
    });
    expect(readFeedback(`My view: ${body} That is all.`)).toMatchObject({ ok: true, value: want });
    expect(
      readFeedback(
        '{\n "satisfied": "Works.",\n "not_satisfied": "No tests.",\n "feedback": "Add tests.",\n}',
      ),
    ).toMatchObject({ ok: true, value: want });
    expect(
      readFeedback('{"satisfied": ["Works.", "Fast."], "not_satisfied": [], "feedback": "Add tests."}'),
    ).toMatchObject({ ok: true, value: { satisfied: "Works.; Fast.", not_satisfied: "" } });
  });

  it("reads a Python dict: single quotes, apostrophes and double quotes inside, True/None, a trailing comma", () => {
    expect(
      readFeedback(
        `Here you go: {'satisfied': 'It prints "6".', 'not_satisfied': 'It\\'s untested', 'feedback': "Add the user's tests.", 'done': True, 'extra': None,}`,
      ),
    ).toMatchObject({
      ok: true,
      value: {
        satisfied: 'It prints "6".',
        not_satisfied: "It's untested",
        feedback: "Add the user's tests.",
      },
    });
  });

  it("refuses answers without a feedback text, and braces inside strings do not confuse it", () => {
    expect(readFeedback("The code looks fine.")).toMatchObject({ ok: false });
    expect(readFeedback('{"satisfied": "x", "not_satisfied": "y"}')).toMatchObject({ ok: false });
    expect(
      readFeedback('{"satisfied": "a } b", "not_satisfied": "{", "feedback": "Use a dict {}."}'),
    ).toMatchObject({ ok: true, value: { feedback: "Use a dict {}." } });
  });

  it("takes the category a model names, else reads it from the words", () => {
    expect(namedCategory("5. Bug Identification")).toBe("bug-identification");
    expect(namedCategory("Security Improvements")).toBe("security-improvements");
    expect(namedCategory(9)).toBe("scalability");
    expect(readFeedback('{"feedback": "Fix it.", "category": "Efficiency"}')).toMatchObject({
      ok: true,
      value: { category: "efficiency", category_source: "model" },
    });
    expect(categoryOfText("Sanitize the user input to avoid SQL injection.")).toBe("security-improvements");
    expect(categoryOfText("Consider how this would scale to larger datasets.")).toBe("scalability");
    expect(categoryOfText("Hello.")).toBe("unclassified");
  });
});
