#!/usr/bin/env bash
# Installs everything codefeedback needs on a fresh Debian machine: the Debian packages listed in
# scripts/apt-packages.txt (sandbox isolation and language toolchains; the stand-in packages it names
# are built from scripts/debian/), pnpm at the version pinned in
# package.json, and the locked Node dependencies. Safe to run again; it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

need_node="20.19.0"
if ! command -v node >/dev/null 2>&1; then
  echo "install: Node.js $need_node or newer is needed (https://nodejs.org or your distribution's nodejs package)" >&2
  exit 1
fi
if ! node -e "const [a,b]=process.versions.node.split('.').map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)"; then
  echo "install: Node.js $(node --version) is too old; codefeedback needs $need_node or newer" >&2
  exit 1
fi

source scripts/lib/apt.sh
mapfile -t packages < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' scripts/apt-packages.txt | grep -v '^$')
apt_install_missing install "${packages[@]}"

pnpm_version=$(node -p "require('./package.json').packageManager.split('@')[1]")
if [ "$(pnpm --version 2>/dev/null || true)" != "$pnpm_version" ]; then
  echo "install: pnpm $pnpm_version"
  npm install -g "pnpm@$pnpm_version" >/dev/null
fi

pnpm install --frozen-lockfile
