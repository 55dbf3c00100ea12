// The Kubernetes executor: one Job per stage, an Indexed Job of N completions for a record-wise
// stage (each pod runs the shard its completion index names) and a single-pod Job for a global one,
// all mounting one ReadWriteMany claim as the data directory. Kubernetes has no dependencies between
// Jobs, so `--apply` applies them one at a time in pipeline order and waits for each with
// `kubectl wait --for=condition=complete` (and, side by side, for `condition=failed`, which stops).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import type { K8sLaunchConfig } from "../config/launch.js";
import { UserError } from "../errors.js";
import { runArgs } from "./invocation.js";
import type { LaunchStep } from "./plan.js";
import { requireTool, runTool } from "./tools.js";

/** The shard index, from the annotation the Job controller sets on each pod of an Indexed Job. */
const INDEX_VARIABLE = "CODEFEEDBACK_SHARD_INDEX";
const INDEX_ANNOTATION = "metadata.annotations['batch.kubernetes.io/job-completion-index']";

export interface K8sManifestOptions {
  config: K8sLaunchConfig;
  /** a short lowercase tag that makes the Job names of one launch unique */
  launchId: string;
  /** the config file as given to launch; used when `k8s.config_path` is unset */
  configFile: string;
  sets: string[];
  limit?: number;
  /** endpoints to pass on (OPENAI_BASE_URL, HF_ENDPOINT, ...), never secrets */
  env: Record<string, string>;
}

export function jobName(step: LaunchStep, launchId: string): string {
  // a DNS label: lowercase, at most 63 characters
  return `cf-${step.stage}-${launchId}`
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, "-")
    .slice(0, 63);
}

/** Checks what a Job cannot do without, before anything is written. */
export function checkK8sConfig(config: K8sLaunchConfig): void {
  const missing = [
    ...(config.image ? [] : ["launch.k8s.image (an image holding this repository, dependencies installed)"]),
    ...(config.pvc ? [] : ["launch.k8s.pvc (a ReadWriteMany PersistentVolumeClaim for the data directory)"]),
  ];
  if (missing.length > 0) {
    throw new UserError(
      `launch --executor k8s needs ${missing.join(" and ")}: set them in the config or with --set.`,
    );
  }
}

export function k8sJob(step: LaunchStep, options: K8sManifestOptions): Record<string, unknown> {
  const { config } = options;
  const indexed = step.kind === "record" && step.shards > 1;
  const configPath = config.config_path ?? options.configFile;
  const flags = ["--config", configPath, "--data-dir", config.mount_path];
  for (const set of options.sets) flags.push("--set", set);
  if (options.limit !== undefined) flags.push("--limit", String(options.limit));
  // Kubernetes expands $(NAME) in args from the container's env, so no shell is needed in the image
  const args = runArgs(step, `$(${INDEX_VARIABLE})`, flags);
  const env: Record<string, unknown>[] = [
    ...(indexed ? [{ name: INDEX_VARIABLE, valueFrom: { fieldRef: { fieldPath: INDEX_ANNOTATION } } }] : []),
    { name: "CODEFEEDBACK_CONFIG", value: configPath },
    ...Object.entries({ ...options.env, ...config.env }).map(([name, value]) => ({ name, value })),
  ];
  const resources = step.kind === "global" ? { ...config.resources, ...config.global } : config.resources;
  const quantities = {
    ...(resources.cpu ? { cpu: resources.cpu } : {}),
    ...(resources.memory ? { memory: resources.memory } : {}),
  };
  const labels = {
    "app.kubernetes.io/name": "codefeedback",
    "codefeedback/stage": step.stage,
    "codefeedback/launch": options.launchId,
  };
  const container: Record<string, unknown> = {
    name: "pipeline",
    image: config.image,
    command: config.command,
    args,
    ...(config.working_dir ? { workingDir: config.working_dir } : {}),
    env,
    ...(config.secret ? { envFrom: [{ secretRef: { name: config.secret } }] } : {}),
    ...(Object.keys(quantities).length ? { resources: { requests: quantities, limits: quantities } } : {}),
    volumeMounts: [{ name: "data", mountPath: config.mount_path }],
  };
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: jobName(step, options.launchId),
      ...(config.namespace ? { namespace: config.namespace } : {}),
      labels,
    },
    spec: {
      ...(indexed ? { completionMode: "Indexed" } : {}),
      completions: step.shards,
      parallelism: step.shards,
      backoffLimit: config.backoff_limit,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          ...(config.service_account ? { serviceAccountName: config.service_account } : {}),
          containers: [container],
          volumes: [{ name: "data", persistentVolumeClaim: { claimName: config.pvc } }],
        },
      },
    },
  };
}

