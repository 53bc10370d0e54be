#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_doc_paths.sh [ROOT] - every repository path that the docs (every
# tracked *.md: docs/, README.md, tools/README.md, ...) and the sources (*.c,
# *.h, *.sh, *.py, *.cmake, CMakeLists.txt, .ci/run) name exists. Prints one line per stale reference, FILE:LINE: PATH.
#
# What counts as a path reference:
# - a token with a '/' whose first component is a top-level entry of the
#   repository (core/..., docs/..., fixtures/..., a trailing '/' names a
#   directory), or that starts with ../ (resolved from the naming file's
#   directory: it must stay inside the repository). Tokens that begin with
#   '/' (absolute paths, dump-internal /inputs/..., URLs) are not repository
#   paths, nor are paths of other repositories whose first component samc
#   does not have (sam2/modeling/..., checkpoints/...).
# - a bare file name ending in .c or .h (sam2_track.c) in Markdown or in a
#   comment (in code, img.h is a member): some tracked file must have that
#   name.
# - a path without an extension (core/amg/amg_batch) names the module's
#   files: some tracked file must be that path plus an extension.
# Patterns: '*' and a <placeholder> match within one path component, {a,b}
# alternatives; a pattern must match at least one tracked path.
# Exclusions (a reference that is right although no such path exists here)
# are listed below, each with its reason.
set -uo pipefail
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2

exclusions=(
  "tools/vos_inference.py | the official sam2 repository's tools/ (its VOS script), not ours"
  "ref/fast | prose: the two implementations, ref and fast"
  "ref/new_ref | an error message naming two tensors (ref and new_ref)"
  "stb_image.h | Debian's libstb-dev header"
  "stb_image_write.h | Debian's libstb-dev header"
  "zip.h | libzip's header"
  "maskApi.c | pycocotools' C source, which amg_coco_rle re-states"
  "UpSample.h | ATen's header (PyTorch), whose arithmetic the resize code reproduces"
  "Resample.c | Pillow's C source, which tools/check_dump.py re-states"
  "stddef.h | the C library's header"
  "stdio.h | the C library's header"
  "tests/test_cases.py | pycocotools' test file (ppwwyyxx/cocoapi), not ours"
  "app.c | the user's own program in docs/api.md's build line"
  "web_assets.c | generated in the build tree by cmake/embed_files.cmake (the embedded web page)"
)

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files)
else
  files=$(find . -path ./build -prune -o -path './build-*' -prune -o -type f -print | sed 's|^\./||')
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' "$files" > "$tmp/files"
printf '%s\n' "${exclusions[@]}" | sed 's/ |.*//' > "$tmp/excluded"
top=$(cut -d/ -f1 "$tmp/files" | sort -u | tr '\n' ' ')
grep -E '(\.md|\.[ch]|\.sh|\.py|\.cmake|CMakeLists\.txt|^\.ci/run)$' "$tmp/files" |
  grep -vE '^fixtures/.*\.(json|txt)$' | grep -vxF tests/check_doc_paths.sh > "$tmp/scan" # its comments hold examples

# Candidates: "FILE<TAB>LINE<TAB>TOKEN". Path tokens come from the whole text;
# bare .c / .h names from Markdown and from the comments of C files (in code,
# img.h is a struct member).
# shellcheck disable=SC2046
awk '
function emit(text, re, lead,   t) {
  while (match(text, re)) {
    t = substr(text, RSTART, RLENGTH); text = substr(text, RSTART + RLENGTH)
    if (lead && t ~ /^[^A-Za-z0-9_.<>*{}]/) t = substr(t, 2)
    if (!lead) { sub(/^[^A-Za-z0-9_]/, "", t); sub(/[^A-Za-z0-9_]$/, "", t) }
    print FILENAME "\t" FNR "\t" t
  }
}
FNR == 1 { incomment = 0; cfile = FILENAME ~ /\.[ch]$/ }
{
  line = $0
  emit(line, "(^|[^A-Za-z0-9_./<>*{},%-])(\\.\\./)*[A-Za-z0-9_.<>*{}-]+/[A-Za-z0-9_.<>*{},/#-]*", 1)
  if (cfile) {                                        # the comment text of the line
    c = ""
    while (line != "") {
      if (incomment) {
        e = index(line, "*/"); if (!e) { c = c " " line; line = "" } else { c = c " " substr(line, 1, e - 1); line = substr(line, e + 2); incomment = 0 }
      } else {
        b = index(line, "/*"); l = index(line, "//")
        if (l && (!b || l < b)) { c = c " " substr(line, l + 2); line = "" }
        else if (b) { line = substr(line, b + 2); incomment = 1 }
        else line = ""
      }
    }
    line = c
  } else if (FILENAME !~ /\.md$/) {                   # scripts: their # comments
    line = index(line, "#") ? substr(line, index(line, "#") + 1) : ""
  }
  emit(line, "(^|[^A-Za-z0-9_./<>*-])[A-Za-z0-9_]+\\.[ch]([^A-Za-z0-9_./]|$)", 0)
}' $(cat "$tmp/scan") > "$tmp/cand"

