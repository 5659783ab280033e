#!/usr/bin/env bash
# The mgd command line as a user meets it: the happy path, and one clear
# error line with exit code 2 for each kind of bad input (docs/design.md section 4).
#   cli_test.sh MGD_BINARY DATA_DIR TRACE_CHECK_BINARY
set -uo pipefail
mgd=$1
data=$2
trace_check=$3
face="$data/models/face_detection_short_range.tflite"
face_input="$data/reference/face_detection_short_range/image/input_0.f32"
source "$(dirname "$0")/common.sh"

# --- the happy path ---
if expect_ok "run --json" run "$face" --backend cpu --input "$face_input" --output-dir "$work/o" --json; then
  for field in '"backend":"cpu"' '"nodes":164' '"delegated_nodes":0' '"partitions":0' '"prepare_ms":' '"run_ms":' '"device_ms":' '"gpu_ms":null' \
               '"name":"classificators"' '"shape":\[1,896,1\]'; do
    grep -qE "$field" "$work/out" || fail "run --json lacks $field: $(cat "$work/out")"
  done
  [ "$(wc -l <"$work/out")" -eq 1 ] || fail "run --json printed more than one line"
  [ -s "$work/o/output_0.npy" ] && [ -s "$work/o/output_1.npy" ] || fail "run did not write output_<k>.npy"
  head -c 6 "$work/o/output_1.npy" | grep -q NUMPY || fail "output_1.npy is not a .npy file"
fi
expect_ok "run summary" run "$face" --input "$face_input" && grep -q "output 1 'classificators'" "$work/out" \
  || fail "summary lacks the outputs"
