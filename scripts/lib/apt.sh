# Sourced by scripts/install.sh and scripts/install-slurm.sh (bash): installs the Debian packages
# named that are not installed yet, through sudo when not root. Installs nothing when all are there.
#   apt_install_missing PREFIX PACKAGE...   PREFIX names the calling script in its messages
# A PACKAGE that is a dir with a DEBIAN/control (scripts/debian/) is built with dpkg-deb and installed
# in the same apt-get call as the others, so packages that need what it provides resolve against it.
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
  local missing=() local_dirs=() p name
  for p in "$@"; do
    name=$p
    if [ -f "$p/DEBIAN/control" ]; then
      name=$(sed -n 's/^Package: *//p' "$p/DEBIAN/control")
    fi
    if ! dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "install ok installed"; then
      if [ "$name" = "$p" ]; then missing+=("$p"); else local_dirs+=("$p"); fi
    fi
  done
  [ ${#missing[@]} -gt 0 ] || [ ${#local_dirs[@]} -gt 0 ] || return 0
  local all=("${local_dirs[@]}" "${missing[@]}") status=0
  echo "$prefix: Debian packages: ${all[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  local debs=() build_dir=""
  if [ ${#local_dirs[@]} -gt 0 ]; then
    build_dir=$(mktemp -d)
    # apt reads local .deb files as its own unprivileged user
    chmod 755 "$build_dir"
    for p in "${local_dirs[@]}"; do
      dpkg-deb --root-owner-group --build "$p" "$build_dir/$(basename "$p").deb" >/dev/null
      debs+=("$build_dir/$(basename "$p").deb")
    done
  fi
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${debs[@]}" "${missing[@]}" >/dev/null || status=$?
  if [ -n "$build_dir" ]; then rm -rf "$build_dir"; fi
  return $status
}
