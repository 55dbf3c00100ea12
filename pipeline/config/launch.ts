// The `launch:` section of the config: how `pnpm pipeline launch` runs shards on this machine, on
// Slurm and on Kubernetes. Every key has a default, so a config without `launch:` launches locally.
import { z } from "zod";

const slurmResourcesSchema = z
  .object({
    /** `--cpus-per-task` */
    cpus_per_task: z.number().int().positive().optional(),
    /** `--mem`, e.g. "4G" */
    mem: z.string().min(1).optional(),
    /** `--time`, e.g. "02:00:00" or "1-00:00:00" */
    time: z.string().min(1).optional(),
  })
  .strict();

export const slurmLaunchSchema = z
  .object({
    /** `--partition`; unset: the cluster's default partition */
    partition: z.string().min(1).optional(),
    /** `--time` of every job; unset: the partition's default */
    time: z.string().min(1).optional(),
    /** `--cpus-per-task` of each shard; a stage process is single-threaded, so 1 is usually right */
    cpus_per_task: z.number().int().positive().default(1),
    /** `--mem` of each shard, e.g. "4G"; unset: the partition's default */
    mem: z.string().min(1).optional(),
    /** global stages (dedup, pack, leetcode, export) hold more in memory: their own cpus, mem, time */
    global: slurmResourcesSchema.default({}),
    /** the job that answers one `files` batch (`llm.<role>.batch.command`, e.g. vllm run-batch) */
    batch: slurmResourcesSchema
      .extend({
        /** `--partition` of batch jobs; unset: `partition` */
        partition: z.string().min(1).optional(),
        /** `--gpus` of batch jobs, e.g. 1 or "a100:4" */
        gpus: z.union([z.number().int().positive(), z.string().min(1)]).optional(),
      })
      .strict()
      .default({}),
    /** further sbatch options, one per item, e.g. ["--account=proj42", "--qos=normal"] */
    extra_args: z.array(z.string().min(1)).default([]),
    /** shell lines each job runs before the pipeline, e.g. ["module load nodejs/20"] */
    setup: z.array(z.string()).default([]),
  })
  .strict();

const k8sResourcesSchema = z
  .object({
    /** requested and limited CPU, e.g. "1" or "500m" */
    cpu: z.string().min(1).optional(),
    /** requested and limited memory, e.g. "4Gi" */
    memory: z.string().min(1).optional(),
  })
  .strict();

export const k8sLaunchSchema = z
  .object({
    /** the namespace of the Jobs; unset: kubectl's current namespace */
    namespace: z.string().min(1).optional(),
    /** the container image that holds this repository with its dependencies installed */
    image: z.string().min(1).optional(),
    /** the command that runs the pipeline inside the image, from `working_dir` */
    command: z.array(z.string().min(1)).min(1).default(["pnpm", "pipeline"]),
    /** the repository's directory in the image; unset: the image's own working directory */
    working_dir: z.string().min(1).optional(),
    /** a ReadWriteMany PersistentVolumeClaim that every pod mounts as the data directory */
    pvc: z.string().min(1).optional(),
    /** where the claim is mounted; passed to the pipeline as --data-dir */
    mount_path: z.string().min(1).default("/data"),
    /** the config file as the pods see it; unset: the --config path, relative to working_dir */
    config_path: z.string().min(1).optional(),
    /** plain environment variables for every pod (endpoints, not secrets) */
    env: z.record(z.string(), z.string()).default({}),
    /** a Secret whose keys become environment variables (OPENAI_API_KEY, HF_TOKEN, ...) */
    secret: z.string().min(1).optional(),
    service_account: z.string().min(1).optional(),
    /** retries of the whole Job before it counts as failed */
    backoff_limit: z.number().int().min(0).default(6),
    /** resources of each shard's pod */
    resources: k8sResourcesSchema.default({}),
    /** resources of a global stage's pod */
    global: k8sResourcesSchema.default({}),
    /** how long `--apply` waits for one stage's Job to complete, e.g. "24h" */
    wait_timeout: z.string().min(1).default("168h"),
  })
  .strict();

export const launchConfigSchema = z
  .object({
    /** shards of each record-wise stage when `--shards` is not given */
    shards: z.number().int().positive().default(1),
    /**
     * the program that runs the pipeline in local and Slurm processes, from the launch's directory,
     * e.g. ["/opt/node20/bin/node", "--import", "tsx", "pipeline/main.ts"]; unset: the program
     * running `launch` (so compute nodes need node at the same path, usually shared storage)
     */
    command: z.array(z.string().min(1)).min(1).optional(),
    slurm: slurmLaunchSchema.default(slurmLaunchSchema.parse({})),
    k8s: k8sLaunchSchema.default(k8sLaunchSchema.parse({})),
  })
  .strict();

export type LaunchConfig = z.infer<typeof launchConfigSchema>;
export type SlurmLaunchConfig = z.infer<typeof slurmLaunchSchema>;
export type K8sLaunchConfig = z.infer<typeof k8sLaunchSchema>;
