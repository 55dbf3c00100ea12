#!/usr/bin/env bash
# Installs Debian's Slurm (slurm-wlm: slurmctld, slurmd and the client commands) and munge, which the
# tests of `pnpm pipeline launch --executor slurm` start as a one-node cluster of their own
# (test/support/slurm-cluster.ts). Kept out of install.sh: running the pipeline needs neither. The
# tests configure and start the daemons themselves in a temporary directory; this script starts none.
set -euo pipefail

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-slurm: not root and no sudo: run this script as root" >&2
    exit 1
  fi
  sudo_cmd=(sudo)
fi

packages=(slurm-wlm munge)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-slurm: Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
