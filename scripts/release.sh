#!/usr/bin/env bash
# Builds recall-archive and toolgate for every platform of a release, with
# the version stamped in, toolgate's MCP registry entry (server.json), and
# SHA256SUMS of them all.
#
#   VERSION   the release's semver tag (default: git describe, or
#             v0.0.0-dev+COMMIT on a commit without a tag)
#   PLATFORMS the GOOS/GOARCH pairs (default: linux, darwin and windows on
#             amd64 and arm64)
#   OUT       where the files go (default: dist)
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
VERSION=${VERSION:-$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || echo "v0.0.0-dev+$(git rev-parse --short=12 HEAD)")}
PLATFORMS=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}
OUT=${OUT:-dist}

semver='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
if ! [[ $VERSION =~ $semver ]]; then
  echo "release: VERSION $VERSION is not a semantic version such as v1.2.3; tag the commit (git tag v1.2.3) or set VERSION" >&2
  exit 2
fi

mkdir -p "$OUT"
for platform in $PLATFORMS; do
  goos=${platform%/*} goarch=${platform#*/}
  ext=""
  [ "$goos" = windows ] && ext=.exe
  for cmd in recall-archive toolgate; do
    out="$OUT/$cmd-$VERSION-$goos-$goarch$ext"
    CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch "$GO" build -trimpath -buildvcs=true \
      -ldflags "-s -w -X github.com/rubicon-go/rubicon/internal/version.stamped=$VERSION" \
      -o "$out" "./cmd/$cmd"
    echo "$out"
  done
done
"$GO" run ./internal/release/cmd/serverjson "$VERSION" > "$OUT/server.json"
echo "$OUT/server.json"
(cd "$OUT" && rm -f SHA256SUMS && sha256sum -- *-"$VERSION"-* server.json > SHA256SUMS)
echo "$OUT/SHA256SUMS"
