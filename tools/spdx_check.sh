#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# spdx_check.sh - every source file of samc says its licence in its first
# lines ("SPDX-License-Identifier: Apache-2.0", README "Licence"). Lists the
# files that lack it and fails (CTest `spdx`); --fix inserts the line, in the
# comment syntax of the file's kind, after a #! line if there is one, so it
# can be re-applied whenever files arrive.
#
# Source files: what git tracks (outside a checkout: what find sees) of the
# kinds C and CUDA (.c .h .cu), CSS, JavaScript/TypeScript, HTML, Python, shell (.sh and
# #! scripts), CMake (.cmake, CMakeLists.txt, .in templates), TOML, YAML and
# the linker version script (.map); not data: fixtures/, tests/data/,
# tests/bad_inputs/, tests/fuzz_regress/, fuzz/seeds/, documents (.md),
# JSON, dictionaries, images.
#
# usage: spdx_check.sh [--fix] [SOURCE_DIR]
set -euo pipefail
fix=0
[ "${1:-}" = "--fix" ] && { fix=1; shift; }
cd "${1:-$(dirname "$0")/..}"
ID="SPDX-License-Identifier: Apache-2.0"

list() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files
  else
    find . -type f -not -path './.git/*' -not -path './build*' | sed 's|^\./||'
  fi | grep -v -E '^(fixtures|tests/data|tests/bad_inputs|tests/fuzz_regress|fuzz/seeds)/'
}

# The comment line for a file, or nothing when it is not a source file.
comment() {
  case $1 in
    *.c | *.h | *.cu | *.css | *.map) echo "/* $ID */" ;;
    *.js | *.mjs | *.ts) echo "// $ID" ;;
    *.html) echo "<!-- $ID -->" ;;
    *.py | *.sh | *.cmake | */CMakeLists.txt | CMakeLists.txt | *.in | *.toml | *.yml | *.yaml) echo "# $ID" ;;
    *.md | *.json | *.txt | *.png | *.jpg | *.gz | *.h5 | *.pt | *.dict | *.supp | *.symbols | *.gitignore | LICENSE) ;;
    *) head -c 2 "$1" 2>/dev/null | grep -q '^#!' && echo "# $ID" ;;
  esac
}

missing=()
while IFS= read -r f; do
  [ -f "$f" ] || continue
  c=$(comment "$f") || true
  [ -n "$c" ] || continue
  head -n 5 "$f" | grep -q "SPDX-License-Identifier:" && continue
  if [ "$fix" = 1 ]; then
    if head -n 1 "$f" | grep -q '^#!'; then
      { head -n 1 "$f"; echo "$c"; tail -n +2 "$f"; } >"$f.spdx"
    else
      { echo "$c"; cat "$f"; } >"$f.spdx"
    fi
    chmod --reference="$f" "$f.spdx"
    mv "$f.spdx" "$f"
    echo "added: $f"
  else
    missing+=("$f")
  fi
done < <(list)

if [ ${#missing[@]} -gt 0 ]; then
  echo "source files without '$ID' in their first 5 lines (tools/spdx_check.sh --fix adds it):"
  printf '  %s\n' "${missing[@]}"
  exit 1
fi
[ "$fix" = 1 ] || echo "spdx: every source file says $ID"