export interface K8sLaunchOptions extends K8sManifestOptions {
  /** where the manifests are written (kept) */
  dir: string;
  apply: boolean;
  out: NodeJS.WritableStream;
}

export interface K8sManifest {
  stage: string;
  name: string;
  file: string;
  yaml: string;
}

export async function launchK8s(steps: LaunchStep[], options: K8sLaunchOptions): Promise<K8sManifest[]> {
  checkK8sConfig(options.config);
  const kubectl = options.apply ? requireTool("kubectl", "launch --executor k8s --apply") : undefined;
  mkdirSync(options.dir, { recursive: true });
  const manifests = steps.map((step, i): K8sManifest => {
    const yaml = stringify(k8sJob(step, options), { aliasDuplicateObjects: false });
    const file = join(options.dir, `${String(i + 1).padStart(2, "0")}-${step.stage}.yaml`);
    writeFileSync(file, yaml);
    return { stage: step.stage, name: jobName(step, options.launchId), file, yaml };
  });
  if (!kubectl) return manifests;
  const ns = options.config.namespace ? ["--namespace", options.config.namespace] : [];
  for (const manifest of manifests) {
    const applied = await runTool(kubectl, ["apply", "-f", manifest.file]);
    if (applied.code !== 0) {
      throw new UserError(
        `kubectl apply -f ${manifest.file} failed (exit ${applied.code}): ${applied.stderr.trim()}\n` +
          "Check the cluster context (kubectl config current-context) and launch.k8s in the config.",
      );
    }
    options.out.write(`${manifest.stage}: job ${manifest.name} applied; waiting for it to complete\n`);
    const outcome = await waitForJob(kubectl, manifest.name, ns, options.config.wait_timeout);
    if (outcome !== "complete") {
      const later = manifests.slice(manifests.indexOf(manifest) + 1).map((m) => m.stage);
      throw new UserError(
        `${manifest.stage}: job ${manifest.name} ${outcome}. See its pods: kubectl logs ${ns.join(" ")} -l job-name=${manifest.name} --prefix.` +
          `${later.length ? ` Not applied: ${later.join(", ")}.` : ""} Launch again to go on (finished shards are skipped).`,
        { exitCode: 1 },
      );
    }
    options.out.write(`${manifest.stage}: job ${manifest.name} complete\n`);
  }
  return manifests;
}

/** Waits for a Job to complete or fail, whichever comes first, with `kubectl wait`. */
async function waitForJob(kubectl: string, name: string, ns: string[], timeout: string): Promise<string> {
  const stop = new AbortController();
  const wait = (condition: string) =>
    runTool(kubectl, ["wait", ...ns, `--for=condition=${condition}`, `--timeout=${timeout}`, `job/${name}`], {
      signal: stop.signal,
    }).catch(() => undefined);
  const complete = wait("complete").then((r) =>
    r?.code === 0 ? "complete" : `did not complete (${r?.stderr.trim() || "kubectl wait stopped"})`,
  );
  const failed = wait("failed").then((r) => (r?.code === 0 ? "failed" : undefined));
  try {
    return await Promise.race([complete, failed.then((f) => f ?? complete)]);
  } finally {
    stop.abort();
  }
}
