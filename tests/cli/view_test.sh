#!/usr/bin/env bash
# mgd view as a user runs it headless (docs/view.md): under a virtual X
# server, a few frames, a screenshot whose pixels are checked where
# `mgd pipeline --json` says the face and the person are; and one clear
# error line for each kind of bad input.
#   view_test.sh MGD_BINARY DATA_DIR SCREENSHOT_CHECK_BINARY
set -uo pipefail
mgd=$1
data=$2
check=$3
if [ -z "${MGD_VIEW_TEST_DISPLAY:-}" ]; then
  if ! command -v xvfb-run >/dev/null; then
    echo "view: xvfb-run is missing (scripts/setup installs xvfb)"
    [ "${MGD_REQUIRE_GPU_BACKENDS:-0}" = 1 ] && exit 1
    exit 0
  fi
  MGD_VIEW_TEST_DISPLAY=1 exec xvfb-run -a -s "-screen 0 1280x1024x24" "$0" "$@"
fi
source "$(dirname "$0")/common.sh"
models="$data/models"
photo="$data/images/astronaut.png"
common=(--models "$models" --cache-dir "$work/cache" --frames-to-run 5 --json)

# Where the face and the person are, from the CLI's own pipeline on the CPU.
"$mgd" pipeline face --models "$models" "$photo" --backend cpu --json >"$work/face.json" || fail "pipeline face failed"
read -r fx fy fw fh < <(grep -oE '"box":\[[^]]*\]' "$work/face.json" | head -1 | tr -d '"box:[]' | tr ',' ' ')
face_x=$(awk "BEGIN{print int($fx + $fw / 2)}")
face_y=$(awk "BEGIN{print int($fy + $fh / 2)}")
background_x=500 background_y=250  # the photo's right edge, beside the rocket: no person

# json_field NAME: the viewer's --json value of NAME.
json_field() { grep -oE "\"$1\":(\"[^\"]*\"|[^,}]*)" "$work/out" | head -1 | cut -d: -f2- | tr -d '"'; }

# The face: its box drawn where the face is, the frame uploaded once and
# read by the model in place: on GL a buffer of the window's context the
# delegate shares, on Vulkan memory the window's GL imports.
for backend in gl vulkan; do
  if expect_ok "view face $backend" view face --image "$photo" --backend "$backend" --screenshot "$work/face.png" "${common[@]}"; then
    cp "$work/out" "$work/view_face.json"
    [ "$(json_field frames)" = 5 ] || fail "view face: $(json_field frames) frames, expected 5"
    [ "$(wc -l <"$work/out")" -eq 1 ] || fail "view --json printed more than one line"
    [ "$(json_field shared_with_window)" = true ] && grep -q '"data_path":"frame: uploaded once, read by the model in place' "$work/out" \
      || fail "view face on $backend: the frame is not shared with the window: $(cat "$work/out")"
    "$check" "$work/face.png" "$work/view_face.json" box "$fx" "$fy" "$fw" "$fh" || fail "view face $backend: no box on the face"
  fi
done
# The check can fail: the photo itself has no box.
"$check" "$photo" "$work/view_face.json" box "$fx" "$fy" "$fw" "$fh" 2>/dev/null && fail "screenshot_check found a box in the bare photo"

# Another window size: the frame is letterboxed and the box still on the face.
if expect_ok "view face 900x500" view face --image "$photo" --backend cpu --size 900x500 --screenshot "$work/wide.png" "${common[@]}"; then
  grep -qE '"window":\[900,500\]' "$work/out" && ! grep -q '"scale":1.0' "$work/out" || fail "view --size: $(cat "$work/out")"
  "$check" "$work/wide.png" "$work/out" box "$fx" "$fy" "$fw" "$fh" || fail "view face 900x500: no box on the face"
fi
expect_error "view bad size" 2 "WIDTHxHEIGHT" -- view face --image "$photo" --size 90

# The selfie mask over the person, on Vulkan fp16.
if expect_ok "view selfie" view selfie --image "$photo" --backend vulkan --precision fp16 --screenshot "$work/selfie.png" "${common[@]}"; then
  "$check" "$work/selfie.png" "$work/out" tint "$photo" "$face_x" "$face_y" "$background_x" "$background_y" \
    || fail "view selfie: no mask over the person"
fi

# A plain model: selfie_segmentation's output as a heat map, drawn from the
# GPU on GL and Vulkan, and from host memory on the CPU.
for backend in gl vulkan cpu; do
  if expect_ok "view model $backend" view "$models/selfie_segmentation.tflite" --image "$photo" --input-range 0,1 \
      --backend "$backend" --screenshot "$work/model_$backend.png" "${common[@]}"; then
    [ "$(json_field heat_map)" = true ] || fail "view model $backend: no heat map"
    [ "$backend" = cpu ] || grep -q '"data_path":"input: host memory; output: drawn from the GPU' "$work/out" \
      || fail "view model $backend: the output is not drawn from the GPU: $(cat "$work/out")"
    "$check" "$work/model_$backend.png" "$work/out" heat "$photo" "$face_x" "$face_y" "$background_x" "$background_y" \
      || fail "view model $backend: no heat over the person"
  fi
done
grep -q '"data_path":"input: host memory; output: drawn from the GPU' "$work/out" && fail "the CPU drew from the GPU"

# Keys (scripted): f switches to fp16 and b to Vulkan, each prepared again.
if expect_ok "view keys" view face --image "$photo" --backend gl --keys fb --screenshot "$work/keys.png" "${common[@]}"; then
  [ "$(json_field backend)" = vulkan ] && [ "$(json_field precision)" = fp16 ] \
    || fail "view keys: f and b did not switch to Vulkan fp16: $(cat "$work/out")"
  "$check" "$work/keys.png" "$work/out" box "$fx" "$fy" "$fw" "$fh" || fail "view keys: no box on the face after switching"
fi

# A folder of frames plays in name order, looping.
mkdir -p "$work/frames"
cp "$photo" "$work/frames/a.png"
cp "$data/images/hand.jpg" "$work/frames/b.jpg"
expect_ok "view frames" view hands --frames "$work/frames" --backend cpu "${common[@]}" && [ "$(json_field frames)" = 5 ] \
  || fail "view frames: $(cat "$work/out")"

# Without a window (GPU hosts with no display): the same loop, nothing drawn.
if DISPLAY= expect_ok "view no window" view face --image "$photo" --backend cpu --no-window --models "$models" --frames-to-run 3 --json; then
  [ "$(json_field frames)" = 3 ] && [ "$(json_field label)" != "" ] || fail "view --no-window: $(cat "$work/out")"
fi

# Bad input: one line, exit 2; no display: exit 1.
head -c 100 "$photo" >"$work/cut.png"
mkdir -p "$work/empty"
expect_error "view missing image" 2 "/no/such.png: cannot open the image" -- view face --image /no/such.png
expect_error "view truncated image" 2 "cut.png: not a readable PNG" -- view face --image "$work/cut.png"
expect_error "view empty folder" 2 "empty: no PNG or JPEG files" -- view face --frames "$work/empty"
expect_error "view missing camera" 2 "/no/video0: cannot open the camera" -- view face --camera /no/video0
expect_error "view two sources" 2 "frames" -- view face --image "$photo" --frames "$work/frames"
expect_error "view unknown solution" 2 "unknown solution 'faces'" -- view faces --image "$photo" --models "$models" --frames-to-run 1
DISPLAY= expect_error "view without a display" 1 "no display \(DISPLAY is not set" -- view face --image "$photo"

echo "view: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
