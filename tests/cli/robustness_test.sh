#!/usr/bin/env bash
# What a careful user can do to mgd's files and paths (issue 18), through the
# command line: special files where mgd reads or writes (refused at once,
# never a hang), cache folders that cannot be used (one warning, then a run
# without a cache), cache entries and indexes that are FIFOs or folders,
# paths that are not UTF-8 in --json output, a full disk, .npy headers with
# garbage, a device that does not exist, NaN inputs with --check-finite.
#   robustness_test.sh MGD_BINARY DATA_DIR JSON_CHECK_BINARY
set -uo pipefail
mgd=$1
data=$2
json_check=$3
face="$data/models/face_detection_short_range.tflite"
face_input="$data/reference/face_detection_short_range/image/input_0.f32"
source "$(dirname "$0")/common.sh"
gpu_ok=0
"$mgd" info --json | grep -q '"devices":\[{' && gpu_ok=1

# expect_warning NAME PATTERN -- ARGS...: exit 0 and exactly one stderr line,
# a warning matching PATTERN.
expect_warning() {
  local name=$1 pattern=$2
  shift 3
  run_mgd "$@"
  local rc=$?
  if [ "$rc" -ne 0 ]; then fail "$name: exit $rc ($(cat "$work/err"))"; return; fi
  if [ "$(wc -l <"$work/err")" -ne 1 ] || ! grep -qE -- "^mgd: warning: .*$pattern" "$work/err"; then
    fail "$name: expected one warning matching /$pattern/, got: $(cat "$work/err")"
    return
  fi
  ok
}

expect_quiet() {
  local name=$1
  shift 2
  run_mgd "$@"
  local rc=$?
  if [ "$rc" -ne 0 ] || [ -s "$work/err" ]; then fail "$name: exit $rc, stderr: $(cat "$work/err")"; return; fi
  ok
}

# --- special files where files are read or written: refused, never opened for blocking I/O ---
mkfifo "$work/fifo.tflite" "$work/fifo.f32" "$work/fifo.npy"
expect_error "FIFO as the model" 2 "fifo.tflite: is a FIFO, not a regular file" -- run "$work/fifo.tflite" --input "$face_input"
expect_error "FIFO as --input" 2 "fifo.f32: is a FIFO, not a regular file" -- run "$face" --backend cpu --input "$work/fifo.f32"
expect_error "device as --input" 2 "/dev/zero: is a device, not a regular file" -- run "$face" --backend cpu --input /dev/zero
mkdir -p "$work/fifo_out"
mkfifo "$work/fifo_out/output_0.npy"
expect_error "FIFO where an output goes" 2 "output_0.npy: is a FIFO, not a regular file" \
  -- run "$face" --backend cpu --input "$face_input" --output-dir "$work/fifo_out"
mkfifo "$work/fifo.json"
expect_error "FIFO as --workgroups" 2 "fifo.json: is a FIFO, not a regular file" \
  -- run "$face" --input "$face_input" --workgroups "$work/fifo.json"

