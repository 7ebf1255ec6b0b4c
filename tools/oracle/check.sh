#!/usr/bin/env bash
# Differential check of the port against the reference (see tools/oracle/README.md):
#   tools/oracle/check.sh [FROM] [COUNT] [STEPS] [OUTDIR] [MAX_KEYS] [--mixed]
set -euo pipefail
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  cat <<'USAGE'
usage: tools/oracle/check.sh [FROM] [COUNT] [STEPS] [OUTDIR] [MAX_KEYS] [--mixed]

Writes COUNT fuzz-driver streams (seeds FROM..FROM+COUNT-1, STEPS random stimuli each,
then the drain) to OUTDIR/traces, records them through the reference (Python 3, sets in
insertion order) into OUTDIR/vectors, and replays those with the conformance runner.
Defaults: 1 100 200 a-new-temporary-directory (the driver's graph size). --mixed varies
action weights and worker settings per seed. See tools/oracle/README.md.
USAGE
  exit 0
fi
command -v python3 >/dev/null || { echo "check.sh: python3 is needed" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
from=${1:-1}; count=${2:-100}; steps=${3:-200}; out=${4:-$(mktemp -d)}; maxkeys=${5:+--max-keys $5}; mixed=${6:-}
mkdir -p "$out/traces"
npx tsx "$here/traces.ts" --out "$out/traces" --from "$from" --count "$count" --steps "$steps" $maxkeys $mixed
"$here/record-and-replay.sh" "$out"
