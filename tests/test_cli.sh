#!/bin/sh
# End-to-end tests of the frit CLI: known simplifications (answers worked out by hand), C
# semantics of `frit eval`, error exits, IR file commands, and a cross-check that simplified
# output evaluates like the original at sample points. Usage: sh tests/test_cli.sh [BUILD_DIR]
BUILD=${1:-build}
FRIT=$BUILD/frit
fails=0
count=0
tmp=${TMPDIR:-/tmp}/frit-cli-test.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

fail() {
  fails=$((fails + 1))
  echo "FAIL: $*" >&2
}

# expect_out WANT CMD...: stdout of CMD is exactly WANT and it exits 0
expect_out() {
  want=$1
  shift
  count=$((count + 1))
  got=$("$@" 2>"$tmp/err")
  rc=$?
  if [ $rc -ne 0 ] || [ "$got" != "$want" ]; then
    fail "$* -> '$got' (exit $rc), want '$want'; stderr: $(cat "$tmp/err")"
  fi
}

# expect_err PATTERN CMD...: CMD exits 2 and stderr matches PATTERN (grep -E)
expect_err() {
  pat=$1
  shift
  count=$((count + 1))
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 2 ]; then
    fail "$* exited $rc, want 2"
  elif ! grep -Eq -- "$pat" "$tmp/err"; then
    fail "$*: stderr '$(cat "$tmp/err")' does not match '$pat'"
  fi
}

if [ ! -x "$FRIT" ]; then
  echo "test_cli.sh: $FRIT not built" >&2
  exit 1
fi

# --- simplifications whose results follow from the ranges ---
# 0 <= y < 4, so x*4+y lies in [4x, 4x+3]: the quotient is x and the remainder y.
expect_out 'x' "$FRIT" simplify '(x*4+y)/4' --range x=0:16 --range y=0:4
expect_out 'y' "$FRIT" simplify '(x*4+y)%4' --range x=0:16 --range y=0:4
expect_out 'x' "$FRIT" simplify 'x+0'
expect_out 'x' "$FRIT" simplify '1*x'
expect_out 'x' "$FRIT" simplify 'x*1 - 0'
# constants fold
expect_out '7' "$FRIT" simplify '3 + 4'
# x in [0, 8): x < 8 always holds and x/8 is always 0
expect_out '1' "$FRIT" simplify '(x < 8) + x/8' --range x=0:8
# x takes the single value 8, so x % 4 is 0
expect_out '0' "$FRIT" simplify 'x % 4' --range x=8:9

# --- C semantics of eval (truncating division, remainder takes the dividend's sign) ---
expect_out '-3' "$FRIT" eval '7 / -2'
expect_out '1' "$FRIT" eval '7 % -2'
expect_out '-3' "$FRIT" eval '-7 / 2'
expect_out '-1' "$FRIT" eval '-7 % 2'
expect_out '14' "$FRIT" eval '2 + 3 * 4'
expect_out '20' "$FRIT" eval '(2 + 3) * 4'
expect_out '3' "$FRIT" eval '10 - 4 - 3'
expect_out '2' "$FRIT" eval '16 / 4 / 2'
expect_out '1' "$FRIT" eval '1 < 2 == 1'
expect_out '-2' "$FRIT" eval 'min(3, -2)'
expect_out '3' "$FRIT" eval 'max(3, -2)'
expect_out '0' "$FRIT" eval '!5'
expect_out '1' "$FRIT" eval '5 && 0 || 2'
expect_out '2' "$FRIT" eval '0 ? 1 : 1 ? 2 : 3'
expect_out '1' "$FRIT" eval 'x > y' x=3 y=2
expect_out '0' "$FRIT" eval 'x >= y + 2' x=3 y=2
expect_out '23' "$FRIT" eval '(x*4+y)' x=5 y=3
expect_out '102' "$FRIT" eval '(x < 4) * 100 + (y ? 2 : 3)' x=3 y=-1
# frit's integer semantics: x/0 == 0, x%0 == x, wraparound
expect_out '0' "$FRIT" eval 'x / 0' x=5
expect_out '5' "$FRIT" eval 'x % 0' x=5
expect_out '-9223372036854775808' "$FRIT" eval '9223372036854775807 + 1'
expect_out '-9223372036854775808' "$FRIT" eval '-9223372036854775808'
expect_out '-1' "$FRIT" eval '(int32_t)x' x=4294967295

