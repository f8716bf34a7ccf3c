#!/usr/bin/env bash
# Prints, from k8s-openapi's own per-version source trees, the resource types (those with an
# `impl crate::Resource`) that not every Kubernetes version of the crate has, with the first
# and last minor that has each: the AVAILABILITY table of codegen/src/emit/versions.rs.
#
#   .ci/k8s-openapi-availability.sh           print the table lines
#   .ci/k8s-openapi-availability.sh --check   fail if versions.rs's table differs (CI)
#
# The crate's source is found through `cargo metadata` (the version this workspace locks).
set -euo pipefail
cd "$(dirname "$0")/.."

manifest=$(cargo metadata --format-version 1 --locked 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == "k8s-openapi":
        print(p["manifest_path"]); break
')
src=$(dirname "$manifest")/src
[ -d "$src" ] || { echo "k8s-openapi source not found ($src)" >&2; exit 1; }

table=$(python3 - "$src" <<'PY'
import os, re, sys
src = sys.argv[1]
versions = sorted(int(d[3:]) for d in os.listdir(src) if re.fullmatch(r"v1_\d+", d))
have = {}
for v in versions:
    root = os.path.join(src, f"v1_{v}")
    for dirpath, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".rs"):
                continue
            text = open(os.path.join(dirpath, f), encoding="utf-8").read()
            for ty in re.findall(r"impl crate::Resource for (\w+)", text):
                module = os.path.relpath(dirpath, root).replace(os.sep, "::")
                have.setdefault(f"{module}::{ty}", set()).add(v)
for path in sorted(have):
    vs = sorted(have[path])
    if vs == versions:
        continue
    if vs != list(range(vs[0], vs[-1] + 1)):
        sys.exit(f"{path}: not a contiguous range of versions {vs}")
    print(f'    ("{path}", {vs[0]}, {vs[-1]}),')
PY
)

if [ "${1:-}" = "--check" ]; then
  committed=$(sed -n '/BEGIN k8s-openapi/,/END k8s-openapi/p' codegen/src/emit/versions.rs | sed '1d;$d')
  if [ "$committed" != "$table" ]; then
    echo "codegen/src/emit/versions.rs: AVAILABILITY differs from k8s-openapi's source ($src):" >&2
    diff <(echo "$committed") <(echo "$table") >&2 || true
    exit 1
  fi
  echo "AVAILABILITY matches $src"
else
  echo "$table"
fi
