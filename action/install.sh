#!/usr/bin/env bash
# Installs navin-action for the Action (action.yml and the root action.yml run
# it), or `navin` for an agent job (NAVIN_INSTALL_BIN=navin): the release
# tarball for this runner, checked against its .sha256, or, when there is no
# release asset, a build of the action's own source.
#
# Environment (all optional):
#   NAVIN_INSTALL_BIN        `navin-action` (default) or `navin` (the CLI and
#                            MCP server an agent job runs)
#   NAVIN_VERSION            release tag, e.g. v0.1.0; empty: v + the workspace
#                            version of the source next to this script
#   NAVIN_BUILD_FROM_SOURCE  `true`: skip the download and build with cargo
#   NAVIN_ACTION_REPOSITORY  owner/repo whose releases to download; empty: read
#                            from the runner's _actions/<owner>/<repo>/<ref> path
#   NAVIN_DOWNLOAD_BASE_URL  where releases live, before /<version>/<asset>;
#                            default https://github.com/<repo>/releases/download
#                            (https only; plain http only to a loopback host)
#   NAVIN_TARGET             target triple; default from RUNNER_OS/RUNNER_ARCH
#   NAVIN_INSTALL_DIR        where the binary is put; default
#                            $RUNNER_TEMP/<binary>/bin
#   NAVIN_ACTION_CARGO       the cargo command for building from source
#                            (default `cargo`)
#   NAVIN_INSTALL_PHASE      empty: download, else build (one call does all);
#                            `resolve`: download, else only say a build is due
#                            (outputs build=true and the cache key and paths, so
#                            the action restores its build cache in between);
#                            `build`: reuse the cached binary built from this
#                            very source, else build with cargo and keep it
# Prints the installed path and writes `path=<it>` to $GITHUB_OUTPUT when set.
set -euo pipefail

to_unix_path() {
  if command -v cygpath >/dev/null 2>&1; then cygpath -u "$1"; else printf '%s\n' "$1"; fi
}

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$script_dir/.." && pwd)"
temp="$(to_unix_path "${RUNNER_TEMP:-${TMPDIR:-/tmp}}")"
bin="${NAVIN_INSTALL_BIN:-navin-action}"
case "$bin" in
  navin-action) package=navin-action ;;
  navin) package=navin-bot ;;
  *)
    echo "::error title=navin::NAVIN_INSTALL_BIN must be navin-action or navin"
    exit 1
    ;;
esac
work="$temp/$bin"
install_dir="$(to_unix_path "${NAVIN_INSTALL_DIR:-$work/bin}")"
cargo="${NAVIN_ACTION_CARGO:-cargo}"
mkdir -p "$work" "$install_dir"

target="${NAVIN_TARGET:-}"
if [ -z "$target" ]; then
  case "${RUNNER_OS:-}-${RUNNER_ARCH:-}" in
    Linux-X64) target=x86_64-unknown-linux-gnu ;;
    Linux-ARM64) target=aarch64-unknown-linux-gnu ;;
    macOS-X64) target=x86_64-apple-darwin ;;
    macOS-ARM64) target=aarch64-apple-darwin ;;
    Windows-X64) target=x86_64-pc-windows-msvc ;;
    Windows-ARM64) target=aarch64-pc-windows-msvc ;;
    *) target="" ;;
  esac
fi
exe="$bin"
case "$target" in *-windows-*) exe="$bin.exe" ;; esac

