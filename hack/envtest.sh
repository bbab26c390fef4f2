#!/usr/bin/env bash
# Builds the real control-plane binaries envtest needs (kube-apiserver, etcd, kubectl)
# from Go modules into bin/k8s. setup-envtest's download bucket is not reachable here, so
# everything comes from the Go module proxy. A no-op when the pinned versions are present.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${ENVTEST_DIR:-"$root/bin/k8s"}
k8s_version=v1.37.2
etcd_version=v3.7.3
stamp="$out/.versions"
want="kubernetes=$k8s_version etcd=$etcd_version"

if [[ -x "$out/kube-apiserver" && -x "$out/etcd" && -x "$out/kubectl" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
mkdir -p "$out"

minor=${k8s_version#v1.}; minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit=0000000000000000000000000000000000000000"
done

echo "envtest: building kube-apiserver and kubectl $k8s_version (first time: several minutes)" >&2
(cd "$root/hack/tools/kubernetes" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" \
  -o "$out/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl)

echo "envtest: building etcd $etcd_version" >&2
(cd "$root/hack/tools/etcd" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" \
  -o "$out/etcd" go.etcd.io/etcd/server/v3)

echo "$want" > "$stamp"
echo "envtest: control plane ready in $out" >&2
