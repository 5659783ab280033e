#!/usr/bin/env bash
# mgd dump of each test model on both GPU APIs: every GLSL file recompiles by
# itself (glslang, through glsl_check), every SPIR-V file validates
# (spirv-val), graph.dot parses (Graphviz), index.md lists every dispatch.
#   dump_test.sh MGD_BINARY DATA_DIR GLSL_CHECK_BINARY
set -uo pipefail
mgd=$1
data=$2
glsl_check=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
if [ "${MGD_REQUIRE_GPU_BACKENDS:-0}" != 1 ] && ! "$mgd" info | grep -q "^vulkan .*(.*)"; then
  echo "dump: no GPU, skipped"; exit 0
fi
for tool in spirv-val dot; do
  command -v "$tool" >/dev/null || { echo "dump: $tool is missing (scripts/setup installs it)"; exit 1; }
done
checked=0
for model in "$data"/models/*.tflite; do
  name=$(basename "$model" .tflite)
  for api in vulkan gl; do
    out="$work/$name-$api"
    precision=fp32; [ "$api" = gl ] && precision=fp16
    if ! "$mgd" dump "$model" --backend "$api" --precision "$precision" --out "$out" >"$work/log" 2>&1; then
      fail "$name $api: $(cat "$work/log")"; continue
    fi
    dispatches=$(ls "$out"/dispatches/*.json | wc -l)
    rows=$(grep -c '^| [0-9]* | \[' "$out/index.md")
    [ "$dispatches" -gt 0 ] && [ "$rows" -eq "$dispatches" ] || fail "$name $api: index lists $rows of $dispatches dispatches"
    # Every loop is marked, so that software GPUs keep it rolled (shaders/dialect.h).
    unmarked=$(cat "$out"/dispatches/*.comp | grep -o '[A-Za-z_]* *for (' | grep -vc '^MGD_LOOP *for (')
    [ "$unmarked" -eq 0 ] || fail "$name $api: $unmarked loops without MGD_LOOP"
    dot -Tsvg "$out/graph.dot" -o "$work/g.svg" 2>"$work/log" || fail "$name $api: graph.dot does not parse: $(head -3 "$work/log")"
    [ -s "$out/graph.svg" ] || fail "$name $api: no graph.svg"
    grep -q '"memory_objects"' "$out/plan.json" || fail "$name $api: plan.json has no memory objects"
    checked=$((checked + dispatches))
  done
done
# The shaders are compiled and validated once per distinct file: the models
# share most of their dispatches (1634 files, 543 distinct).
distinct() { md5sum "$@" | sort -u -k1,1 | cut -d' ' -f3-; }
distinct "$work"/*/dispatches/*.comp | "$glsl_check" >"$work/log" 2>&1 \
  || fail "a shader does not compile: $(grep -A3 -m3 ERROR "$work/log")"
while read -r f; do
  spirv-val --target-env vulkan1.1 "$f" >"$work/log" 2>&1 || fail "$f does not validate: $(head -3 "$work/log")"
done < <(distinct "$work"/*/dispatches/*.spv)
echo "dump: $checked dispatches checked, $failures failure(s)"
[ "$failures" -eq 0 ]