# --- errors: exit status 2 and a message ---
expect_err 'syntax error at column 7' "$FRIT" simplify '(x*4+y'
expect_err '\^' "$FRIT" simplify '(x*4+y'
expect_err 'syntax error at column 5' "$FRIT" simplify 'x + * y'
expect_err "unexpected '\\)'" "$FRIT" simplify 'x)'
expect_err "unknown function 'foo'" "$FRIT" simplify 'foo(x)'
expect_err 'takes two arguments' "$FRIT" simplify 'min(x, y, z)'
expect_err 'does not fit' "$FRIT" simplify '99999999999999999999'
expect_err "bad --range 'x=5:5'.*empty" "$FRIT" simplify 'x' --range x=5:5
expect_err "bad --range 'x=9:2'.*empty" "$FRIT" simplify 'x' --range x=9:2
expect_err "bad --range 'x5'" "$FRIT" simplify 'x' --range x5
expect_err "bad --range 'x=a:b'" "$FRIT" simplify 'x' --range x=a:b
expect_err 'needs NAME=LO:HI' "$FRIT" simplify 'x' --range
expect_err 'missing EXPR' "$FRIT" simplify
expect_err 'outside its --range' "$FRIT" eval 'x' x=20 --range x=0:16
expect_err 'unknown command' "$FRIT" frobnicate
expect_err 'usage' "$FRIT"
expect_err 'eval' "$FRIT" eval 'x + 1'

# --- deep nesting: a clear error past the parser's limit, never a stack overflow ---
# nest N PRE MID POST: PRE repeated N times, then MID, then POST repeated N times
nest() {
  awk -v n="$1" -v a="$2" -v m="$3" -v b="$4" 'BEGIN {
    s = ""; for (i = 0; i < n; i++) printf "%s", a; printf "%s", m
    for (i = 0; i < n; i++) printf "%s", b; print "" }'
}
nest 40000 '(' x ')' >"$tmp/p40k"
expect_out 'x' "$FRIT" simplify "$(cat "$tmp/p40k")"
nest 40000 '(' x ')+1' >"$tmp/c40k"
expect_out 'x + 40000' sh -c "'$FRIT' simplify - < '$tmp/c40k'"
# longer than an argument may be: EXPR '-' reads standard input
nest 1000000 '(' x ')' >"$tmp/p1m"
expect_err 'nested deeper than 100000 levels at offset 100000' sh -c "'$FRIT' simplify - < '$tmp/p1m'"
nest 1000000 '-' x '' >"$tmp/n1m"
expect_err 'nested deeper than 100000 levels' sh -c "'$FRIT' eval - x=1 < '$tmp/n1m'"
nest 99999 '-' ' x' '' >"$tmp/n99k"
expect_out '-x' sh -c "'$FRIT' simplify - < '$tmp/n99k'"
nest 99999 '1 ? ' x ' : 2' >"$tmp/t99k"
expect_out '7' sh -c "'$FRIT' eval - x=7 < '$tmp/t99k'"
nest 200000 '' x '+1' >"$tmp/s200k"
expect_out 'x + 200000' sh -c "'$FRIT' simplify - < '$tmp/s200k'"
expect_out '200003' sh -c "'$FRIT' eval - x=3 < '$tmp/s200k'"
"$FRIT" parse - <"$tmp/s200k" >"$tmp/deep.ir"
count=$((count + 1))
"$FRIT" verify "$tmp/deep.ir" >/dev/null || fail "verify of a 200,000-deep IR file"
expect_out 'x + 200000' sh -c "'$FRIT' simplify-ir '$tmp/deep.ir' | '$FRIT' print - --c"
# "--" ends the options, so an expression may begin with "--"
expect_out '7' "$FRIT" eval -- --x x=7

# --- help ---
count=$((count + 1))
"$FRIT" help | grep -q 'simplify' || fail "frit help does not list simplify"
count=$((count + 1))
"$FRIT" --help | grep -q 'simplify-ir' || fail "frit --help does not list simplify-ir"

