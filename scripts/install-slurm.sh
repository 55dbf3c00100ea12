#!/usr/bin/env bash
# Installs Debian's Slurm (slurm-wlm: slurmctld, slurmd and the client commands) and munge, which the
# tests of `pnpm pipeline launch --executor slurm` start as a one-node cluster of their own
# (test/support/slurm-cluster.ts). Kept out of install.sh: running the pipeline needs neither. The
# tests configure and start the daemons themselves in a temporary directory; this script starts none.
set -euo pipefail

source "$(dirname "$0")/lib/apt.sh"
apt_install_missing install-slurm slurm-wlm munge