# --- .npy inputs: exactly what NumPy's format allows ---
npy() {  # npy FILE HEADER DATA_BYTES: a version 1 .npy with HEADER (padded, newline added)
  local header=$2
  local len=$(( (${#header} + 11 + 63) / 64 * 64 - 10 ))
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((len % 256)))\\x$(printf %02x $((len / 256)))"
    printf '%s' "$header"; printf '%*s' $((len - ${#header} - 1)) ''; printf '\n'; head -c "$3" /dev/zero; } >"$1"
}
npy "$work/good.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 128, 128, 3), }" 196608
expect_quiet "a NumPy .npy" -- run "$face" --backend cpu --input "$work/good.npy"
npy "$work/trailing.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 128, 128, 3), }garbage" 196608
expect_error "garbage after the header's dict" 2 "trailing.npy: not a .npy file mgd reads: bytes after the header's dict" \
  -- run "$face" --backend cpu --input "$work/trailing.npy"
npy "$work/huge.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483647, 2147483647, 2147483647), }" 16
expect_error "a huge shape" 2 "huge.npy: not a .npy file mgd reads: shape \[2147483647,2147483647,2147483647\] needs more than the 16 bytes of data the file has" \
  -- run "$face" --backend cpu --input "$work/huge.npy"
npy "$work/extra.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 128, 128, 3), 'x': 1, }" 196608
expect_error "an unknown header key" 2 "extra.npy: not a .npy file mgd reads: cannot read the value of 'x'|keys other than" \
  -- run "$face" --backend cpu --input "$work/extra.npy"
npy "$work/twice.npy" "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,), }" 12
expect_error "a key twice" 2 "twice.npy: not a .npy file mgd reads: 'descr' appears twice" -- run "$face" --backend cpu --input "$work/twice.npy"

# --- NaN and Inf: --check-finite names the first one ---
{ printf '\x00\x00\xc0\x7f'; tail -c +5 "$face_input"; } >"$work/nan.f32"
expect_error "--check-finite on a NaN input" 2 "input 0 'input' \[1,128,128,3\]: element 0 is NaN \(1 of its 49152 values are not finite\)" \
  -- run "$face" --backend cpu --input "$work/nan.f32" --check-finite
expect_quiet "a NaN input without --check-finite runs" -- run "$face" --backend cpu --input "$work/nan.f32"

# --- paths that are not UTF-8 in --json output: replaced, never an abort ---
bad_dir="$work/out_$(printf '\xff\xfe')"
if run_mgd run "$face" --backend cpu --input "$face_input" --output-dir "$bad_dir" --json && "$json_check" <"$work/out"; then
  ok
else
  fail "run --json with a non-UTF-8 --output-dir: $(cat "$work/err")"
fi
bad_model="$work/model_$(printf '\xff').tflite"
cp "$face" "$bad_model"
if run_mgd plan "$bad_model" --json && "$json_check" model $'\xef\xbf\xbd' <"$work/out"; then
  ok
elif [ "$gpu_ok" = 0 ] && grep -q "no GPU" "$work/err"; then
  ok
else
  fail "plan --json with a non-UTF-8 model path: $(cat "$work/err")"
fi

# --- the device the user named must exist ---
MGD_DEVICE=99 run_mgd run "$face" --input "$face_input" --backend auto
if [ $? -ne 2 ] || ! grep -q "no device '99' (MGD_DEVICE)" "$work/err"; then
  fail "MGD_DEVICE=99 with --backend auto: $(cat "$work/err")"
else
  ok
fi

# --- a full disk: the reason, not just "cannot write" ---
(trap '' XFSZ; ulimit -f 64; exec timeout 120 "$mgd" modelgen mobilenet_v1 --out "$work/big.tflite") >"$work/out" 2>"$work/err"
if [ $? -ne 1 ] || ! grep -q "big.tflite: cannot write (File too large)" "$work/err" || [ -e "$work/big.tflite" ]; then
  fail "a write past the file size limit: $(cat "$work/err")"
else
  ok
fi

if [ "$gpu_ok" = 1 ]; then
  # --- cache folders that cannot be used: one warning, and the run goes on ---
  long=$(printf 'x%.0s' $(seq 256))
  expect_warning "a cache path component of 256 bytes" "File name too long.*running without a cache" \
    -- run "$face" --input "$face_input" --cache-dir "$work/$long"
  ln -s "$work/loop_b" "$work/loop_a"
  ln -s "$work/loop_a" "$work/loop_b"
  expect_warning "a cache folder in a loop of links" "Too many levels of symbolic links.*running without a cache" \
    -- run "$face" --input "$face_input" --cache-dir "$work/loop_a/cache"
  : >"$work/plain_file"
  expect_warning "a cache folder under a file" "plain_file/cache.*running without a cache" \
    -- run "$face" --input "$face_input" --cache-dir "$work/plain_file/cache"
  if [ "$(id -u)" != 0 ]; then  # root searches any folder
    mkdir -p "$work/locked/inner"
    chmod 000 "$work/locked"
    expect_warning "a cache folder the user cannot search" "Permission denied.*running without a cache" \
      -- run "$face" --input "$face_input" --cache-dir "$work/locked/inner/cache"
    chmod 700 "$work/locked"
  fi

  # --- compile --json with a model path that is not UTF-8 ---
  if run_mgd compile "$bad_model" --out "$work/compiled_$(printf '\xff').tflite" --json && \
     "$json_check" model $'\xef\xbf\xbd' <"$work/out"; then
    ok
  else
    fail "compile --json with a non-UTF-8 model path: $(cat "$work/err")"
  fi

  # --- the cache's own files replaced by special files or folders: a miss, a warning, no hang ---
  cache="$work/cache"
  expect_quiet "a cold start stores" -- run "$face" --input "$face_input" --cache-dir "$cache"
  entry=$(ls "$cache"/*.mgcm | head -n 1)
  rm "$entry" && mkfifo "$entry"
  expect_warning "a FIFO where the entry was" "could not be stored: .*is a FIFO, not a regular file" \
    -- run "$face" --input "$face_input" --cache-dir "$cache" --json
  grep -q '"miss: the entry: .*is a FIFO, not a regular file' "$work/out" || fail "the FIFO entry is not a miss that says why: $(cat "$work/out")"
  rm "$entry" && mkdir "$entry"
  expect_warning "a folder where the entry was" "could not be stored: .*is a folder, not a regular file" \
    -- run "$face" --input "$face_input" --cache-dir "$cache"
  rmdir "$entry"
  rm "$cache/index" && mkfifo "$cache/index"
  expect_warning "a FIFO where the index was" "could not be stored: .*index: is a FIFO, not a regular file" \
    -- run "$face" --input "$face_input" --cache-dir "$cache"
  rm "$cache/index" && rm -f "$cache/index.lock" && mkfifo "$cache/index.lock"
  expect_warning "a FIFO where the index lock was" "could not be stored: .*index.lock: not a regular file" \
    -- run "$face" --input "$face_input" --cache-dir "$cache"
fi

echo "robustness: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