expect_ok "ops" ops "$face" --json && grep -q '"op":"CONV_2D"' "$work/out" || fail "ops --json lacks CONV_2D"
expect_ok "ops table" ops "$face" && grep -q "DEQUANTIZE.*folded at load" "$work/out" || fail "ops table lacks folding"
# An .npy input works like the raw .f32 one and gives the same outputs.
header="{'descr': '<f4', 'fortran_order': False, 'shape': (1, 128, 128, 3), }"
while [ $(( (10 + ${#header} + 1) % 64 )) -ne 0 ]; do header="$header "; done
{ printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( ${#header} + 1 )))\\x00"; printf '%s\n' "$header"; cat "$face_input"; } \
  >"$work/input.npy"
expect_ok "npy input" run "$face" --backend cpu --input "$work/input.npy" --output-dir "$work/o2" && \
  cmp -s "$work/o/output_1.npy" "$work/o2/output_1.npy" || fail "npy input gives different outputs"
expect_ok "modelgen" modelgen mobilenet_v1 --out "$work/m.tflite" --seed 3
expect_ok "modelgen runs" run "$work/m.tflite" --input "$data/modelgen/mobilenet_v2_seed1/input_0.f32" --json
# A token-id model: raw int32 ids in, on the CPU and on the GPU.
expect_ok "modelgen bert_tiny" modelgen bert_tiny --out "$work/bert.tflite"
for backend in cpu vulkan; do
  expect_ok "bert_tiny on $backend" run "$work/bert.tflite" --backend "$backend" \
    --input "$data/modelgen/bert_tiny_seed1/input_0.int32" --output-dir "$work/bert_$backend" && \
    grep -qa "'shape': (1,128,128)" "$work/bert_$backend/output_0.npy" || fail "bert_tiny on $backend: no [1,128,128] output"
done

# mgd quantize: the committed int8 face detector is what it makes of the
# photos (scripts/quantized-references), and it runs; int8 inputs and
# outputs, read and written as they are; modelgen's int8 MobileNet.
photos=("$data/images/astronaut.png" "$data/images/hand.jpg" "$data/images/football.jpg")
if expect_ok "quantize" quantize "$face" --calibration "${photos[@]}" --input-range -1,1 --out "$work/face_int8.tflite" --json; then
  grep -q '"int8_nodes":90,' "$work/out" && grep -q '"float_nodes":0,' "$work/out" && grep -q '"samples":3' "$work/out" \
    || fail "quantize --json: $(cat "$work/out")"
  cmp -s "$work/face_int8.tflite" "$data/quantized/face_detection_short_range_int8/model.tflite" \
    || fail "quantize does not make the committed int8 face detector (run scripts/quantized-references)"
fi
expect_ok "int8 model runs" run "$work/face_int8.tflite" --backend cpu --input "$face_input" && \
  grep -q "output 1 'classificators' \[1,896,1\]" "$work/out" || fail "the int8 model's summary: $(cat "$work/out")"
expect_ok "int8 model on the CPU" run "$work/face_int8.tflite" --backend cpu --input "$face_input" --json && \
  grep -q '"int8":"integer"' "$work/out" || fail "run --json lacks \"int8\":\"integer\": $(head -c 200 "$work/out")"
if [ "${MGD_REQUIRE_GPU_BACKENDS:-0}" = 1 ]; then
  expect_ok "int8 model on the GPU" run "$work/face_int8.tflite" --backend vulkan --input "$face_input" --json && \
    grep -q '"int8":"float"' "$work/out" && nodes=$(grep -o '"nodes":[0-9]*' "$work/out" | cut -d: -f2) && \
    grep -q "\"delegated_nodes\":$nodes," "$work/out" \
    || fail "the int8 model is not wholly on the GPU: $(head -c 300 "$work/out")"
  expect_ok "int8 model, --int8-integer" run "$work/face_int8.tflite" --backend vulkan --int8-integer --input "$face_input" --json && \
    grep -q '"int8":"integer"' "$work/out" || fail "--int8-integer: $(head -c 300 "$work/out")"
  # Its filters 8-bit on the GPU, or as floats: fewer constant bytes the first way.
  constant_bytes() { grep -o '"constant_bytes":[0-9]*' "$work/out" | cut -d: -f2; }
  expect_ok "int8 filters" run "$work/face_int8.tflite" --backend vulkan --int8-filters 8 --input "$face_input" --json && \
    grep -q '"int8_filters":"8-bit"' "$work/out" || fail "--int8-filters 8: $(head -c 300 "$work/out")"
  bytes_8bit=$(constant_bytes)
  expect_ok "float filters" run "$work/face_int8.tflite" --backend vulkan --int8-filters float --input "$face_input" --json && \
    grep -q '"int8_filters":"float"' "$work/out" || fail "--int8-filters float: $(head -c 300 "$work/out")"
  bytes_float=$(constant_bytes)
  [ -n "$bytes_8bit" ] && [ -n "$bytes_float" ] && [ "$bytes_8bit" -lt "$bytes_float" ] \
    || fail "8-bit filters take $bytes_8bit constant bytes, float ones $bytes_float"
  # lavapipe has integer dot products: the convolutions then sum in them.
  expect_ok "int8 dot products" run "$work/face_int8.tflite" --backend vulkan --int8-filters dot --input "$face_input" --json && \
    grep -q '"int8_filters":"8-bit dot products"' "$work/out" || fail "--int8-filters dot: $(head -c 300 "$work/out")"
  expect_ok "no dot products on GL" run "$work/face_int8.tflite" --backend gl --int8-filters dot --input "$face_input" --json && \
    grep -q '"int8_filters":"8-bit"' "$work/out" || fail "--int8-filters dot on GL: $(head -c 300 "$work/out")"
  expect_error "bad --int8-filters" 2 "int8-filters.*4" -- run "$work/face_int8.tflite" --int8-filters 4
  # tune times them both ways and writes the faster for the precision tuned.
  if expect_ok "tune int8 filters" tune "$work/face_int8.tflite" --backend vulkan --max-candidates 1 \
      --out "$work/wg_int8.json" --json; then
    grep -qE '"int8_filters":\{"bits":(8|32),.*"models":1\}' "$work/out" \
      || fail "tune measured no int8 filters: $(head -c 400 "$work/out")"
    grep -qE '"int8_filter_bits": \{"fp32":(8|32)\}' "$work/wg_int8.json" \
      || fail "tune wrote no int8_filter_bits for fp32: $(grep int8 "$work/wg_int8.json")"
    grep -qE '"dot":(true|false),"dot_ms":[0-9.]+' "$work/out" && \
      grep -qE '"int8_dot_products": \{"fp32":(true|false)\}' "$work/wg_int8.json" \
      || fail "tune timed no dot products: $(grep int8 "$work/wg_int8.json")"
  fi
fi
expect_ok "quantize --int8-io" quantize "$face" --random-samples 2 --int8-io --per-tensor --out "$work/io.tflite"
head -c 49152 /dev/urandom >"$work/in8.raw"
expect_ok "int8 io run" run "$work/io.tflite" --backend cpu --input "$work/in8.raw" --output-dir "$work/io" && \
  grep -qa "'descr': '|i1'" "$work/io/output_0.npy" || fail "an int8 output is not written as int8"
expect_ok "quantize --dynamic-range" quantize "$face" --random-samples 1 --dynamic-range --out "$work/dyn.tflite"
expect_ok "quantize --percentile" quantize "$face" --random-samples 2 --percentile 99.9 --out "$work/pct.tflite"
expect_ok "modelgen --int8" modelgen mobilenet_v2 --int8 --out "$work/m8.tflite"

# Partitions: the LSTM keyword spotter in one; its unrolled twin in three
# (PACK of 49 frames stays on the CPU), one with --max-partitions 1.
if [ "${MGD_REQUIRE_GPU_BACKENDS:-0}" = 1 ]; then
  expect_ok "modelgen lstm_kws" modelgen lstm_kws --out "$work/kws.tflite"
  expect_ok "lstm_kws on the GPU" run "$work/kws.tflite" --backend vulkan --input "$data/modelgen/lstm_kws_seed1/input_0.f32" --json \
    && grep -q '"partitions":1' "$work/out" && grep -q '"delegated_nodes":5' "$work/out" || fail "lstm_kws not in one partition: $(head -c 300 "$work/out")"
  expect_ok "modelgen lstm_kws_unrolled" modelgen lstm_kws_unrolled --out "$work/unrolled.tflite"
  expect_ok "ops partitions" ops "$work/unrolled.tflite" --backend vulkan && [ "$(grep -c '^partition ' "$work/out")" -eq 3 ] \
    && grep -q '^partition 2: 3 nodes; per run 12544 bytes in (1 tensors), 48 bytes out (1 tensors)' "$work/out" \
    || fail "ops: not three partitions with their transfers: $(grep '^partition' "$work/out")"
  expect_ok "ops --max-partitions 1" ops "$work/unrolled.tflite" --backend vulkan --max-partitions 1 \
    && [ "$(grep -c '^partition ' "$work/out")" -eq 1 ] && grep -q 'beyond the maximum of 1 delegated partitions' "$work/out" \
    || fail "ops --max-partitions 1: $(grep '^partition' "$work/out")"
  expect_ok "run --max-partitions 1" run "$work/unrolled.tflite" --backend vulkan --max-partitions 1 \
    --input "$data/modelgen/lstm_kws_seed1/input_0.f32" --json && grep -q '"partitions":1' "$work/out" \
    || fail "run --max-partitions 1: $(head -c 300 "$work/out")"
  # By cost: a dispatch per frame's op costs more than the CPU's loop, and
  # the 3-node head's submission more than its 800 operations.
  expect_ok "ops --partition-by-cost" ops "$work/unrolled.tflite" --backend vulkan --partition-by-cost \
    && [ "$(grep -c '^partition ' "$work/out")" -eq 0 ] \
    && grep -qE 'on the CPU by cost: its partition of 3 nodes would take [0-9.]+ ms there plus [0-9.]+ ms of transfers, against [0-9.]+ ms on the CPU' "$work/out" \
    || fail "ops --partition-by-cost: $(grep -E '^partition|by cost' "$work/out" | head -3)"
  expect_ok "run --partition-by-cost" run "$work/unrolled.tflite" --backend vulkan --partition-by-cost \
    --input "$data/modelgen/lstm_kws_seed1/input_0.f32" --json && grep -q '"partitions":0' "$work/out" \
    || fail "run --partition-by-cost: $(head -c 300 "$work/out")"
fi
expect_error "max-partitions negative" 2 "max-partitions" -- ops "$face" --max-partitions -1
expect_error "unknown wait" 2 "--wait: bogus not in" -- bench "$face" --wait bogus

# bench on the CPU: latency percentiles, no GPU time.
if expect_ok "bench --backend cpu" bench "$face" --backend cpu --iterations 2 --warmup 1 --json; then
  for field in '"run_ms":\{"max":' '"p50":' '"gpu_ms":\{"p50":null\}' '"prepare_ms":'; do
    grep -qE "$field" "$work/out" || fail "bench --json lacks $field: $(head -c 300 "$work/out")"
  done
fi

# The GPU path: supported nodes on the GPU, outputs written as on the CPU.
if [ "${MGD_REQUIRE_GPU_BACKENDS:-0}" = 1 ]; then
  for api in vulkan gl; do
    if expect_ok "run --backend $api --precision fp16 --no-fusion" run "$face" --backend "$api" --precision fp16 \
        --no-fusion --input "$face_input" --json; then
      grep -q '"precision":"fp16"' "$work/out" || fail "run --precision fp16: $(head -c 300 "$work/out")"
      grep -q '"partitions":1' "$work/out" || fail "run --backend $api: not one partition: $(head -c 300 "$work/out")"
      grep -qE '"invoke_timing":\{"gpu_ms":[0-9][0-9.e-]*,"in_delegates_ms":[0-9]' "$work/out" \
        || fail "run --backend $api: no invoke timing with the GPU's time: $(grep -o '"invoke_timing":[^}]*}' "$work/out")"
    fi
    # Invokes in flight with active waits (polling; a software GPU waits passively by default).
    if expect_ok "bench --backend $api --in-flight 2 --wait active" bench "$face" --backend "$api" --iterations 4 --warmup 1 \
        --in-flight 2 --wait active --json; then
      grep -qE '"in_flight":\{"cpu_ms_per_invoke":[0-9][0-9.e-]*,"frames_per_s":[0-9]' "$work/out" \
        || fail "bench --in-flight: no throughput or CPU per invoke: $(head -c 400 "$work/out")"
      grep -q '"wait":"active"' "$work/out" || fail "bench --wait active: $(head -c 300 "$work/out")"
      grep -qE '"cpu_ms_per_invoke":[0-9]*\.?[0-9]*[1-9]' "$work/out" \
        || fail "bench: no CPU time per invoke: $(grep -o '"cpu_ms_per_invoke":[^,]*' "$work/out")"
    fi
    if expect_ok "bench --backend $api" bench "$face" --backend "$api" --iterations 3 --warmup 1 --json --trace "$work/trace.json"; then
      grep -qE '"gpu_ms":\{"p50":[0-9]' "$work/out" || fail "bench --backend $api has no GPU time: $(head -c 300 "$work/out")"
      grep -qE '"per_op":\[\{' "$work/out" || fail "bench --backend $api has no per-op times"
      grep -q '"wait":"passive"' "$work/out" || fail "bench on a software GPU did not wait passively: $(head -c 300 "$work/out")"
      "$trace_check" "$work/trace.json" "$work/out" || fail "bench --trace on $api: the trace or the per-op times are wrong"
    fi
  done
  for api in vulkan gl; do
    if expect_ok "run --backend $api" run "$face" --backend "$api" --input "$face_input" --output-dir "$work/$api" --json; then
      grep -qE '"backend":"'"$api"'"' "$work/out" || fail "run --backend $api: $(cat "$work/out")"
      grep -qE '"delegated_nodes":[1-9]' "$work/out" || fail "run --backend $api delegated nothing: $(cat "$work/out")"
      # Mesa's software drivers have a built-in table, picked without --workgroups.
      grep -q '"source":"table"' "$work/out" || fail "run --backend $api used no built-in table entry"
      [ -s "$work/$api/output_1.npy" ] || fail "run --backend $api wrote no outputs"
    fi
  done
  # Memory strategies: other plans, the same outputs.
  for strategy in naive:shared_objects min_cost_flow greedy_by_size:offsets; do
    if expect_ok "run --memory-strategy $strategy" run "$face" --backend vulkan --input "$face_input" \
        --memory-strategy "$strategy" --output-dir "$work/m_$strategy" --json; then
      grep -qE '"memory_plans":\["'"$strategy"'' "$work/out" || fail "run --memory-strategy $strategy: $(cat "$work/out")"
      cmp -s "$work/vulkan/output_0.npy" "$work/m_$strategy/output_0.npy" && \
        cmp -s "$work/vulkan/output_1.npy" "$work/m_$strategy/output_1.npy" || fail "--memory-strategy $strategy changed the outputs"
    fi
  done
  # Shared programs: fewer of them, each reading the sizes that differ as
  # parameters (which dump shows).
  programs() { grep -oE '"programs":[0-9]+' "$work/out" | cut -d: -f2; }
  if expect_ok "run --json programs" run "$face" --backend vulkan --input "$face_input" --json; then
    own=$(programs)
    if expect_ok "run --share-programs" run "$face" --backend vulkan --input "$face_input" --share-programs --json; then
      shared=$(programs)
      [ -n "$own" ] && [ -n "$shared" ] && [ "$shared" -lt "$own" ] \
        || fail "--share-programs: $shared programs, without it $own"
    fi
  fi
  if expect_ok "dump --share-programs" dump "$face" --backend vulkan --share-programs --out "$work/dump_shared"; then
    grep -lqE "#define [A-Z0-9_]+ params\.p[0-9]+" "$work/dump_shared/dispatches/"*.vulkan.comp || fail "dump --share-programs: no shared program reads parameters"
  fi
  if expect_ok "plan --json" plan "$face" --json --svg "$work/plan.svg"; then
    for field in '"lower_bound_bytes":[0-9]+' '"chosen":"[a-z_]+"' '"equality":\{"offsets_bytes":null,"shared_objects_bytes":[0-9]+\}' \
                 '"min_cost_flow":\{"offsets_bytes":null' '"greedy_by_breadth":\{"offsets_bytes":[0-9]+,"shared_objects_bytes":[0-9]+\}'; do
      grep -qE "$field" "$work/out" || fail "plan --json lacks $field: $(cat "$work/out")"
    done
    grep -q '<svg' "$work/plan.svg" && grep -q 'lower bound' "$work/plan.svg" || fail "plan --svg drew no picture"
  fi
  expect_ok "plan table" plan "$face" --precision fp16 && grep -qE "^chosen .*x the lower bound" "$work/out" \
    || fail "plan prints no choice: $(cat "$work/out")"
  # The tuner: a table that run then uses, with the same outputs.
  if expect_ok "tune" tune "$face" --backend vulkan --max-candidates 2 --out "$work/wg.json"; then
    grep -qE "dispatches .* in [0-9.]+ s; GPU time" "$work/out" || fail "tune printed no summary: $(cat "$work/out")"
    ! grep -q "int8_filter_bits" "$work/wg.json" || fail "tune of a float model chose int8 filters"
    if expect_ok "run --workgroups" run "$face" --backend vulkan --input "$face_input" --workgroups "$work/wg.json" \
        --output-dir "$work/tuned" --json; then
      grep -q '"source":"table"' "$work/out" || fail "run --workgroups used no table entry: $(head -c 400 "$work/out")"
      cmp -s "$work/vulkan/output_1.npy" "$work/tuned/output_1.npy" || fail "run --workgroups changed the outputs"
    fi
    expect_error "a table for another API" 2 "wg.json: the table is for api 'vulkan'" \
      -- run "$face" --backend gl --input "$face_input" --workgroups "$work/wg.json"
  fi
  # Intermediate tensors: GPU against CPU, then with a broken op that compare must point at.
  if expect_ok "dump-tensors cpu" run "$face" --backend cpu --input "$face_input" --dump-tensors "$work/t_cpu" && \
     expect_ok "dump-tensors gl" run "$face" --backend gl --input "$face_input" --dump-tensors "$work/t_gl"; then
    [ "$(ls "$work/t_gl"/*.npy | wc -l)" -ge 90 ] || fail "--dump-tensors wrote $(ls "$work/t_gl"/*.npy | wc -l) tensors"
    expect_ok "compare" compare "$work/t_gl" "$work/t_cpu" --threshold 1e-4 --json && \
      grep -q '"first_divergent":null' "$work/out" || fail "compare of a healthy run: $(head -c 300 "$work/out")"
    # A GPU dump broken at node 9's output (64 floats set to 1e4 inside its
    # data): compare must point at it, not at a later tensor.
    cp -r "$work/t_gl" "$work/t_fault"
    for k in $(seq 0 63); do printf '\x00\x40\x1c\x46'; done |
      dd of="$work/t_fault/conv2d_1.npy" bs=1 seek=4096 conv=notrunc status=none
    expect_ok "compare finds the fault" compare "$work/t_fault" "$work/t_cpu" && \
      grep -q "first divergent tensor: conv2d_1$" "$work/out" || fail "compare did not point at node 9's conv2d_1: $(tail -2 "$work/out")"
  fi
  # tune --conv-settings: the convolutions' blocks, split sums and gates timed end
  # to end (the eight blocks first) and written to the table, which run then
  # compiles with: every tensor still within 1e-4 of the CPU's.
  if expect_ok "tune --conv-settings" tune "$face" --backend gl --conv-settings --skip-workgroups --json \
      --out "$work/wg_conv.json"; then
    grep -qE '"conv_settings":\{"best":\{"conv_block_flat":(true|false),"conv_block_slices":[12],"conv_block_x":[1248],' "$work/out" \
      || fail "tune --conv-settings chose nothing: $(head -c 600 "$work/out")"
    [ "$(grep -oE '"step":1\}' "$work/out" | wc -l)" -eq 8 ] || fail "tune --conv-settings did not time the eight blocks: $(cat "$work/out")"
    for field in '"conv_block_x": ' '"conv_block_slices": ' '"conv_block_flat": ' '"split_conv_outputs": ' \
        '"gate_invocations": '; do
      grep -q "$field" "$work/wg_conv.json" || fail "the table lacks $field: $(head -c 600 "$work/wg_conv.json")"
    done
    expect_ok "dump-tensors with the settings" run "$face" --backend gl --input "$face_input" --workgroups "$work/wg_conv.json" \
        --dump-tensors "$work/t_conv" && expect_ok "compare with the settings" compare "$work/t_conv" "$work/t_cpu" \
        --threshold 1e-4 --json && grep -q '"first_divergent":null' "$work/out" \
      || fail "the tuned settings changed the outputs: $(head -c 300 "$work/out")"
  fi
  # mgd check on a model with a planted fp16-hostile layer ('shift' adds 3000,
  # 'unshift' takes it away): every layer before 'unshift' stays within fp16's
  # error, 'unshift' is the first past the threshold and the one that grows it.
  if expect_ok "modelgen fp16_trap" modelgen fp16_trap --out "$work/trap.tflite" && \
     expect_ok "check" check "$work/trap.tflite" --backend vulkan --out "$work/check"; then
    grep -q "first layer past 0.01: node 4 (ADD) 'unshift'" "$work/out" || fail "check did not name 'unshift': $(tail -3 "$work/out")"
    grep -q "largest growth: node 4 (ADD) 'unshift'" "$work/out" || fail "check's largest growth is not 'unshift': $(tail -3 "$work/out")"
    # The table: node op rel.RMS growth tensor; before 'unshift' within fp16's error, 'unshift' far past it.
    awk '$1 ~ /^[0-9]+$/ { if ($5 == "unshift") { seen = 1; if (!($3 > 0.1 && $4 > 100)) bad = bad " unshift:" $3 "/" $4 } \
                          else if (!seen && !($3 < 2e-3)) bad = bad " " $5 ":" $3; rows++ }
         END { if (!seen || rows != 7 || bad != "") { print "rows " rows bad; exit 1 } }' "$work/out" || \
      fail "check's table: $(cat "$work/out")"
    [ -f "$work/check/fp16/tensors.json" ] && [ -f "$work/check/fp32/tensors.json" ] || fail "check --out kept no dumps"
    if expect_ok "check --json (gl)" check "$work/trap.tflite" --backend gl --json; then
      grep -qE '"first_past_threshold":\{[^}]*"name":"unshift"' "$work/out" || fail "check --json: $(head -c 600 "$work/out")"
      grep -qE '"outputs":\[\{[^]]*"name":"head/BiasAdd"' "$work/out" || fail "check --json lacks the output: $(head -c 600 "$work/out")"
    fi
  fi
  # The accuracy guard on a head whose fp16 sums cancel, with fp16 arithmetic
  # kept on the software GPU (--fp16-arithmetic): fp16 loses the answer,
  # tune --accuracy finds the head, and with its table the fp16 run is within
  # the budget again (check applies the table as run does).
  output_rms() { grep -oE '"outputs":\[\{[^]]*' "$work/out" | grep -oE '"relative_rms":[0-9.e+-]+' | head -1 | cut -d: -f2; }
  if expect_ok "modelgen fp16_sum_trap" modelgen fp16_sum_trap --out "$work/sum_trap.tflite" && \
     expect_ok "check --fp16-arithmetic" check "$work/sum_trap.tflite" --backend gl --fp16-arithmetic --json; then
    awk -v e="$(output_rms)" 'BEGIN { exit !(e > 2e-2) }' || fail "fp16 arithmetic did not spoil the trap's output: $(output_rms)"
    grep -qE '"largest_growth":\{[^}]*"name":"head/BiasAdd"' "$work/out" || fail "check's largest growth is not the head: $(head -c 600 "$work/out")"
    if expect_ok "tune --accuracy" tune "$work/sum_trap.tflite" --backend gl --precision fp16 --fp16-arithmetic \
        --accuracy --skip-workgroups --out "$work/guard.json" --json; then
      grep -q '"fp32_layers":\["head/BiasAdd"\]' "$work/out" || fail "tune --accuracy did not keep the head alone: $(cat "$work/out")"
      grep -q '"met":true' "$work/out" || fail "tune --accuracy did not meet the budget: $(cat "$work/out")"
      grep -qE '"accuracy": \[' "$work/guard.json" && grep -q '"fp32_layers":\["head/BiasAdd"\]' "$work/guard.json" || \
        fail "the table has no accuracy entry: $(cat "$work/guard.json")"
      if expect_ok "check with the guard" check "$work/sum_trap.tflite" --backend gl --fp16-arithmetic \
          --workgroups "$work/guard.json" --out "$work/guarded" --json; then
        grep -q '"fp32_layers":\["head/BiasAdd"\]' "$work/out" || fail "check did not apply the table's guard: $(head -c 300 "$work/out")"
        awk -v e="$(output_rms)" 'BEGIN { exit !(e < 5e-3) }' || fail "the guarded output is not within 5e-3: $(output_rms)"
      fi
      if expect_ok "run with the guard" run "$work/sum_trap.tflite" --backend gl --precision fp16 --fp16-arithmetic \
          --workgroups "$work/guard.json" --input "$work/guarded/input_0.f32" --json; then
        grep -qE '"name":"node[0-9]+_CONV_2D_fp32"' "$work/out" || fail "run: no dispatch computes in fp32: $(head -c 900 "$work/out")"
      fi
    fi
  fi
  # The compilation cache: two processes fill one folder at once, then a third start hits.
  "$mgd" run "$face" --backend vulkan --input "$face_input" --cache-dir "$work/cache" --output-dir "$work/c1" --json >"$work/c1.json" 2>&1 &
  "$mgd" run "$face" --backend vulkan --input "$face_input" --cache-dir "$work/cache" --output-dir "$work/c2" --json >"$work/c2.json" 2>&1 &
  wait %1 && wait %2 || fail "concurrent --cache-dir runs: $(cat "$work/c1.json" "$work/c2.json" | head -c 400)"
  if expect_ok "run --cache-dir (warm)" run "$face" --backend vulkan --input "$face_input" --cache-dir "$work/cache" \
      --output-dir "$work/c3" --json; then
    grep -q '"cache":\["hit"\]' "$work/out" || fail "the third start did not hit the cache: $(head -c 300 "$work/out")"
    cmp -s "$work/c1/output_1.npy" "$work/c3/output_1.npy" && cmp -s "$work/vulkan/output_1.npy" "$work/c3/output_1.npy" \
      || fail "cold and warm starts differ"
  fi
  # MGD_LOG=debug says why an entry was not used (here: one byte changed).
  entry=$(ls "$work/cache"/*.mgcm | head -1)
  printf 'x' | dd of="$entry" bs=1 seek=100 conv=notrunc 2>/dev/null
  MGD_LOG=debug "$mgd" run "$face" --backend vulkan --input "$face_input" --cache-dir "$work/cache" >"$work/out" 2>"$work/err"
  if grep -q "mgd: debug: compilation cache: miss: the entry's SHA-256 does not match the index" "$work/err" && \
     grep -q "mgd: debug: compilation cache: stored" "$work/err"; then
    passed=$((passed + 1))
  else
    fail "MGD_LOG=debug did not report the damaged entry: $(cat "$work/err")"
  fi
  # Offline compiled models: compile, load without compiling (same outputs),
  # refuse another backend unless --recompile.
  if expect_ok "compile" compile "$face" --backend vulkan --out "$work/face.mgd.tflite" --json; then
    grep -q '"partitions": 1' "$work/out" || fail "compile --json: $(head -c 300 "$work/out")"
    if expect_ok "run a compiled model" run "$work/face.mgd.tflite" --input "$face_input" --output-dir "$work/cm" --json; then
      grep -q '"cache":\["compiled model: loaded"\]' "$work/out" && grep -q '"backend":"vulkan"' "$work/out" \
        || fail "the compiled model was not loaded as compiled: $(head -c 300 "$work/out")"
      cmp -s "$work/vulkan/output_1.npy" "$work/cm/output_1.npy" || fail "the compiled model's outputs differ from a plain run"
    fi
    expect_error "compiled model on another backend" 2 "was compiled for .*--recompile" -- \
      run "$work/face.mgd.tflite" --backend gl --input "$face_input"
    expect_ok "--recompile" run "$work/face.mgd.tflite" --backend gl --input "$face_input" --recompile
  fi
  expect_error "compile --backend cpu" 2 "compiles for a GPU" -- compile "$face" --backend cpu --out "$work/x.tflite"
  MGD_DEVICE=no-such-gpu "$mgd" run "$face" --backend vulkan --input "$face_input" >"$work/out" 2>"$work/err"
  if [ $? -ne 2 ] || ! grep -q "no device matches 'no-such-gpu'" "$work/err"; then
    fail "MGD_DEVICE=no-such-gpu: $(cat "$work/err")"
  else
    passed=$((passed + 1))
  fi
fi

# Both GPU APIs are listed; in CI (MGD_REQUIRE_GPU_BACKENDS=1) each must have a device.
if expect_ok "info --json" info --json; then
  for field in '"api":"vulkan"' '"api":"gl"' '"auto":\{"backend":"' '"max_workgroup_invocations":'; do
    grep -qE "$field" "$work/out" || fail "info --json lacks $field: $(head -c 300 "$work/out")"
  done
  if [ "${MGD_REQUIRE_GPU_BACKENDS:-0}" = 1 ]; then
    [ "$(grep -o '"devices":\[{' "$work/out" | wc -l)" -eq 2 ] || fail "info --json: a backend has no device"
    # Each device measured on the reference workload, in both precisions.
    [ "$(grep -oE '"capabilities":\{"fp16_gflops":[0-9.]+,"fp16_ms":[0-9.]+,"fp32_gflops":[0-9.]+,"fp32_ms":[0-9.]+' "$work/out" | wc -l)" -eq 2 ] \
      || fail "info --json: a device lacks measured capabilities: $(grep -o '"capabilities":[^}]*}' "$work/out")"
  fi
fi
expect_ok "info --no-measure" info --json --no-measure && ! grep -q '"capabilities"' "$work/out" \
  || fail "info --no-measure still measures"
expect_ok "info --clamp-limits" info --clamp-limits && grep -q "clamped to GLES 3.1" "$work/out" \
  || fail "info --clamp-limits does not say the limits are clamped"

# --- bad input: one line, exit 2 ---
head -c 1000 "$face" >"$work/truncated.tflite"
expect_error "truncated model" 2 "truncated.tflite: .*(malformed|truncated)" -- run "$work/truncated.tflite" --input "$face_input"
head -c 4000 /dev/urandom >"$work/random.tflite"
expect_error "random bytes" 2 "random.tflite: not a TFLite model" -- run "$work/random.tflite" --input "$face_input"
: >"$work/empty.tflite"
expect_error "empty file" 2 "empty.tflite: not a TFLite model" -- run "$work/empty.tflite" --input "$face_input"
expect_error "missing model" 2 "/no/such.tflite: cannot open" -- run /no/such.tflite --input "$face_input"
expect_error "directory as model" 2 "$work: is a folder, not a regular file" -- run "$work" --input "$face_input"
expect_error "no input" 2 "has 1 input\(s\) \('input' \[1,128,128,3\]\), but 0 --input" -- run "$face"
expect_error "two inputs" 2 "but 2 --input" -- run "$face" --input "$face_input" --input "$face_input"
head -c 400 "$face_input" >"$work/short.f32"
expect_error "short input" 2 "short.f32: holds 100 float32 values, but input 0 \('input'\) of shape \[1,128,128,3\] needs 49152" \
  -- run "$face" --input "$work/short.f32"
head -c 401 "$face_input" >"$work/odd.f32"
expect_error "ragged input" 2 "odd.f32: 401 bytes is not a whole number" -- run "$face" --input "$work/odd.f32"
expect_error "npy of the wrong shape" 2 "output_1.npy: shape \[1,896,1\] does not match input 0" \
  -- run "$face" --input "$work/o/output_1.npy"
# An int32 .npy for a float32 input: the dtype is named, not read as floats.
printf '\x93NUMPY\x01\x00\x6b\x00{"descr": "<i4", "fortran_order": False, "shape": (2,), }' >"$work/ints.npy"
printf '%*s\n' 49 '' >>"$work/ints.npy"
printf '\x01\x00\x00\x00\x02\x00\x00\x00' >>"$work/ints.npy"
expect_error "npy of another dtype" 2 "ints.npy: holds int32 values, but input 0 \('input'\) is float32" \
  -- run "$face" --input "$work/ints.npy"
printf 'not an npy' >"$work/bad.npy"
expect_error "bad npy" 2 "bad.npy: not a .npy file mgd reads" -- run "$face" --input "$work/bad.npy"
expect_error "missing input" 2 "/no/input.f32: cannot open" -- run "$face" --input /no/input.f32
expect_error "unwritable output dir" 2 "--output-dir /proc/mgd-test/x: cannot create" \
  -- run "$face" --input "$face_input" --output-dir /proc/mgd-test/x
expect_error "unknown backend" 2 "backend" -- run "$face" --backend metal --input "$face_input"
expect_error "unknown memory strategy" 2 "--memory-strategy greedy: unknown strategy 'greedy' \(expected one of naive, " \
  -- run "$face" --input "$face_input" --memory-strategy greedy
expect_error "strategy without offsets" 2 "equality has no offsets plan" \
  -- run "$face" --input "$face_input" --memory-strategy equality:offsets
printf '{"format": "mgd-workgroups", "version": 7}' >"$work/v7.json"
expect_error "table of another version" 2 "--workgroups $work/v7.json: version: 7 is not supported" \
  -- run "$face" --input "$face_input" --workgroups "$work/v7.json"
printf '{"format": "mgd-workgroups", "version": 1, "entries": [{"op": "ADD", "precision": "fp32", "shape": "any", "workgroup": [2048, 1, 1]}]}' >"$work/big.json"
expect_error "impossible workgroup" 2 "entries\[0\].workgroup: \[2048,1,1\] is impossible" \
  -- run "$face" --input "$face_input" --workgroups "$work/big.json"
expect_error "missing table" 2 "--workgroups /no/table.json: cannot open" -- run "$face" --input "$face_input" --workgroups /no/table.json
expect_error "tune on the cpu" 2 "--backend cpu: there are no workgroups to tune" -- tune "$face" --backend cpu --out "$work/x.json"
expect_error "tune with nothing to do" 2 "--skip-workgroups leaves nothing to do without --accuracy or --conv-settings" \
  -- tune "$face" --skip-workgroups --out "$work/x.json"
expect_error "compare without dumps" 2 "/no/dump/tensors.json: cannot open the file \(No such file or directory\): is it a folder written by mgd run --dump-tensors\?" \
  -- compare /no/dump "$work"
mkdir -p "$work/badindex"
printf '{"backend": 3, "tensors": []}' >"$work/badindex/tensors.json"
expect_error "compare a dump whose backend is no string" 2 "badindex/tensors.json: \"backend\" is not a string" \
  -- compare "$work/badindex" "$work/badindex"
printf '{"format": "mgd-workgroups", "version": 1, "tuned": "yes"}' >"$work/tuned.json"
expect_error "table field of another type" 2 "--workgroups $work/tuned.json: tuned: expected true or false" \
  -- run "$face" --input "$face_input" --workgroups "$work/tuned.json"
expect_error "plan on the cpu" 2 "--backend cpu: the CPU path has no GPU memory to plan" -- plan "$face" --backend cpu
expect_error "plan of a missing model" 2 "/no/such.tflite: cannot open" -- plan /no/such.tflite
expect_error "unknown subcommand" 2 "unknown command 'frobnicate' \(the commands are run, compare, check, bench" -- frobnicate
expect_error "check on the cpu" 2 "check compares the GPU's fp16 with its fp32" -- check "$face" --backend cpu
expect_error "check of a missing model" 2 "/no/model.tflite" -- check /no/model.tflite
expect_error "modelgen unknown" 2 "unknown model 'resnet'" -- modelgen resnet --out "$work/r.tflite"
expect_error "modelgen unwritable" 2 "/proc/mgd-test/m.tflite: cannot write \(No such file or directory\)" \
  -- modelgen mobilenet_v2 --out /proc/mgd-test/m.tflite
# A custom op nobody registered (the name patched in place, same length).
LC_ALL=C sed 's/Convolution2DTransposeBias/Convolution2DTransposeBiaX/' "$data/models/selfie_segmentation.tflite" \
  >"$work/custom.tflite"
expect_error "unregistered custom op" 2 "custom.tflite: node [0-9]+ \(custom Convolution2DTransposeBiaX\): custom op 'Convolution2DTransposeBiaX' \(version 1\) is not registered" \
  -- run "$work/custom.tflite" --input "$data/reference/selfie_segmentation/image/input_0.f32"

# mgd pipeline: the photo in, the face out (in image pixels) and its picture.
photo="$data/images/astronaut.png"
models="$data/models"
if expect_ok "pipeline face --json" pipeline face --models "$models" "$photo" --backend cpu --json --out "$work/face.png"; then
  grep -qE '"detections":\[\{"box":\[1[0-9]{2}\.[0-9]+,[0-9]+\.[0-9]+,9[0-9]\.[0-9]+,9[0-9]\.[0-9]+\],"keypoints":\[(\[[0-9.]+,[0-9.]+\],?){6}\],"score":0\.9[0-9]*\}\]' "$work/out" \
    || fail "pipeline --json lacks the one face: $(cat "$work/out")"
  [ "$(wc -l <"$work/out")" -eq 1 ] || fail "pipeline --json printed more than one line"
  head -c 8 "$work/face.png" | grep -q PNG || fail "pipeline --out wrote no PNG"
fi
expect_ok "pipeline face text" pipeline face --models "$models" "$photo" --backend cpu && grep -q "face 1: score 0.9" "$work/out" \
  || fail "pipeline's text lacks the face"
head -c 3000 "$photo" >"$work/cut.png"
expect_error "pipeline truncated image" 2 "cut.png: not a readable PNG" -- pipeline face --models "$models" "$work/cut.png" --backend cpu
expect_error "pipeline non-image" 2 "face_detection_short_range.tflite: not a PNG or JPEG file" -- pipeline face --models "$models" "$face" --backend cpu
expect_error "pipeline missing image" 2 "/no/such.png: cannot open the image" -- pipeline face --models "$models" /no/such.png --backend cpu
expect_error "pipeline unknown solution" 2 "unknown solution 'faces' \(one of: face, face_full_range, face_mesh, hands, pose, selfie\)" -- pipeline faces --models "$models" "$photo"
# The other solutions: the hand's 21 landmarks and handedness, the body's 33
# with visibility and its mask, the person's mask; two images, the second
# tracked.
if expect_ok "pipeline hands --json" pipeline hands --models "$models" "$data/images/hand.jpg" --backend cpu --json; then
  grep -qE '"label":\{"name":"(left|right)","score":0\.[0-9]+\},"landmarks":\[(\[-?[0-9.e-]+,-?[0-9.e-]+,-?[0-9.e-]+\],?){21}\]' "$work/out" \
    || fail "pipeline hands --json lacks the hand: $(head -c 600 "$work/out")"
fi
if expect_ok "pipeline pose text" pipeline pose --models "$models" "$data/images/football.jpg" "$data/images/football.jpg" --backend cpu --out "$work/pose.png"; then
  grep -q "pose 1: score" "$work/out" && grep -qE "mask: [0-9]+\.[0-9]% of the image" "$work/out" \
    && grep -q "1 submission, tracked from the previous image" "$work/out" && head -c 8 "$work/pose_1.png" | grep -q PNG \
    || fail "pipeline pose lacks the body, its mask or the tracked frame: $(cat "$work/out")"
fi
if expect_ok "pipeline selfie --json" pipeline selfie --models "$models" "$photo" --backend cpu --json; then
  grep -qE '"mask":\{"box":\[[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+\],"coverage":0\.5[0-9]*,"height":512,"mean":0\.5[0-9]*,"width":512\}' "$work/out" \
    || fail "pipeline selfie --json lacks the mask's statistics: $(cat "$work/out")"
fi
expect_error "quantize without calibration" 2 "give calibration images \(--calibration\) or --random-samples" \
  -- quantize "$face" --out "$work/x.tflite"
expect_error "quantize images for token ids" 2 "one float32 \[1,H,W,3\] input; .*bert.tflite has 1 input\(s\), int32 \[1,128\]" \
  -- quantize "$work/bert.tflite" --calibration "$photo" --out "$work/x.tflite"
expect_error "quantize an empty range" 2 "--input-range 1,0 is empty" -- quantize "$face" --random-samples 1 --input-range 1,0 --out "$work/x.tflite"
expect_error "quantize a bad range" 2 "expected LO,HI" -- quantize "$face" --random-samples 1 --input-range one --out "$work/x.tflite"
expect_error "quantize a broken image" 2 "random.tflite" -- quantize "$face" --calibration "$work/random.tflite" --out "$work/x.tflite"
expect_error "modelgen --int8 of another family" 2 "--int8 is for mobilenet_v1 and mobilenet_v2" -- modelgen bert_tiny --int8 --out "$work/x.tflite"
expect_error "pipeline without models" 2 "/no/models/face_detection_short_range.tflite: cannot open" \
  -- pipeline face "$photo" --models /no/models --backend cpu

echo "cli: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
