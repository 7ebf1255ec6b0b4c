#!/usr/bin/env bash
# Records every DIR/traces/*.trace.json through the reference into DIR/vectors and replays
# those with the conformance runner (the second half of check.sh and chaos.sh):
#   tools/oracle/record-and-replay.sh DIR
set -euo pipefail
if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  echo "usage: tools/oracle/record-and-replay.sh DIR   (traces in DIR/traces; see tools/oracle/README.md)"
  [ $# -eq 1 ] && exit 0 || exit 2
fi
command -v python3 >/dev/null || { echo "record-and-replay.sh: python3 is needed" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out/vectors"
ls "$out/traces" | sed 's/\.trace\.json$//' |
  xargs -P "$(nproc)" -I{} python3 "$here/record.py" --ordered "$out/traces/{}.trace.json" "$out/vectors/{}.json"
echo "vectors in $out/vectors"
cd "$here/../.." && npm run -s conformance -- "$out/vectors"
