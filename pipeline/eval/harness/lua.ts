// Lua harness with BabelCode's literals: tables for lists (`{1, 2}`), maps (`{["k"]=v}`) and sets
// (`{["k"]=true}`). A table alone cannot say which of the three it is, so the comparison walks the
// schema type, written out as a table too.
import { CODE_PLACEHOLDER, defineHarness } from "./harness.js";
import { literals, typeRecord } from "./literals.js";

/** Lua's decimal escapes take up to three digits, so they are always written with three. */
export function luaString(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, "utf8")) {
    const ch = String.fromCharCode(byte);
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (byte < 0x20 || byte === 0x7f || byte >= 0x80) out += `\\${String(byte).padStart(3, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

export const luaLiteral = literals({
  string: luaString,
  list: (items) => `{${items.join(", ")}}`,
  set: (items) => `{${items.map((item) => `[${item}]=true`).join(", ")}}`,
  map: (entries) => `{${entries.map(([k, v]) => `[${k}]=${v}`).join(", ")}}`,
});

const DRIVER = `
-- ---- evaluation harness ----
local function __bc_count(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n
end

local function __bc_equal(actual, expected, t, tol)
  local kind = t.kind
  if kind == "list" then
    if type(actual) ~= "table" or #actual ~= #expected or __bc_count(actual) ~= #expected then return false end
    for i = 1, #expected do
      if not __bc_equal(actual[i], expected[i], t.element, tol) then return false end
    end
    return true
  elseif kind == "set" or kind == "map" then
    if type(actual) ~= "table" or __bc_count(actual) ~= __bc_count(expected) then return false end
    for k, v in pairs(expected) do
      if actual[k] == nil then return false end
      if kind == "map" and not __bc_equal(actual[k], v, t.value, tol) then return false end
    end
    return true
  elseif kind == "float" or kind == "double" then
    return type(actual) == "number" and math.abs(actual - expected) <= tol
  elseif kind == "integer" or kind == "long" then
    return type(actual) == "number" and actual == expected
  elseif kind == "boolean" then
    return actual == expected
  end
  return type(actual) == "string" and actual == expected
end

local function __bc_check(prefix, thunk, expected, t, tol)
  local ok, value = pcall(thunk)
  local result
  if not ok then
    result = "error"
  elseif __bc_equal(value, expected, t, tol) then
    result = "PASSED"
  else
    result = "FAILED"
  end
  print(prefix .. result)
end
`;

export const luaHarness = defineHarness({
  language: "lua",
  naming: "snake",
  literal: luaLiteral,
  check: (tc, tol) =>
    `__bc_check(${luaString(tc.prefix)}, function() return ${tc.call} end, ${tc.expected}, __bc_type, ${tol})`,
  program(checks, question) {
    const type = typeRecord(
      question.returnType,
      (fields) => `{${fields.map(([k, v]) => `${k}=${v}`).join(", ")}}`,
      (kind) => `"${kind}"`,
    );
    // Unbuffered, so the tests already reported survive a run killed for time.
    return `io.stdout:setvbuf("no")\n\n${CODE_PLACEHOLDER}\n${DRIVER}\nlocal __bc_type = ${type}\n${checks.join("\n")}\n`;
  },
  callee: (fn, cls) => (cls ? `${cls}.${fn}` : fn),
});
