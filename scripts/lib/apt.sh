# Sourced by scripts/install.sh and scripts/install-slurm.sh (bash): installs the Debian packages
# named that are not installed yet, through sudo when not root. Installs nothing when all are there.
#   apt_install_missing PREFIX PACKAGE...   PREFIX names the calling script in its messages
apt_install_missing() {
  local prefix=$1
  shift
  local sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "$prefix: not root and no sudo: run this script as root to install the Debian packages" >&2
      exit 1
    fi
    sudo_cmd=(sudo)
  fi
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "$prefix: Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}
