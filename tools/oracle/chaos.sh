#!/usr/bin/env bash
# Differential check of the port against the reference on stimuli that ignore validity
# (see tools/oracle/README.md):
#   tools/oracle/chaos.sh [FROM] [COUNT] [STEPS] [OUTDIR]
set -euo pipefail
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  cat <<'USAGE'
usage: tools/oracle/chaos.sh [FROM] [COUNT] [STEPS] [OUTDIR]

Writes COUNT chaos streams (seeds FROM..FROM+COUNT-1, up to STEPS random stimuli each,
cut at the port's first error) to OUTDIR/traces, records them through the reference
(Python 3, sets in insertion order) into OUTDIR/vectors, and replays those with the
conformance runner, which also checks that the port raises what the reference raised.
Defaults: 1 100 80 a-new-temporary-directory. See tools/oracle/README.md.
USAGE
  exit 0
fi
command -v python3 >/dev/null || { echo "chaos.sh: python3 is needed" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
from=${1:-1}; count=${2:-100}; steps=${3:-80}; out=${4:-$(mktemp -d)}
mkdir -p "$out/traces"
npx tsx "$here/chaos.ts" --out "$out/traces" --from "$from" --count "$count" --steps "$steps"
"$here/record-and-replay.sh" "$out"
