// Temporary dirs for tests, each removed whatever the test's outcome: one made while a test runs
// (its body, a beforeEach or an afterEach) once that test has finished, after its afterEach hooks;
// one made outside a test (a file's body, a describe, a beforeAll) once the file's tests are done,
// after the file's own afterAll hooks (which may still be closing what writes into it).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, onTestFinished, TestRunner } from "vitest";

const untilFileEnd = new Set<string>();

// registered as this module is first imported, before the importing file's own hooks: with hooks
// run in reverse order after the tests, it runs last
afterAll(() => {
  for (const path of untilFileEnd) remove(path);
  untilFileEnd.clear();
});

function remove(path: string): void {
  // a process the test started may still be leaving files in it for a moment
  rmSync(path, { recursive: true, force: true, maxRetries: 5 });
}

/** Removes `path` (a dir or file a test made) once the running test has finished, or once the file's tests are done. */
export function removeAfterTest(path: string): void {
  const test = TestRunner.getCurrentTest();
  // concurrent tests share the runner's notion of the current test: keep theirs until the file ends
  if (test && !test.concurrent) onTestFinished(() => remove(path));
  else untilFileEnd.add(path);
}

/** A fresh empty dir under the system's temporary dir, removed after the test (or file) that made it. */
export function tempDir(prefix = "cf-test-"): string {
  const path = mkdtempSync(join(tmpdir(), prefix));
  removeAfterTest(path);
  return path;
}
