import { describe, expect, it } from "vitest";
import { type ChatTurn, chatPairs, chatTurns, detectChatKeys } from "../../stages/sources/chat.js";

const openai = {
  messages: [
    { role: "system", content: "be brief" },
    { role: "user", content: "q1" },
    { role: "assistant", content: "a1" },
    { role: "user", content: "q2" },
    { role: "assistant", content: "a2" },
  ],
};
const sharegpt = {
  conversations: [
    { from: "human", value: "q1" },
    { from: "gpt", value: "a1" },
  ],
};

function reason(row: unknown, given = {}): string {
  const keys = detectChatKeys(row, given) ?? detectChatKeys(openai)!;
  const read = chatTurns(row, { ...keys, ...given }, 3);
  if ("reject" in read) return read.reject;
  const pairs = chatPairs(read.turns, 3);
  return "reject" in pairs ? pairs.reject : "ok";
}

describe("chat shapes", () => {
  it("detects messages/role/content and conversations/from/value", () => {
    expect(detectChatKeys(openai)).toEqual({
      field: "messages",
      role_key: "role",
      content_key: "content",
      user: "user",
      assistant: "assistant",
      system: "system",
    });
    expect(detectChatKeys(sharegpt)).toMatchObject({
      field: "conversations",
      role_key: "from",
      content_key: "value",
      user: "human",
      assistant: "gpt",
    });
    expect(detectChatKeys({ text: "x" })).toBeUndefined();
    expect(detectChatKeys([1, 2])).toBeUndefined();
  });

  it("lets the config set any key, the rest detected", () => {
    const row = {
      dialog: [
        { speaker: "me", text: "q" },
        { speaker: "bot", text: "a" },
      ],
    };
    const keys = detectChatKeys(row, {
      field: "dialog",
      role_key: "speaker",
      content_key: "text",
      user: "me",
      assistant: "bot",
    })!;
    const read = chatTurns(row, keys, 0);
    expect(read).toEqual({
      turns: [
        { role: "user", content: "q" },
        { role: "assistant", content: "a" },
      ],
    });
    // a key given as undefined (unset in the config) is still detected
    expect(detectChatKeys(sharegpt, { field: undefined })?.field).toBe("conversations");
  });

  it("maps roles and pairs user turns with their answers, system turns left out", () => {
    const read = chatTurns(openai, detectChatKeys(openai)!, 0);
    expect("turns" in read && read.turns[0]).toEqual({ role: "system", content: "be brief" });
    const pairs = chatPairs("turns" in read ? read.turns : [], 0);
    expect(pairs).toEqual({
      pairs: [
        { pair: 0, query: "q1", answer: "a1" },
        { pair: 1, query: "q2", answer: "a2" },
      ],
    });
    // an unanswered last question is allowed
    const open = { messages: [...openai.messages, { role: "user", content: "q3" }] };
    expect(reason(open)).toBe("ok");
  });

  it("refuses each kind of bad dialogue with its own reason", () => {
    expect(reason("text")).toBe("not-an-object");
    expect(reason({ messages: "hi" }, { field: "messages" })).toBe("not-a-list");
    expect(reason({ other: [] }, { field: "messages" })).toBe("missing-field");
    expect(reason({ messages: [3] })).toBe("turn-not-an-object");
    expect(reason({ messages: [{ content: "q" }] })).toBe("turn-without-role");
    expect(reason({ messages: [{ role: "user" }] })).toBe("turn-without-content");
    expect(reason({ messages: [{ role: "user", content: ["q"] }] })).toBe("non-string-content");
    expect(reason({ messages: [{ role: "tool", content: "q" }] })).toBe("unknown-role");
    expect(
      reason({
        messages: [
          { role: "user", content: "q" },
          { role: "user", content: "q again" },
          { role: "assistant", content: "a" },
        ],
      }),
    ).toBe("not-alternating");
    expect(reason({ messages: [{ role: "assistant", content: "hello" }] })).toBe("not-alternating");
    expect(reason({ messages: [{ role: "user", content: "q" }] })).toBe("no-user-assistant-pair");
  });

  it("says which turn broke the alternation, in plain English", () => {
    const detail = (messages: ChatTurn[]) => {
      const pairs = chatPairs(messages, 3);
      return "reject" in pairs ? pairs.detail : "ok";
    };
    expect(detail([{ role: "assistant", content: "hello" }])).toBe(
      "row 3, turn 0: an assistant turn where a user turn was due (user and assistant turns must alternate, from a user turn)",
    );
    expect(
      detail([
        { role: "user", content: "q" },
        { role: "user", content: "q again" },
      ]),
    ).toMatch(/^row 3, turn 1: a user turn where an assistant turn was due/);
  });
});
