#!/usr/bin/env bash
# Differential check of the port against the reference (see tools/oracle/README.md):
#   tools/oracle/check.sh [FROM] [COUNT] [STEPS] [OUTDIR] [MAX_KEYS] [--mixed]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
from=${1:-1}; count=${2:-100}; steps=${3:-200}; out=${4:-$(mktemp -d)}; maxkeys=${5:+--max-keys $5}; mixed=${6:-}
mkdir -p "$out/traces" "$out/vectors"
npx tsx "$here/traces.ts" --out "$out/traces" --from "$from" --count "$count" --steps "$steps" $maxkeys $mixed
ls "$out/traces" | sed 's/\.trace\.json$//' |
  xargs -P "$(nproc)" -I{} python3 "$here/record.py" --ordered "$out/traces/{}.trace.json" "$out/vectors/{}.json"
echo "vectors in $out/vectors"
cd "$here/../.." && npm run -s conformance -- "$out/vectors"