# --- IR files: parse -> print -> verify -> simplify-ir, and bad input ---
"$FRIT" parse '(x*4+y)/4' --range x=0:16 --range y=0:4 >"$tmp/a.ir"
count=$((count + 1))
"$FRIT" verify "$tmp/a.ir" >/dev/null || fail "verify of parsed expression"
expect_out 'x' sh -c "'$FRIT' simplify-ir '$tmp/a.ir' > '$tmp/s.ir' && '$FRIT' print '$tmp/s.ir' --c"
count=$((count + 1))
"$FRIT" print "$tmp/a.ir" --tree >/dev/null || fail "print --tree"
count=$((count + 1))
"$FRIT" print "$tmp/a.ir" --listing >/dev/null || fail "print --listing"
# the textual IR round-trips
"$FRIT" print "$tmp/a.ir" --ir >"$tmp/b.ir"
count=$((count + 1))
cmp -s "$tmp/a.ir" "$tmp/b.ir" || fail "textual IR does not round-trip"
printf '%%0 = frobnicate i64\n' >"$tmp/bad.ir"
expect_err 'bad.ir' "$FRIT" print "$tmp/bad.ir"
expect_err 'cannot read' "$FRIT" verify "$tmp/missing.ir"

# --- cross-check: simplified output evaluates like the original ---
# cross EXPR RANGES POINTS: RANGES is "x=0:16 y=0:4"; POINTS is a list of "x=1,y=2"
cross() {
  expr=$1
  ranges=$2
  points=$3
  rargs=
  for r in $ranges; do rargs="$rargs --range $r"; done
  # shellcheck disable=SC2086
  simp=$("$FRIT" simplify "$expr" $rargs 2>"$tmp/err")
  rc=$?
  count=$((count + 1))
  if [ $rc -ne 0 ] || [ -z "$simp" ]; then
    fail "simplify '$expr': $(cat "$tmp/err")"
    return
  fi
  for pt in $points; do
    binds=$(echo "$pt" | tr ',' ' ')
    # shellcheck disable=SC2086
    a=$("$FRIT" eval "$expr" $binds $rargs 2>&1)
    # shellcheck disable=SC2086
    b=$("$FRIT" eval "$simp" $binds $rargs 2>&1)
    count=$((count + 1))
    [ "$a" = "$b" ] || fail "'$expr' = $a but simplified '$simp' = $b at $pt"
  done
}
cross '(x*4+y)/4 + (x*4+y)%4' 'x=0:16 y=0:4' 'x=0,y=0 x=15,y=3 x=7,y=2 x=1,y=3'
cross '((x*8+y)*3+z)/3%8' 'x=0:5 y=0:8 z=0:3' 'x=0,y=0,z=0 x=4,y=7,z=2 x=2,y=5,z=1'
cross '(x*4+y)%4' 'x=0:16 y=-3:4' 'x=0,y=-3 x=1,y=-1 x=15,y=3 x=3,y=0'
cross 'x*2/2' 'x=-9223372036854775808:' 'x=-9223372036854775808 x=4611686018427387904 x=-1 x=9223372036854775806'
cross 'min(x, 5) + max(x - 3, 0) * 2' 'x=-3:10' 'x=-3 x=0 x=5 x=9'
cross 'x < 0 ? -x : x' 'x=-5:5' 'x=-5 x=0 x=4'
cross '(x + 3) / 4 * 4 - x % 4' 'x=-8:9' 'x=-8 x=-1 x=0 x=5 x=8'
cross 'x / -4 + x % -3' 'x=-10:11' 'x=-10 x=-7 x=0 x=3 x=10'
cross '(x < y) + (x == y) * 2 + !(x - y)' 'x=-2:6 y=-2:3' 'x=-2,y=-2 x=5,y=2 x=0,y=1'
cross '(x*16 + y) >> 4' 'x=0:100 y=0:16' 'x=0,y=0 x=99,y=15 x=50,y=7'
cross '(int32_t)(x * 65536) / 65536' 'x=0:100000' 'x=0 x=32767 x=32768 x=99999'

# --- runtime configuration and the code cache ---
expect_out '3' sh -c "FRIT_THREADS=3 $FRIT info | sed -n 's/^threads: \\([0-9]*\\).*/\\1/p'"
expect_out "cache: $tmp/cc" sh -c "FRIT_CACHE_DIR=$tmp/cc $FRIT info | grep '^cache: '"
mkdir -p "$tmp/cc"
: >"$tmp/cc/frit-0123456789abcdef.so"
: >"$tmp/cc/keep.txt"
expect_out '' "$FRIT" cache clear "$tmp/cc"
count=$((count + 1))
{ [ ! -e "$tmp/cc/frit-0123456789abcdef.so" ] && [ -e "$tmp/cc/keep.txt" ]; } ||
  fail "cache clear: want frit-*.so removed and other files kept: $(ls "$tmp/cc")"
