// Structured answers on an OpenAI-compatible role: a JSON schema is sent as `response_format` and is
// part of the cache key; a GBNF grammar has no standard field, so it is neither sent nor in the key.
import { describe, expect, it } from "vitest";
import { UsageMeter } from "../../../pipeline/usage.js";
import { ask, serverPerTest, testConfig, testService } from "../helpers.js";

const t = serverPerTest({ keepRequests: true }, "cf-structured-");

const SCHEMA = {
  name: "feedback",
  schema: { type: "object", properties: { fixed: { type: "boolean" } }, required: ["fixed"] },
};

describe("structured answers on an OpenAI-compatible server", () => {
  it("sends a JSON schema as response_format, and keys the cache on it", async () => {
    t.server.options.rules = [{ match: /feedback/, reply: '{"fixed": true}' }];
    const service = testService(testConfig(t.server.url), t.dir);
    const client = service.client("scorer", new UsageMeter());
    const answer = await client.chat(ask("feedback please"), { json_schema: SCHEMA });
    expect(JSON.parse(answer.content)).toEqual({ fixed: true });
    expect(t.server.requests[0]!.body.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "feedback", schema: SCHEMA.schema },
    });
    // strict is passed through only when asked for
    await client.chat(ask("feedback please"), { json_schema: { ...SCHEMA, strict: true } });
    expect(t.server.requests[1]!.body.response_format).toMatchObject({ json_schema: { strict: true } });
    // without the schema it is another request; the same schema with its keys in another order is not
    await client.chat(ask("feedback please"));
    expect(t.server.requests[2]!.body.response_format).toBeUndefined();
    const reordered = {
      schema: { required: ["fixed"], properties: { fixed: { type: "boolean" } }, type: "object" },
      name: "feedback",
    };
    expect((await client.chat(ask("feedback please"), { json_schema: reordered })).cached).toBe(true);
    expect(t.server.count).toBe(3);
    await service.close();
  });

  it("sends no grammar and keeps the same cache key with or without one", async () => {
    const service = testService(testConfig(t.server.url), t.dir);
    const client = service.client("scorer", new UsageMeter());
    const plain = await client.chat(ask("rate this"));
    const constrained = await client.chat(ask("rate this"), { grammar: "root ::= [1-5]" });
    expect(constrained).toMatchObject({ cached: true, content: plain.content });
    expect(t.server.count).toBe(1);
    expect(Object.keys(t.server.requests[0]!.body)).not.toContain("grammar");
    const estimator = service.estimator("scorer");
    expect(estimator.estimate(ask("rate this"), { grammar: "root ::= [1-5]" }).cached).toBe(true);
    await service.close();
  });
});
