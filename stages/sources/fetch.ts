// Fetching the files of one hub dataset spec into a work directory: resolve the revision to a commit,
// list the files at that commit, download each (resumable, verified). Used by `download` for the
// sources and by `dedup` for the benchmark sets, so both get the same guarantees.
import path from "node:path";
import type { HubClient } from "../../pipeline/hub/client.js";
import { type DownloadedFile, downloadVerified } from "../../pipeline/hub/download.js";
import { formatBytes, type Logger } from "../../pipeline/log.js";
import type { HubFilesSpec } from "./spec.js";

export interface FetchedFile extends DownloadedFile {
  path: string;
}

export interface FetchedDataset {
  commit: string;
  files: FetchedFile[];
}

/** `<workDir>/<owner>/<name>/<commit>/<path>`: a new commit never overwrites an old one's files. */
export function localPathOf(workDir: string, repo: string, commit: string, file: string): string {
  return path.join(workDir, ...repo.split("/"), commit, ...file.split("/"));
}

export async function fetchHubFiles(
  client: HubClient,
  spec: HubFilesSpec,
  workDir: string,
  options: { signal?: AbortSignal | undefined; log?: Logger | undefined } = {},
): Promise<FetchedDataset | "interrupted"> {
  const commit = await client.resolveCommit(spec.repo, spec.revision);
  const listed = await client.listFiles(spec.repo, commit, spec.files);
  const files: FetchedFile[] = [];
  for (const file of listed) {
    if (options.signal?.aborted) return "interrupted";
    const dest = localPathOf(workDir, spec.repo, commit, file.path);
    try {
      const done = await downloadVerified(client, file, commit, dest, { signal: options.signal });
      if (done.fetched)
        options.log?.info(`fetched ${spec.repo}/${file.path} (${formatBytes(done.size)}, verified)`);
      else options.log?.debug(`${spec.repo}/${file.path}: verified earlier, not fetched again`);
      files.push({ ...done, path: file.path });
    } catch (error) {
      if (options.signal?.aborted) return "interrupted";
      throw error;
    }
  }
  return { commit, files };
}
