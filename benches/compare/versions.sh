#!/usr/bin/env bash
# kinform against kube-rs at each Kubernetes version kinform supports (issue #44): the same
# scenarios built at 1.35, 1.36 and 1.37 (k8s-openapi's version, hence kube-rs's types and
# kinform's in-place decoders alike), the builds run in turn, round after round, so every
# version meets the same machine.
#
#   benches/compare/versions.sh [PODS] [EVENTS] [ROUNDS]     (defaults 10000 20000 2)
#
# Scenarios: `KINFORM_COMPARE_ONLY` (default kinform-paged,kinform-streaming,kinform-lean,
# kube). The versions are built one after the other in ../../target/compare (each build
# after the first rebuilds k8s-openapi and what depends on it), each binary copied to $OUT
# (default a new temp dir) as kinform-compare-<version>. Logs: $OUT, one per round and
# version. The summary printed at the end is, per version and scenario, the round with the
# median client CPU per burst event: its sync s, steady RSS per object, burst events/s,
# client CPU µs per event and that CPU's ratio to kube-rs's in the same round.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pods=${1:-10000}
events=${2:-20000}
rounds=${3:-2}
versions=${KINFORM_COMPARE_VERSIONS:-1.35 1.36 1.37}
only=${KINFORM_COMPARE_ONLY:-kinform-paged,kinform-streaming,kinform-lean,kube}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"

target=$here/../../target/compare
for v in $versions; do
  (cd "$here" && K8S_OPENAPI_ENABLED_VERSION=$v CARGO_TARGET_DIR="$target" \
    cargo build --release --quiet)
  cp "$target/release/kinform-compare" "$out/kinform-compare-$v"
done
for r in $(seq 1 "$rounds"); do
  for v in $versions; do
    echo "round $r, Kubernetes $v" >&2
    KINFORM_COMPARE_ONLY=$only KINFORM_COMPARE_RUNS=1 \
      "$out/kinform-compare-$v" "$pods" "$events" \
      > "$out/round-$r-$v.log"
  done
done

# The sync table's and the burst table's rows: `| name | ...` after each table's header.
summary() {
  awk -F'|' -v ver="$1" '
    /^\| sync scenario/ { table = "sync"; next }
    /^\| burst scenario/ { table = "burst"; next }
    /^\|---/ { next }
    /^\| / && table == "sync" { gsub(/ /, "", $2); sync[$2] = $3; rss[$2] = $7 }
    /^\| / && table == "burst" { gsub(/ /, "", $2); eps[$2] = $3; cpu[$2] = $5; xk[$2] = $6 }
    /^$/ { table = "" }
    END {
      for (n in cpu) printf "%s | %s | %s | %s | %s | %s | %s\n", ver, n, sync[n], rss[n], eps[n], cpu[n], xk[n]
    }' "${@:2}"
}
echo "logs: $out"
echo "| version | scenario | sync s | steady RSS/obj | burst events/s | client CPU µs/event | x kube |"
echo "|---|---|---|---|---|---|---|"
for v in $versions; do
  for r in $(seq 1 "$rounds"); do summary "$v" "$out/round-$r-$v.log"; done
done | sort -t'|' -k1,1 -k2,2 -k6,6n | awk -F'|' '
  { key = $1 "|" $2; rows[key] = rows[key] "\n" $0; n[key]++ }
  END { for (k in rows) { split(substr(rows[k], 2), lines, "\n"); m = lines[int((n[k] + 1) / 2)]; print "| " m " |" } }' \
  | sort