awk -F'\t' -v top="$top" '
BEGIN { n = split(top, t, " "); for (i = 1; i <= n; i++) istop[t[i]] = 1 }
FILENAME == ARGV[1] { file[$0] = 1; base = $0; sub(/.*\//, "", base); hasbase[base] = 1
                      d = $0; while (sub(/\/[^\/]*$/, "", d)) dir[d] = 1; list[++nf] = $0; next }
FILENAME == ARGV[2] { excl[$0] = 1; next }
function clean(p) { while (p ~ /[.,:;)#]$/) p = substr(p, 1, length(p) - 1); return p }
function resolve(from, p,   d) {  # ../x relative to the naming file; "" when it leaves the repository
  d = from; sub(/\/?[^\/]*$/, "", d)
  while (p ~ /^\.\.\//) { if (d == "") return ""; p = substr(p, 4); if (!sub(/\/[^\/]*$/, "", d)) d = "" }
  return d == "" ? p : d "/" p
}
function glob_re(p,   r, i, c, inb) {
  r = ""; inb = 0
  for (i = 1; i <= length(p); i++) {
    c = substr(p, i, 1)
    if (c == "<") { while (i <= length(p) && substr(p, i, 1) != ">") i++; r = r "[^/]*" }
    else if (c == "*") r = r "[^/]*"
    else if (c == "{") { r = r "("; inb = 1 }
    else if (c == "}") { r = r ")"; inb = 0 }
    else if (c == "," && inb) r = r "|"
    else if (c ~ /[.+?()|^$\\[\]]/) r = r "\\" c
    else r = r c
  }
  return "^" r "(/.*)?$"
}
function exists(p,   re, i) {
  sub(/\/$/, "", p)
  if (p !~ /[*<{]/ && ((p in file) || (p in dir))) return 1
  if (p !~ /[*<{]/ && p ~ /\/[^.\/]+$/) p = p ".*"     # a module named without its extension
  re = glob_re(p)
  for (i = 1; i <= nf; i++) if (list[i] ~ re) return 1
  return 0
}
{
  f = $1; line = $2; tok = clean($3)
  if (tok == "" || (tok in excl)) next
  if (tok !~ /\//) {                                  # a bare .c / .h name
    if (!(tok in hasbase)) print f ":" line ": " tok
    next
  }
  split(tok, c, "/")
  if (tok ~ /^\.\.\//) { p = resolve(f, tok); if (p == "" || !exists(p)) print f ":" line ": " tok; next }
  if (!(c[1] in istop) || c[2] == "" && tok !~ /\/$/) next
  if (tok ~ /,/ && tok !~ /{/) { n = split(tok, parts, ","); tok = parts[1] }
  if (!exists(tok)) print f ":" line ": " tok
}' "$tmp/files" "$tmp/excluded" "$tmp/cand" | sort -t: -k1,1 -k2,2n -k3 | uniq > "$tmp/stale"

n=$(wc -l < "$tmp/stale")
if [ "$n" -gt 0 ]; then
  cat "$tmp/stale"
  echo "$n path reference(s) in the docs and sources name no repository path (fix the text or list an exclusion with its reason in $0)"
  exit 1
fi
echo "every repository path named in $(wc -l < "$tmp/scan") docs and sources exists"
