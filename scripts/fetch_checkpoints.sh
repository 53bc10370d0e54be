#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Download the official SAM 2 / SAM 2.1 checkpoints from the URLs the
# official repository publishes (facebookresearch/sam2,
# checkpoints/download_ckpts.sh) and check each with `samc info` (detected
# config + strict key and shape check). docs/weights.md says where SAM 3's
# checkpoint and tokenizer vocabulary come from (gated: not fetched here).
#
#   scripts/fetch_checkpoints.sh [DIR] [NAME ...]
#     DIR   where to put them (default: checkpoints/)
#     NAME  sam2.1_hiera_tiny, sam2.1_hiera_small, sam2.1_hiera_base_plus,
#           sam2.1_hiera_large, sam2_hiera_tiny, ... (default: the four 2.1 ones;
#           "all": the eight)
# SAMC=path/to/samc picks the binary (default build/samc). A file already
# there is checked, not downloaded again; a download goes to NAME.pt.part and
# is renamed only when complete. SHA256SUMS in DIR records what was fetched
# (the official repositories publish no checksums to compare with).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-checkpoints}
[ $# -gt 0 ] && shift
SAMC=${SAMC:-build/samc}
BASE21=https://dl.fbaipublicfiles.com/segment_anything_2/092824   # SAM 2.1 (September 2024)
BASE20=https://dl.fbaipublicfiles.com/segment_anything_2/072824   # SAM 2.0 (July 2024)
SIZES="tiny small base_plus large"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  names=(); for s in $SIZES; do names+=("sam2.1_hiera_$s"); done
elif [ "${names[0]}" = all ]; then
  names=(); for s in $SIZES; do names+=("sam2.1_hiera_$s" "sam2_hiera_$s"); done
fi
url_of() {
  case "$1" in
    sam2.1_hiera_tiny|sam2.1_hiera_small|sam2.1_hiera_base_plus|sam2.1_hiera_large) echo "$BASE21/$1.pt" ;;
    sam2_hiera_tiny|sam2_hiera_small|sam2_hiera_base_plus|sam2_hiera_large) echo "$BASE20/$1.pt" ;;
    *) return 1 ;;
  esac
}
for n in "${names[@]}"; do
  url_of "$n" >/dev/null || { echo "unknown checkpoint '$n' (sam2.1_hiera_{tiny,small,base_plus,large}, sam2_hiera_{...}, or all)" >&2; exit 2; }
done
[ -x "$SAMC" ] || { echo "$SAMC not found: build samc first (or set SAMC=...)" >&2; exit 1; }
if command -v curl >/dev/null; then GET() { curl -fL --retry 3 -o "$2" "$1"; }
elif command -v wget >/dev/null; then GET() { wget -O "$2" "$1"; }
else echo "curl or wget is needed to download" >&2; exit 1; fi
mkdir -p "$DIR"
fail=0
for n in "${names[@]}"; do
  f="$DIR/$n.pt"
  if [ ! -s "$f" ]; then
    echo "downloading $(url_of "$n")"
    rm -f "$f.part"
    GET "$(url_of "$n")" "$f.part" || { echo "$n: download failed" >&2; rm -f "$f.part"; fail=1; continue; }
    mv "$f.part" "$f"
  fi
  if "$SAMC" info "$f" >"$f.info.txt" 2>&1; then
    echo "$n: OK ($(grep -m1 -i 'config' "$f.info.txt" || true))"
  else
    echo "$n: samc info refused it:" >&2; cat "$f.info.txt" >&2; fail=1
  fi
done
(cd "$DIR" && sha256sum -- *.pt > SHA256SUMS 2>/dev/null || true)
exit $fail
