#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_call_cycles.sh OBJECT... - no two files of the library call each other
# in a circle (docs/architecture.md, "The layout"). A file calls another when
# its object needs a global symbol the other defines (nm: U against T/D/B/R);
# the strongly connected components of that graph with more than one file are
# the circles. Each one still standing in code the lead is restructuring
# (issue 18) is listed below with its reason; any other circle fails, and so
# does a listed one that no longer exists (the list must stay true).
set -euo pipefail
# Known circles: "file file ... | reason" (sorted file lists).
known=(
  "core/io/weights.c core/io/weights_pt.c core/io/weights_safetensors.c | the front ends call weights.c's shared helpers back"
  "core/models/sam2/config.c core/models/sam2/config_h5.c core/models/sam2/config_json.c | the config sources call config.c's defaults back (core/models is being restructured, issue 18)"
  "core/text/clip_bpe.c core/text/clip_vocab.c | the vocabulary and the BPE merge call each other"
  "core/text/ftfy_badness.c core/text/ftfy_encoding.c core/text/ftfy_fix_text.c | ftfy's fixers call each other, as upstream's modules do"
  "fast/tracker/memory_attention.c fast/tracker/prompt_encoder.c fast/workspace.c | fast/ is being restructured (issue 18)"
)
[ $# -gt 0 ] || { echo "usage: $0 OBJECT... (or one ;-separated list)" >&2; exit 2; }
all=$(IFS=';'; echo "$*")           # CMake passes $<TARGET_OBJECTS> as one ;-list
IFS=';' read -r -a objs <<< "$all"
set -- "${objs[@]}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# nm -A: "OBJECT:VALUE TYPE NAME" or "OBJECT: U NAME"; OBJECT named by its source file
nm -A "$@" | awk '{ f = $1; sub(/:.*/, "", f); sub(/.*samc_objects\.dir\//, "", f); sub(/\.o$/, "", f)
                    if ($(NF-1) == "U") print "U", f, $NF; else if ($(NF-1) ~ /^[TDBRGSC]$/) print "D", f, $NF }' > "$tmp/syms"
# edges "a b": a uses a symbol b defines
awk '$1 == "D" { def[$3] = $2 } $1 == "U" { use[++n] = $2 " " $3 }
     END { for (i = 1; i <= n; i++) { split(use[i], p, " "); if ((p[2] in def) && def[p[2]] != p[1]) print p[1], def[p[2]] } }' \
  "$tmp/syms" | sort -u > "$tmp/edges"
# strongly connected components (Tarjan), one sorted line per circle
awk '
function visit(v,   i, w, comp, n) {
  idx[v] = low[v] = counter++; stack[++sp] = v; on[v] = 1
  for (i = 1; i <= deg[v]; i++) {
    w = adj[v, i]
    if (!(w in idx)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
    else if (on[w] && idx[w] < low[v]) low[v] = idx[w]
  }
  if (low[v] == idx[v]) {
    comp = ""; n = 0
    do { w = stack[sp--]; on[w] = 0; comp = comp " " w; n++ } while (w != v)
    if (n > 1) print substr(comp, 2)
  }
}
{ adj[$1, ++deg[$1]] = $2; node[$1]; node[$2] }
END { counter = 0; for (v in node) if (!(v in idx)) visit(v) }' "$tmp/edges" |
  while read -r line; do tr ' ' '\n' <<< "$line" | sort | tr '\n' ' ' | sed 's/ $//'; echo; done | sort > "$tmp/found"
status=0
while read -r circle; do
  [ -n "$circle" ] || continue
  listed=0
  for k in "${known[@]}"; do [ "${k%% |*}" = "$circle" ] && listed=1; done
  if [ $listed = 0 ]; then
    echo "call cycle: $circle"
    for f in $circle; do
      awk -v f="$f" '$1 == f { printf "    %s -> %s\n", $1, $2 }' "$tmp/edges" | grep -F -f <(tr ' ' '\n' <<< "$circle" | sed 's/^/-> /') || true
    done
    status=1
  fi
done < "$tmp/found"
for k in "${known[@]}"; do
  grep -qxF "${k%% |*}" "$tmp/found" || { echo "listed call cycle no longer exists, remove it from $0: ${k%% |*}"; status=1; }
done
n=$(wc -l < "$tmp/edges")
[ $status = 0 ] && echo "no call cycles among $# object files ($n file-to-file edges; ${#known[@]} known cycles listed)"
exit $status
