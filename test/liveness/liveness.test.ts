// The liveness probe (pipeline/liveness.ts) against real sockets: any HTTP status is an answer, a
// refused port and a server that accepts and never answers are silences, and what it cannot judge
// (a URL fetch refuses) or no longer needs to (the caller heard from a server) gives no verdict.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { silentFor } from "../../pipeline/liveness.js";
import { blackHole, freePort } from "../support/ports.js";

describe("silentFor", () => {
  it("takes any status, a 404 included, as an answer", async () => {
    const server = createServer((_req, res) => res.writeHead(404).end("no route"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/models`;
      expect(await silentFor([`http://127.0.0.1:${await freePort()}/v1/models`, url], 100)).toBeUndefined();
    } finally {
      server.close();
    }
  });

  it("calls a refused port and a server that never answers silent, saying why", async () => {
    const hole = await blackHole();
    try {
      const refused = `http://127.0.0.1:${await freePort()}/run_code`;
      const silence = await silentFor([refused, `${hole.url}/run_code`], 100);
      expect(silence?.attempts).toBeGreaterThan(2);
      expect(silence?.reason).toMatch(/ECONNREFUSED|accepts connections but sent no answer in 5 s/);
    } finally {
      await hole.close();
    }
  }, 60_000);

  it("gives no verdict where it cannot judge, or once the caller heard from a server", async () => {
    expect(await silentFor([`http://user:secret@127.0.0.1:${await freePort()}/`], 100)).toBeUndefined();
    expect(await silentFor([`http://127.0.0.1:${await freePort()}/`], 100, () => true)).toBeUndefined();
  });
});