expect_err 'usage: frit cache clear' "$FRIT" cache

# --- tune: a command run with FRIT_TUNE=1; stored tunings listed (a damaged one named) and removed ---
expect_out '1' "$FRIT" tune sh -c 'echo $FRIT_TUNE'
expect_out 'a b' "$FRIT" tune -- echo a b
expect_err 'usage: frit tune' "$FRIT" tune
expect_err "cannot run 'no-such-command-frit'" "$FRIT" tune no-such-command-frit
expect_out '' "$FRIT" tune --list "$tmp/no-cache"
mkdir -p "$tmp/tc/tune"
printf 'choices: rows=3 block=2\nkernel: k1_mul_sum\ntuned_ms: 0.5000\ndefault_ms: 1.0000\ncandidates: 7\nmachine: CPU X, 2 threads\n' \
  >"$tmp/tc/tune/00000000000000aa.txt"
expect_out 'k1_mul_sum: rows=3 block=2 (1.0000 -> 0.5000 ms, 7 candidates) on CPU X, 2 threads' "$FRIT" tune --list "$tmp/tc"
printf 'choices: rows=banana\n' >"$tmp/tc/tune/00000000000000bb.txt"
expect_out "$tmp/tc/tune/00000000000000bb.txt: unreadable (ignored)" sh -c "$FRIT tune --list $tmp/tc | grep unreadable"
expect_out '' "$FRIT" tune --clear "$tmp/tc"
count=$((count + 1))
[ ! -e "$tmp/tc/tune" ] || fail "tune --clear: want $tmp/tc/tune removed: $(ls "$tmp/tc/tune")"
expect_err 'unexpected argument' "$FRIT" info extra

# --- profile: the summary of a hand-written trace (whitespace and key order as another tool
# might write them): kb 0.6 ms in one call, ka 0.4 ms in two; ka moves 2e6 bytes -> 5 GB/s ---
cat >"$tmp/trace.json" <<'TRACE'
{ "otherData": {"copy_gbps": 10, "fma_gflops": 100},
  "traceEvents": [
    {"name": "ka", "ph": "X", "cat": "kernel", "ts": 0, "dur": 300, "pid": 1, "tid": 1,
     "args": {"ops": "mul", "site": "a.py:3", "bytes_read": 1000000, "bytes_written": 500000, "flops": 0}},
    {"cat": "kernel", "name": "ka", "ph": "X", "ts": 400, "dur": 100, "pid": 1, "tid": 1,
     "args": {"site": "a.py:3", "bytes_written": 500000, "flops": 0, "ops": "mul"}},
    {"name": "kb", "ph": "X", "cat": "kernel", "ts": 600, "dur": 600, "pid": 1, "tid": 2,
     "args": {"ops": "sum", "site": "", "bytes_read": 0, "bytes_written": 0, "flops": 6000000}},
    {"name": "schedule", "ph": "X", "cat": "compile", "ts": 0, "dur": 50, "pid": 1, "tid": 1, "args": {}}
  ]
}
TRACE
expect_out 'kb 1 0.600 60.0%' sh -c "$FRIT profile $tmp/trace.json | awk 'NR == 3 {print \$1, \$2, \$3, \$4}'"
expect_out 'ka 2 0.400 40.0% 5.00 50.0%' sh -c "$FRIT profile $tmp/trace.json | awk '\$1 == \"ka\" {print \$1, \$2, \$3, \$4, \$5, \$7}'"
expect_out 'kb 10.00 10.0%' sh -c "$FRIT profile $tmp/trace.json | awk '\$1 == \"kb\" {print \$1, \$6, \$8}'"
expect_out 'schedule 1 0.050' sh -c "$FRIT profile $tmp/trace.json | awk '\$1 == \"schedule\" {print \$1, \$2, \$3}'"
printf '{"traceEvents": 3}' >"$tmp/bad.json"
expect_err 'traceEvents' "$FRIT" profile "$tmp/bad.json"
expect_err 'cannot read' "$FRIT" profile "$tmp/none.json"
expect_err 'usage: frit profile' "$FRIT" profile

echo "tests/test_cli.sh: $count checks, $fails failed" >&2
[ $fails -eq 0 ]
