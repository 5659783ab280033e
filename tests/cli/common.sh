# Shared by the command-line tests: a scratch folder, pass/fail counters and
# the checks of docs/design.md section 4's contract. Source it after setting
# `mgd` (the binary under test).
work=$(mktemp -d)
trap 'chmod -R u+rwx "$work" 2>/dev/null; rm -rf "$work"' EXIT
failures=0
passed=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { passed=$((passed + 1)); }

# run_mgd ARGS...: mgd with a time limit (a hang fails a test instead of CI).
run_mgd() { timeout 300 "$mgd" "$@" >"$work/out" 2>"$work/err"; }

# expect_error NAME CODE PATTERN -- ARGS...: exit code CODE, exactly one stderr
# line, matching PATTERN.
expect_error() {
  local name=$1 code=$2 pattern=$3
  shift 4
  run_mgd "$@"
  local rc=$?
  if [ "$rc" -eq 124 ]; then fail "$name: hung"; return; fi
  if [ "$rc" -ne "$code" ]; then fail "$name: exit $rc, expected $code ($(cat "$work/err"))"; return; fi
  if [ "$(wc -l <"$work/err")" -ne 1 ]; then fail "$name: $(wc -l <"$work/err") stderr lines, expected 1: $(cat "$work/err")"; return; fi
  if ! grep -qE -- "$pattern" "$work/err"; then fail "$name: stderr '$(cat "$work/err")' lacks /$pattern/"; return; fi
  ok
}

# expect_ok NAME ARGS...: exit 0.
expect_ok() {
  local name=$1
  shift
  if ! run_mgd "$@"; then fail "$name: $(cat "$work/err")"; return 1; fi
  ok
}
