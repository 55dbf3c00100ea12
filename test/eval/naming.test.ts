import { describe, expect, it } from "vitest";
import { nameWords, styleName } from "../../pipeline/eval/harness/naming.js";

describe("BabelCode's naming conventions for entry functions", () => {
  it("splits names where the case changes or an underscore stands", () => {
    expect(nameWords("groupByLength")).toEqual(["group", "By", "Length"]);
    expect(nameWords("parseHTTPRequest")).toEqual(["parse", "HTTP", "Request"]);
    expect(nameWords("max_sub_array")).toEqual(["max", "sub", "array"]);
    expect(nameWords("_private__name")).toEqual(["private", "name"]);
    expect(nameWords("top2Items")).toEqual(["top2", "Items"]);
  });

  it("writes a name in snake_case, camelCase and PascalCase", () => {
    expect(styleName("groupByLength", "snake")).toBe("group_by_length");
    expect(styleName("groupByLength", "pascal")).toBe("GroupByLength");
    expect(styleName("group_by_length", "camel")).toBe("groupByLength");
    expect(styleName("parseHTTPRequest", "camel")).toBe("parseHttpRequest");
    expect(styleName("Fingerprint", "camel")).toBe("fingerprint");
    expect(styleName("mean", "pascal")).toBe("Mean");
    expect(styleName("___", "snake")).toBe("___");
  });
});
