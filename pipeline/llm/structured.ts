// Structured answers: a stage may ask for a JSON value of a schema (`json_schema`) or for text
// matching a GBNF grammar (`grammar`). Which of them a provider honours decides what goes into the
// cache key: a constraint that shapes the answer is part of the request, one that is not sent is not
// (so an OpenAI-compatible role's cache is the same with or without a grammar it never sees).
import { stableStringify } from "../hash.js";
import type { ChatOptions, JsonSchemaFormat } from "./types.js";

/** What a provider does with each kind of constraint. */
export interface HonouredConstraints {
  jsonSchema: boolean;
  grammar: boolean;
}

/** The embedded provider enforces both while sampling. */
export const EMBEDDED_HONOURS: HonouredConstraints = { jsonSchema: true, grammar: true };
/** OpenAI-compatible servers take a JSON schema as `response_format`; GBNF has no standard field. */
export const OPENAI_HONOURS: HonouredConstraints = { jsonSchema: true, grammar: false };

/** The part of the cache key that a call's honoured constraints add; undefined when there is none. */
export function constraintKey(
  options: ChatOptions | undefined,
  honoured: HonouredConstraints,
): string | undefined {
  const parts: string[] = [];
  if (options?.json_schema && honoured.jsonSchema) {
    parts.push(`json_schema=${stableStringify(options.json_schema)}`);
  }
  if (options?.grammar !== undefined && honoured.grammar) parts.push(`grammar=${options.grammar}`);
  return parts.length > 0 ? parts.join("|") : undefined;
}

/** The `response_format` an OpenAI-compatible server is sent for a JSON schema. */
export function responseFormat(schema: JsonSchemaFormat) {
  return {
    type: "json_schema" as const,
    json_schema: {
      name: schema.name,
      schema: schema.schema,
      ...(schema.strict === undefined ? {} : { strict: schema.strict }),
    },
  };
}
