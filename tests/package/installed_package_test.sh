#!/usr/bin/env bash
# libmgd as an app gets it (issue 18): `cmake --install` into a fresh
# prefix; only the C API is exported; examples/c builds outside the build
# tree against the installed package, with pkg-config and with
# find_package(mgd), and both programs run the face detector (on the CPU, and
# on the GPU with a compilation cache when there is one).
#   installed_package_test.sh BUILD_DIR SOURCE_DIR DATA_DIR
set -euo pipefail
build=$1
src=$2
data=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
lib=$(find "$prefix" -name 'libmgd.so' | head -n 1)
[ -n "$lib" ] || { echo "FAIL: no libmgd.so installed"; exit 1; }
for header in c_api.h gpu_delegate.h; do
  [ -f "$prefix/include/mgd/$header" ] || { echo "FAIL: mgd/$header not installed"; exit 1; }
done

# Exported: the C API's functions, nothing else.
others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^Mgd' || true)
if [ -n "$others" ]; then echo "FAIL: libmgd exports more than the C API: $(echo "$others" | head -n 5)"; exit 1; fi
count=$(nm -D --defined-only "$lib" | grep -c ' Mgd')
echo "libmgd exports $count functions, all of the C API"

model="$data/models/face_detection_short_range.tflite"
input="$data/reference/face_detection_short_range/image/input_0.f32"
check() {  # check NAME PROGRAM [CACHE_DIR]
  local out
  out=$(LD_LIBRARY_PATH="$(dirname "$lib")" "$2" "$model" "$input" ${3:+"$3"})
  echo "$out" | grep -q "output 1 'classificators' \[1,896,1\]:" || { echo "FAIL: $1: $out"; exit 1; }
}

# pkg-config: enough to build a C program.
pc_dir=$(dirname "$(find "$prefix" -name mgd.pc | head -n 1)")
flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs mgd)
cc -std=c11 -Wall -Wextra -Werror "$src/examples/c/run_model.c" $flags -o "$work/run_model_pc"
check "pkg-config build" "$work/run_model_pc"

# CMake: examples/c's own project, find_package(mgd).
cmake -S "$src/examples/c" -B "$work/example" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="-Wall -Werror" >/dev/null
cmake --build "$work/example" >/dev/null
check "find_package build" "$work/example/run_model"
if "$prefix/bin/mgd" info --json | grep -q '"devices":\[{'; then
  check "find_package build on the GPU" "$work/example/run_model" "$work/cache"
  check "find_package build on the GPU, warm" "$work/example/run_model" "$work/cache"
  [ -s "$work/cache/index" ] || { echo "FAIL: the GPU run kept no cache"; exit 1; }
fi
echo "installed package: pkg-config and find_package builds run"
