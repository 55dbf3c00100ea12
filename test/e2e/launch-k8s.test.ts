// The Kubernetes manifests, parsed back from what `launch --executor k8s` prints and saves, checked
// field by field against what the batch/v1 Job API requires and what the pipeline needs of them.
// (No validator of Kubernetes schemas installs from the registries this project uses.)
import { execFileSync } from "node:child_process";
import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { toyCli, toyConfig } from "../support/toy-cli-kit.js";

// biome-ignore lint/suspicious/noExplicitAny: a parsed manifest is walked field by field
type Manifest = any;

/** the toy stages, launched on Kubernetes */
const K8S = `stages:
  numbers: {count: 9}
launch:
  k8s:
    image: images.example/codefeedback:1.4
    pvc: cf-data
    namespace: curation
    secret: cf-keys
    working_dir: /app
    env: { CODEFEEDBACK_LOG: info }
    resources: { cpu: "1", memory: 2Gi }
    global: { memory: 16Gi }
`;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

describe("launch --executor k8s", () => {
  it("prints and keeps one Job per stage: Indexed Jobs of N for record-wise stages, one pod for a global stage", () => {
    const { dir, config } = toyConfig(K8S);
    const env = {
      ...process.env,
      OPENAI_BASE_URL: "http://vllm.curation:8000/v1",
      OPENAI_API_KEY: "sk-secret",
    };
    const r = toyCli(
      ["launch", "total", "--executor", "k8s", "--shards", "4", "--config", config, "--limit", "5"],
      { env },
    );
    expect(r.stderr).toContain("kubectl wait --for=condition=complete");
    expect(r.code).toBe(0);
    const jobs: Manifest[] = parseAllDocuments(r.stdout).map((d) => d.toJS());
    expect(jobs.map((j) => j.metadata.labels["codefeedback/stage"])).toEqual(["numbers", "expand", "total"]);
    // the API key came from this environment: it must reach the pods through the Secret, never the manifest
    expect(r.stdout).not.toContain("sk-secret");

    for (const job of jobs) {
      expect(job.apiVersion).toBe("batch/v1");
      expect(job.kind).toBe("Job");
      expect(job.metadata.name).toMatch(DNS_LABEL);
      expect(job.metadata.name.length).toBeLessThanOrEqual(63);
      expect(job.metadata.namespace).toBe("curation");
      const spec = job.spec;
      expect(spec.backoffLimit).toBe(6);
      const pod = spec.template.spec;
      // a Job's pods may only restart Never or OnFailure
      expect(pod.restartPolicy).toBe("Never");
      expect(spec.template.metadata.labels).toEqual(job.metadata.labels);
      expect(pod.containers).toHaveLength(1);
      const c = pod.containers[0];
      expect(c.name).toMatch(DNS_LABEL);
      expect(c.image).toBe("images.example/codefeedback:1.4");
      expect(c.workingDir).toBe("/app");
      expect(c.command).toEqual(["pnpm", "pipeline"]);
      expect(c.envFrom).toEqual([{ secretRef: { name: "cf-keys" } }]);
      // the one volume is the claim, mounted where the pipeline is told its data dir is
      expect(pod.volumes).toEqual([{ name: "data", persistentVolumeClaim: { claimName: "cf-data" } }]);
      expect(c.volumeMounts).toEqual([{ name: "data", mountPath: "/data" }]);
      const env = Object.fromEntries(c.env.map((e: Manifest) => [e.name, e.value ?? e.valueFrom]));
      expect(env.CODEFEEDBACK_CONFIG).toBe(config);
      expect(env.OPENAI_BASE_URL).toBe("http://vllm.curation:8000/v1");
      expect(env.CODEFEEDBACK_LOG).toBe("info");
      expect(env.OPENAI_API_KEY).toBeUndefined();
      for (const e of c.env) expect(e.name).toMatch(/^[A-Za-z_][A-Za-z0-9_]*$/);
      // every $(NAME) in the arguments is a variable defined in the container's env (Kubernetes expands only those)
      for (const arg of c.args as string[]) {
        for (const [, name] of arg.matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g))
          expect(env).toHaveProperty(name!);
      }
      expect(c.args.slice(0, 3)).toEqual(["run", job.metadata.labels["codefeedback/stage"], "--only"]);
      expect(c.args).toEqual(
        expect.arrayContaining(["--config", config, "--data-dir", "/data", "--limit", "5"]),
      );
    }

    const [numbers, expand, total] = jobs;
    for (const job of [numbers, expand]) {
      expect(job.spec.completionMode).toBe("Indexed");
      expect(job.spec.completions).toBe(4);
      expect(job.spec.parallelism).toBe(4);
      const c = job.spec.template.spec.containers[0];
      expect(c.args).toEqual(expect.arrayContaining(["--shard", "$(CODEFEEDBACK_SHARD_INDEX)/4"]));
      // the index each pod of an Indexed Job is given, by the annotation the Job controller sets
      expect(c.env[0]).toEqual({
        name: "CODEFEEDBACK_SHARD_INDEX",
        valueFrom: {
          fieldRef: { fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" },
        },
      });
      expect(c.resources).toEqual({
        requests: { cpu: "1", memory: "2Gi" },
        limits: { cpu: "1", memory: "2Gi" },
      });
    }
    expect(total.spec.completionMode).toBeUndefined();
    expect(total.spec.completions).toBe(1);
    expect(total.spec.parallelism).toBe(1);
    const tc = total.spec.template.spec.containers[0];
    expect(tc.args).not.toContain("--shard");
    expect(tc.resources.limits).toEqual({ cpu: "1", memory: "16Gi" });

    // the same manifests are kept, one file per stage, in the order to apply them
    const launchDir = join(dir, "data", "launch");
    const [kept] = readdirSync(launchDir);
    expect(kept).toMatch(/^k8s-/);
    const files = readdirSync(join(launchDir, kept!)).sort();
    expect(files).toEqual(["01-numbers.yaml", "02-expand.yaml", "03-total.yaml"]);
    expect(files.map((f) => parseYaml(readFileSync(join(launchDir, kept!, f), "utf8")))).toEqual(jobs);
  });

  // a stand-in for kubectl (no cluster here) that records its calls: `wait --for=condition=complete`
  // answers at once unless the job is named in $FAIL_JOB, `--for=condition=failed` only then; a wait
  // that is not answered sleeps, as kubectl does until its timeout, so a launcher that does not stop
  // the losing wait hangs
  function standInKubectl(dir: string): string {
    const bin = join(dir, "bin");
    execFileSync("mkdir", ["-p", bin]);
    writeFileSync(
      join(bin, "kubectl"),
      `#!/bin/bash
echo "$*" >> "${join(dir, "calls")}"
if [ "$1" = wait ]; then
  job="\${@: -1}"
  case "$*" in
    *condition=complete*) [[ "$job" == *"$FAIL_JOB"* && -n "$FAIL_JOB" ]] && exec sleep 600; exit 0 ;;
    *condition=failed*) [[ "$job" == *"$FAIL_JOB"* && -n "$FAIL_JOB" ]] && exit 0; exec sleep 600 ;;
  esac
fi
`,
    );
    chmodSync(join(bin, "kubectl"), 0o755);
    return bin;
  }

  it("--apply applies the Jobs one at a time in pipeline order, each after the one before completes", () => {
    const { dir, config } = toyConfig(K8S);
    const bin = standInKubectl(dir);
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
    const r = toyCli(
      ["launch", "total", "--executor", "k8s", "--apply", "--shards", "2", "--config", config],
      { env },
    );
    expect(r.code, r.stderr).toBe(0);
    const calls = readFileSync(join(dir, "calls"), "utf8").trim().split("\n");
    const applies = calls.filter((c) => c.startsWith("apply"));
    expect(applies.map((c) => c.replace(/.*\//, ""))).toEqual([
      "01-numbers.yaml",
      "02-expand.yaml",
      "03-total.yaml",
    ]);
    // each apply comes after the wait for the Job before it
    const order = calls.map((c) =>
      c.startsWith("apply")
        ? c.replace(/.*\/\d+-/, "apply ")
        : c.replace(/^wait .*--for=condition=(\w+).*job\/cf-(\w+)-.*/, "wait $1 $2"),
    );
    expect(order.filter((c) => c.startsWith("apply") || c.startsWith("wait complete"))).toEqual([
      "apply numbers.yaml",
      "wait complete numbers",
      "apply expand.yaml",
      "wait complete expand",
      "apply total.yaml",
      "wait complete total",
    ]);
    expect(calls.every((c) => !c.startsWith("wait") || c.includes("--namespace curation"))).toBe(true);
  });

  it("--apply stops at a failed Job, says how to see its pods' logs, and applies nothing after it", () => {
    const { dir, config } = toyConfig(K8S);
    const bin = standInKubectl(dir);
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, FAIL_JOB: "cf-expand-" };
    const r = toyCli(
      ["launch", "total", "--executor", "k8s", "--apply", "--shards", "2", "--config", config],
      { env },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/expand: job cf-expand-\S+ failed/);
    expect(r.stderr).toContain("kubectl logs --namespace curation -l job-name=cf-expand-");
    expect(r.stderr).toContain("Not applied: total");
    const calls = readFileSync(join(dir, "calls"), "utf8");
    expect(calls).not.toContain("03-total.yaml");
  });

  it("without an image or a claim says which keys to set (exit 2)", () => {
    const { config } = toyConfig();
    const r = toyCli(["launch", "total", "--executor", "k8s", "--shards", "2", "--config", config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("launch.k8s.image");
    expect(r.stderr).toContain("launch.k8s.pvc");
  });

  it("--apply without kubectl on PATH names the package to install (exit 2)", () => {
    const { config } = toyConfig(K8S);
    const env = { ...process.env, PATH: "/nonexistent" };
    const r = toyCli(["launch", "total", "--executor", "k8s", "--apply", "--config", config], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("kubectl");
    expect(r.stderr).toContain("kubernetes-client");
  });
});