# The workspace version of the action source this ref points at.
source_version="v$(sed -n '/^\[workspace\.package\]/,/^\[/s/^version *= *"\([^"]*\)".*/\1/p' "$src/Cargo.toml" | head -n 1)"
version="${NAVIN_VERSION:-$source_version}"
if ! [[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  if [ -n "${NAVIN_VERSION:-}" ]; then
    echo "::error title=navin::input 'version' must be a release tag like v1.2.3"
  else
    echo "::error title=navin::no version in the action's Cargo.toml; set input 'version'"
  fi
  exit 1
fi

repo="${NAVIN_ACTION_REPOSITORY:-}"
if [ -z "$repo" ]; then
  # Remote actions live in <runner>/_actions/<owner>/<repo>/<ref>; this script
  # is in its action/ directory.
  repo_dir="$(dirname "$src")"
  owner_dir="$(dirname "$repo_dir")"
  if [ "$(basename "$(dirname "$owner_dir")")" = _actions ]; then
    repo="$(basename "$owner_dir")/$(basename "$repo_dir")"
  fi
fi
if [ -n "$repo" ] && ! [[ "$repo" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]]; then
  repo=""
fi

base="${NAVIN_DOWNLOAD_BASE_URL:-}"
if [ -z "$base" ] && [ -n "$repo" ]; then
  base="https://github.com/$repo/releases/download"
fi
base="${base%/}"
# Releases come over https; plain http is accepted only from this machine
# (the install test's file server).
proto='=https'
if [[ "$base" =~ ^http://(127\.0\.0\.1|localhost|\[::1\])(:[0-9]+)?(/|$) ]]; then
  proto='=http'
elif [ -n "$base" ] && [[ "$base" != https://* ]]; then
  echo "::error title=navin::the download URL must use https: $base"
  exit 1
fi

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | awk '{print $1}'
  else
    shasum -a 256 "$1" | awk '{print $1}'
  fi
}

fetch() {
  curl --fail --silent --show-error --location --retry 3 \
    --proto "$proto" --proto-redir "$proto" --tlsv1.2 --output "$2" "$1"
}

output() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf '%s\n' "$1" >>"$GITHUB_OUTPUT"
  fi
}

hash_stdin() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum | awk '{print $1}'
  else
    shasum -a 256 | awk '{print $1}'
  fi
}

# What a build from source depends on: the lock file, and every manifest and Rust
# file of the workspace. Hashing the content (not the ref) lets two jobs on one commit
# share a build, and never reuses one across a change.
source_hash() {
  (cd "$src" && find . -path ./target -prune -o -type f \
      \( -name '*.rs' -o -name Cargo.toml -o -name Cargo.lock \) -print \
    | LC_ALL=C sort | while IFS= read -r f; do
      printf '%s %s\n' "$(sha256_of "$f")" "$f"
    done) | hash_stdin
}

phase="${NAVIN_INSTALL_PHASE:-}"
built="$work/built"
installed="$install_dir/$exe"

if [ "$phase" = build ]; then
  stamp="$(source_hash)"
  if [ -x "$built/$exe" ] && [ "$(cat "$built/source" 2>/dev/null)" = "$stamp" ]; then
    cp "$built/$exe" "$installed"
    echo "reused $bin built from this source (build cache)"
  else
    if ! command -v "$cargo" >/dev/null 2>&1; then
      echo "::error title=navin::cargo is needed to build $bin from source but is not installed"
      exit 1
    fi
    "$cargo" build --release --locked -p "$package" \
      --manifest-path "$src/Cargo.toml" --target-dir "$work/target"
    mkdir -p "$built"
    cp "$work/target/release/$exe" "$built/$exe"
    printf '%s\n' "$stamp" >"$built/source"
    cp "$built/$exe" "$installed"
  fi
  echo "installed $installed"
  output "path=$installed"
  exit 0
fi

rm -f "$installed"
from_release=false
if [ "${NAVIN_BUILD_FROM_SOURCE:-false}" = true ]; then
  echo "build-from-source is true: building $bin with cargo"
elif [ -z "$target" ]; then
  echo "::warning title=navin::no $bin release for ${RUNNER_OS:-this OS}/${RUNNER_ARCH:-this architecture}; building from source"
elif [ -z "$base" ]; then
  echo "::warning title=navin::the action's repository is unknown (a local action?); building from source"
else
  asset="$bin-$target.tar.gz"
  url="$base/$version/$asset"
  download="$(mktemp -d "$work/download.XXXXXX")"
  if fetch "$url" "$download/$asset" && fetch "$url.sha256" "$download/$asset.sha256"; then
    expected="$(awk '{print $1; exit}' "$download/$asset.sha256" | tr 'A-F' 'a-f')"
    actual="$(sha256_of "$download/$asset")"
    if ! [[ "$expected" =~ ^[0-9a-f]{64}$ ]]; then
      rm -rf "$download"
      echo "::error title=navin::$asset.sha256 ($url.sha256) holds no SHA-256; nothing was installed"
      exit 1
    fi
    if [ "$actual" != "$expected" ]; then
      rm -rf "$download"
      echo "::error title=navin::SHA-256 mismatch for $asset ($url): expected $expected, got $actual; nothing was installed"
      exit 1
    fi
    echo "verified $asset: sha256 $actual"
    tar -xzf "$download/$asset" -C "$download" "$exe"
    chmod +x "$download/$exe"
    mv "$download/$exe" "$installed"
    rm -rf "$download"
    from_release=true
  else
    rm -rf "$download"
    echo "::warning title=navin::no release asset $asset for $version at $base; building $bin from source"
  fi
fi

if [ "$from_release" != true ]; then
  if [ "$version" != "$source_version" ]; then
    echo "::warning title=navin::building the action's own source ($source_version), not the requested $version"
  fi
  if [ "$phase" = resolve ]; then
    # The build comes in the next step, after the cache of earlier builds is restored:
    # exact for this source, else the newest for this lock file (dependencies built).
    lock="$(sha256_of "$src/Cargo.lock" | cut -c1-16)"
    prefix="$bin-${target:-${RUNNER_OS:-os}-${RUNNER_ARCH:-arch}}-$lock-"
    output "build=true"
    output "cache-key=$prefix$(source_hash | cut -c1-16)"
    output "cache-restore-key=$prefix"
    output "cache-dir=$work"
    echo "$bin will be built from source (build cache key $prefix…)"
    exit 0
  fi
  if ! command -v "$cargo" >/dev/null 2>&1; then
    echo "::error title=navin::cargo is needed to build $bin from source but is not installed"
    exit 1
  fi
  "$cargo" build --release --locked -p "$package" \
    --manifest-path "$src/Cargo.toml" --target-dir "$work/target"
  cp "$work/target/release/$exe" "$installed"
fi

echo "installed $installed"
output "path=$installed"
