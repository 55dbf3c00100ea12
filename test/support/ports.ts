// A local TCP port for a test: bound on 127.0.0.1, then let go, so that nothing listens on it until
// the test starts something there (or, as "a dead port", never does).
import { createServer } from "node:net";

/** A port that was free a moment ago; nothing listens on it now. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}
