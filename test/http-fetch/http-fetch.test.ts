import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpFetch } from "../../pipeline/http-fetch.js";

let server: Server | undefined;

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/**
 * Serves `head`, then holds the rest of the body: checks that fetch has not settled 50 ms later,
 * then sends `tail` and returns the response.
 */
async function settledOnlyWhenWhole(contentType: string, head: string, tail: string, init?: RequestInit) {
  let finish: (() => void) | undefined;
  const url = await serve((_req, res) => {
    res.writeHead(200, { "content-type": contentType });
    res.write(head);
    finish = () => res.end(tail);
  });
  const http = createHttpFetch(1);
  let settled = false;
  const pending = http.fetch(url, init).then((res) => {
    settled = true;
    return res;
  });
  while (!finish) await new Promise((resolve) => setTimeout(resolve, 5));
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(settled).toBe(false);
  finish();
  return { http, res: await pending };
}

describe("the fetch given to the SDK", () => {
  it("sends method, headers and body, and reads status, headers and JSON", async () => {
    const url = await serve((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        res.writeHead(201, { "content-type": "application/json", "x-request-id": "req-1" });
        res.end(JSON.stringify({ method: req.method, auth: req.headers.authorization, body }));
      });
    });
    const http = createHttpFetch(4);
    const res = await http.fetch(`${url}/v1/x`, {
      method: "POST",
      headers: new Headers({ authorization: "Bearer k" }),
      body: "{}",
    });
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get("X-Request-Id")).toBe("req-1");
    expect([...res.headers.entries()].some(([k]) => k === "x-request-id")).toBe(true);
    expect(await res.json()).toEqual({ method: "POST", auth: "Bearer k", body: "{}" });
    http.close();
  });

  it("decodes a gzip body", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(gzipSync(JSON.stringify({ ok: "zipped" })));
    });
    const http = createHttpFetch(1);
    expect(await (await http.fetch(url)).json()).toEqual({ ok: "zipped" });
    http.close();
  });

  it("streams a body that arrives in pieces", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: 1\n\n");
      setTimeout(() => res.end("data: 2\n\n"), 20);
    });
    const http = createHttpFetch(1);
    const res = await http.fetch(url, { headers: { accept: "text/event-stream" } });
    const chunks: string[] = [];
    for await (const chunk of res.body as unknown as AsyncIterable<Buffer>) chunks.push(chunk.toString());
    expect(chunks.join("")).toBe("data: 1\n\ndata: 2\n\n");
    http.close();
  });

  it("settles a JSON answer only once its whole body is in, so one deadline covers all of it", async () => {
    const { http, res } = await settledOnlyWhenWhole("application/json", '{"half":', "true}");
    expect(await res.json()).toEqual({ half: true });
    // read once, like fetch's body
    await expect(res.text()).rejects.toThrow(/already been read/);
    http.close();
  });

  it("rejects with an AbortError when aborted: before sending, during a JSON body, during a stream", async () => {
    const url = await serve((req, res) => {
      res.writeHead(200, {
        "content-type": req.url === "/sse" ? "text/event-stream" : "application/json",
      });
      res.write(req.url === "/sse" ? "data: 1\n\n" : "{");
    });
    const http = createHttpFetch(2);
    const early = new AbortController();
    early.abort();
    await expect(http.fetch(url, { signal: early.signal })).rejects.toMatchObject({ name: "AbortError" });
    const json = new AbortController();
    const pending = http.fetch(`${url}/json`, { signal: json.signal });
    setTimeout(() => json.abort(), 30);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    const late = new AbortController();
    const res = await http.fetch(`${url}/sse`, {
      signal: late.signal,
      headers: { accept: "text/event-stream" },
    });
    const body = res.text();
    late.abort();
    await expect(body).rejects.toMatchObject({ name: "AbortError" });
    http.close();
  });

  it("reads an event stream whole when the request did not ask for one", async () => {
    const { http, res } = await settledOnlyWhenWhole("text/event-stream", "data: 1\n\n", "data: 2\n\n", {
      headers: { accept: "application/json" },
    });
    expect(await res.text()).toBe("data: 1\n\ndata: 2\n\n");
    http.close();
  });

  it("fails a JSON body cut short by the server with a TypeError, as fetch does", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
      res.write("{");
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const http = createHttpFetch(1);
    await expect(http.fetch(url)).rejects.toBeInstanceOf(TypeError);
    http.close();
  });

  it("rejects a refused connection with a TypeError that carries the cause, as fetch does", async () => {
    const url = await serve(() => {});
    server!.close();
    server = undefined;
    const http = createHttpFetch(1);
    const error = await http.fetch(url).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).cause).toMatchObject({ code: "ECONNREFUSED" });
    http.close();
  });
});
