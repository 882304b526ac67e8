#!/usr/bin/env bash
# bench/osu-compare.sh — the OSU micro-benchmarks 7.4 collectives with and without the PMPI
# library, side by side: the same OSU binary run plain and with LD_PRELOAD, interleaved.
#
#   bench/osu-compare.sh --osu-src DIR [options]
#
#   --osu-src DIR      an unpacked OSU micro-benchmarks 7.4 source tree (or OSU_SRC=DIR), e.g.
#                      OSU's osu-micro-benchmarks-7.4.tar.gz (not in Debian); the script never
#                      downloads it, and none of it is kept here. It is built per MPI family, in
#                      --work DIR/<family>, out of tree (configure; make -C
#                      c/mpi/collective/blocking), once: a build of the same source is reused.
#   --work DIR         default /tmp/multilane-osu: DIR/ompi, DIR/mpich hold the builds,
#                      DIR/logs/<date> every run's output
#   --build DIR        the project's build folder with libmultilane_mpi.so (Open MPI) and
#                      libmultilane_mpich.so (MPICH) (default: build, next to bench/)
#   --families LIST    ompi,mpich (default both). ompi: mpicc.openmpi, mpirun.openmpi
#                      --allow-run-as-root --oversubscribe --bind-to none (see --bind-cores);
#                      mpich: mpicc.mpich, mpiexec.mpich
#   -n RANKS           default 4
#   --benchmarks LIST  default osu_bcast,osu_scatter,osu_gather,osu_allgather,osu_alltoall,
#                      osu_reduce,osu_allreduce,osu_reduce_scatter_block,osu_barrier
#   --sizes MIN:MAX    bytes per call (OSU -m; per block for scatter, gather, allgather and
#                      alltoall), powers of two from MIN to MAX (default 1:1048576)
#   --iterations I     OSU -i: timed calls per size up to 8 KiB, and of osu_barrier (default 100)
#   --warmup X         OSU -x: untimed calls per size first, up to 8 KiB (default 10)
#   --iterations-large I, --warmup-large X
#                      the same above 8 KiB (default 20 and 2). OSU's -i and -x set both, so
#                      a run whose sizes cross 8 KiB is two launches of the program, back to back
#   --validation-warmup U
#                      OSU -u: calls before each timed one when validating (default 0; OSU's
#                      is 5, which also fill the buffer that is then checked, so that the
#                      check would not see a timed call that did nothing)
#   --osu-args "ARGS"  more OSU options for every run (e.g. "-k 1": root rank 1)
#   --pairs N          default 5: N pairs of runs, plain then preloaded, one after the other
#   --env VAR=VALUE    for the preloaded runs only (repeatable), e.g. MULTILANE_ALGORITHM_BCAST=auto
#                      or MULTILANE_TUNING=/tmp/t.toml
#   --bind-cores       pin each rank to a core, round robin (Open MPI --bind-to core:overload-allowed,
#                      MPICH -bind-to core); the default leaves ranks unbound, as Open MPI does
#                      when they outnumber the cores. Unbound ranks that outnumber the cores run
#                      wherever the scheduler puts them, and a call of a few microseconds takes
#                      1x-3x as long depending on which ranks share a core
#                      (docs/performance.md, "OSU 7.4, all nine collectives")
#   --recheck          re-run, once more with N pairs, the benchmarks of the cells that lost,
#                      and count a cell as a loss only when it loses in both rounds
#   --csv FILE         every raw sample (default DIR/logs/<date>/samples.csv)
#   --timeout SECONDS  bound of each run (default 600; a run killed counts as crashed)
#   --build-only       build OSU for the families, and stop (the library need not exist yet)
#   -h, --help         this text
#
# Every run validates (OSU -c, except osu_barrier, which has nothing to check); the reductions
# run on floats (OSU -T mpi_float: Open MPI 4.1.4 fails the validation of its own sums of chars,
# open-mpi/ompi#8045), so they start at 4 bytes. A run that exits non-zero, times out, or prints
# a "Fail" is reported at once, on stderr, and again at the end; its samples are in the CSV, not
# in the table.
#
# Per cell (family, benchmark, size), from OSU's average latency of each run: the median of the
# plain runs, the median of the preloaded runs, ratio = plain / preloaded (above 1: the library
# is faster), and the spread of the plain runs (min/median-max/median). A cell passes when the
# ratio is 0.95 or more, or when the preloaded median lies within [min, max] of the plain runs
# (the loss is inside the noise). Then a summary per family and for all: cells, passes, losses,
# the worst ratio and the geometric mean of the ratios. Last, per benchmark, the wall time of
# its whole runs (every size, launch included; DIR/logs/<date>/runs.csv): what the program
# pays, which a cell alone can misstate when more ranks than cores move waiting between OSU's
# timed call and its untimed barriers. Exit status: 0, whatever the ratios; 1 when a run
# crashed or failed validation; 2 for a usage error.
#
# Duration at 4 ranks on this 2-core machine (oversubscribed, with other jobs running), with
# the defaults: Open MPI about 50 s per pair of runs of the nine benchmarks; MPICH about 8 min
# per pair, nearly all in its plain runs: MPICH 4.0.2 (ch4:ucx) polls without yielding, so with
# more ranks than cores each of OSU's barriers (two per timed call with -c) takes milliseconds,
# where the library's waits sleep. --pairs 3 took 27 min (Open MPI 2.5, MPICH 24); the
# default --pairs 5 about 45 min; --families ompi about 5 min; --iterations 30 --warmup 3 cuts
# MPICH to about 3.5 min per pair. Building OSU the first time: about 20 s per family.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
python=/usr/bin/python3

osu_src=${OSU_SRC:-}
work=/tmp/multilane-osu
build=build
families=ompi,mpich
ranks=4
benchmarks=osu_bcast,osu_scatter,osu_gather,osu_allgather,osu_alltoall,osu_reduce,osu_allreduce,osu_reduce_scatter_block,osu_barrier
sizes=1:1048576
iterations=100
warmup=10
iterations_large=20
warmup_large=2
validation_warmup=0
osu_args=
pairs=5
envs=()
recheck=0
bind_cores=0
csv=
limit=600
build_only=0

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "osu-compare: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --recheck) recheck=1; shift; continue ;;
    --bind-cores) bind_cores=1; shift; continue ;;
    --build-only) build_only=1; shift; continue ;;
  esac
  [ $# -ge 2 ] || die "$1 needs a value (see --help)"
  case $1 in
    --osu-src) osu_src=$2 ;;
    --work) work=$2 ;;
    --build) build=$2 ;;
    --families) families=$2 ;;
    -n) ranks=$2 ;;
    --benchmarks) benchmarks=$2 ;;
    --sizes) sizes=$2 ;;
    --iterations) iterations=$2 ;;
    --warmup) warmup=$2 ;;
    --iterations-large) iterations_large=$2 ;;
    --warmup-large) warmup_large=$2 ;;
    --validation-warmup) validation_warmup=$2 ;;
    --osu-args) osu_args=$2 ;;
    --pairs) pairs=$2 ;;
    --env) envs+=("$2") ;;
    --csv) csv=$2 ;;
    --timeout) limit=$2 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift 2
done

# Checks everything before anything runs.
is_count() { [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ]; }
is_count "$ranks" 2 || die "-n: '$ranks' is not a number of ranks (2 or more)"
is_count "$pairs" 1 || die "--pairs: '$pairs' is not a positive number"
is_count "$iterations" 1 || die "--iterations: '$iterations' is not a positive number"
is_count "$warmup" 0 || die "--warmup: '$warmup' is not a number"
is_count "$iterations_large" 1 || die "--iterations-large: '$iterations_large' is not a positive number"
is_count "$warmup_large" 0 || die "--warmup-large: '$warmup_large' is not a number"
if ! is_count "$validation_warmup" 0 || [ "$validation_warmup" -gt 10 ]; then
  die "--validation-warmup: '$validation_warmup' is not a number from 0 to 10"
fi
is_count "$limit" 1 || die "--timeout: '$limit' is not a number of seconds"
if ! [[ $sizes =~ ^([0-9]+):([0-9]+)$ ]] || [ "${BASH_REMATCH[1]}" -lt 1 ] \
    || [ "${BASH_REMATCH[1]}" -gt "${BASH_REMATCH[2]}" ]; then
  die "--sizes: '$sizes' is not MIN:MAX (bytes, 1 <= MIN <= MAX)"
fi
for e in ${envs[@]+"${envs[@]}"}; do
  [[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*=.*$ ]] || die "--env: '$e' is not VAR=VALUE"
done
IFS=, read -r -a family_list <<<"$families"
IFS=, read -r -a benchmark_list <<<"$benchmarks"
[ ${#family_list[@]} -gt 0 ] || die "--families is empty"
[ ${#benchmark_list[@]} -gt 0 ] || die "--benchmarks is empty"
known=" osu_bcast osu_scatter osu_gather osu_allgather osu_alltoall osu_reduce osu_allreduce osu_reduce_scatter_block osu_barrier "
for b in "${benchmark_list[@]}"; do
  [[ $known == *" $b "* ]] || die "--benchmarks: unknown benchmark '$b' (one of:$known)"
done
[ -n "$osu_src" ] || die "--osu-src DIR (or OSU_SRC) is needed: an OSU micro-benchmarks 7.4 source tree"
if ! [ -x "$osu_src/configure" ] || ! [ -d "$osu_src/c/mpi/collective/blocking" ]; then
  die "--osu-src: $osu_src is not an OSU micro-benchmarks source tree (no configure)"
fi
osu_src=$(cd "$osu_src" && pwd)
grep -q 'AC_INIT(\[OSU-Micro-Benchmarks\], \[7\.4\]' "$osu_src/configure.ac" 2>/dev/null \
  || echo "osu-compare: warning: $osu_src does not say it is OSU 7.4" >&2
case $build in /*) ;; *) build=$here/$build ;; esac
mkdir -p "$work"
work=$(cd "$work" && pwd)

# What each family needs: compilers, launcher, the library.
compilers() {
  case $1 in
    ompi) echo "mpicc.openmpi mpicxx.openmpi" ;;
    mpich) echo "mpicc.mpich mpicxx.mpich" ;;
  esac
}
library_src() {
  case $1 in
    ompi) echo "$build/libmultilane_mpi.so" ;;
    mpich) echo "$build/libmultilane_mpich.so" ;;
  esac
}
for f in "${family_list[@]}"; do
  case $f in ompi) launcher=mpirun.openmpi ;; mpich) launcher=mpiexec.mpich ;;
    *) die "--families: unknown family '$f' (ompi, mpich)" ;; esac
  read -r cc cxx <<<"$(compilers "$f")"
  for tool in "$launcher" "$cc" "$cxx" timeout; do
    command -v "$tool" >/dev/null || die "$tool is missing (family $f)"
  done
  [ "$build_only" = 1 ] || [ -f "$(library_src "$f")" ] \
    || die "$(library_src "$f") is missing (build it, or give --build DIR)"
done

stamp=$(date -u +%Y%m%dT%H%M%SZ)
logs=$work/logs/$stamp
mkdir -p "$logs"
[ -n "$csv" ] || csv=$logs/samples.csv
mkdir -p "$(dirname "$csv")"
echo "family,benchmark,size_bytes,datatype,side,round,pair,avg_latency_us,validation,exit_status" >"$csv"
failures=$logs/failures.txt
# Each run's wall time, launch and every size included: what the program pays.
runs_csv=$logs/runs.csv
echo "family,benchmark,side,round,pair,seconds,exit_status" >"$runs_csv"
: >"$failures"

# Builds OSU's collectives for one family in $work/<family>, unless they are there.
build_osu() {
  local family=$1 dir=$work/$1 cc cxx b missing=0
  read -r cc cxx <<<"$(compilers "$family")"
  for b in "${benchmark_list[@]}"; do
    [ -x "$dir/c/mpi/collective/blocking/$b" ] || missing=1
  done
  if [ "$missing" = 0 ] && [ "$(cat "$dir/.osu-src" 2>/dev/null)" = "$osu_src" ]; then
    return
  fi
  echo "# building OSU ($osu_src) for $family in $dir (log: $dir/build.log)" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  # OSU 7.4 has no Makefile in c/util: each program compiles the utilities in.
  if ! (cd "$dir" && "$osu_src/configure" CC="$cc" CXX="$cxx" \
        && make -j2 -C c/mpi/collective/blocking) >"$dir/build.log" 2>&1; then
    tail -20 "$dir/build.log" >&2
    echo "osu-compare: building OSU for $family failed (log: $dir/build.log)" >&2
    exit 1
  fi
  echo "$osu_src" >"$dir/.osu-src"
}

# The size ranges of a run, as OSU walks them (MIN, 2 MIN, 4 MIN ... up to MAX): the sizes up
# to 8 KiB (OSU's LARGE_MESSAGE_SIZE) with --iterations, those above with --iterations-large.
size_min=${sizes%:*}
size_max=${sizes#*:}
large_min=$size_min
small_max=0
while [ "$large_min" -le 8192 ] && [ "$large_min" -le "$size_max" ]; do
  small_max=$large_min
  large_min=$((large_min * 2))
done
ranges=()  # "MIN:MAX ITERATIONS WARMUP"
[ "$small_max" -gt 0 ] && ranges+=("$size_min:$small_max $iterations $warmup")
[ "$large_min" -le "$size_max" ] && ranges+=("$large_min:$size_max $iterations_large $warmup_large")

# OSU's options for one benchmark and one range.
osu_options() {
  local bench=$1 range iters skip
  read -r range iters skip <<<"$2"
  case $bench in
    osu_barrier) echo "-i $iterations -x $warmup" ;;  # no -c, -m, -T: nothing to check
    osu_reduce|osu_allreduce|osu_reduce_scatter_block)
      echo "-c -u $validation_warmup -T mpi_float -m $range -i $iters -x $skip" ;;
    *) echo "-c -u $validation_warmup -m $range -i $iters -x $skip" ;;
  esac
}

# One run: run_one FAMILY BENCHMARK SIDE ROUND PAIR. Appends its samples to the CSV, and a line
# to $failures when it crashed, timed out or failed validation.
runs_done=0
run_one() {
  local family=$1 bench=$2 side=$3 round=$4 pair=$5
  local program=$work/$family/c/mpi/collective/blocking/$bench
  local log=$logs/$family-$bench-$round-$pair-$side.txt
  local launcher=() e status=0 code start seconds range args=() extra=()
  if [ -n "$osu_args" ]; then read -r -a extra <<<"$osu_args"; fi
  case $family in
    ompi)
      launcher=(mpirun.openmpi --allow-run-as-root --oversubscribe -n "$ranks" --bind-to)
      if [ "$bind_cores" = 1 ]; then launcher+=(core:overload-allowed); else launcher+=(none); fi
      if [ "$side" = preloaded ]; then
        launcher+=(-x "LD_PRELOAD=$(library_of "$family")")
        for e in ${envs[@]+"${envs[@]}"}; do launcher+=(-x "$e"); done
      fi ;;
    mpich)
      launcher=(mpiexec.mpich -n "$ranks")
      if [ "$bind_cores" = 1 ]; then launcher+=(-bind-to core); fi
      if [ "$side" = preloaded ]; then
        launcher+=(-genv LD_PRELOAD "$(library_of "$family")")
        for e in ${envs[@]+"${envs[@]}"}; do launcher+=(-genv "${e%%=*}" "${e#*=}"); done
      fi ;;
  esac
  runs_done=$((runs_done + 1))
  printf '# [%s %d/%d] %s %s pair %d %s: ' "$family" "$runs_done" "$runs_total" "$round" \
    "$bench" "$pair" "$side" >&2
  : >"$log"
  start=$EPOCHREALTIME
  for range in "${ranges[@]}"; do
    # shellcheck disable=SC2207  # OSU's options are words without spaces
    args=($(osu_options "$bench" "$range"))
    echo "\$ ${launcher[*]} $program ${args[*]} ${extra[*]}" >>"$log"
    code=0
    seconds=$EPOCHREALTIME
    # LD_PRELOAD of the caller would reach both sides: the launcher runs without it.
    env -u LD_PRELOAD timeout --kill-after=10 "$limit" "${launcher[@]}" "$program" "${args[@]}" \
      ${extra[@]+"${extra[@]}"} >>"$log" 2>&1 </dev/null || code=$?
    awk -v a="$seconds" -v b="$EPOCHREALTIME" -v c="$code" \
      'BEGIN { printf "$ (%.1f s, exit status %d)\n", b - a, c }' >>"$log"
    [ "$status" != 0 ] || status=$code
    [ "$bench" != osu_barrier ] || break  # one launch: its size is none
  done
  seconds=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
  echo "$family,$bench,$side,$round,$pair,$seconds,$status" >>"$runs_csv"
  # Data lines: "SIZE AVG [Pass|Fail]", or "AVG" alone for osu_barrier (size 0).
  awk -v family="$family" -v bench="$bench" -v side="$side" -v round="$round" -v pair="$pair" \
      -v status="$status" '
    /^# Datatype:/ { dtype = $3; sub(/\.$/, "", dtype) }
    /^ *[0-9]+ +[0-9.]+( +(Pass|Fail))? *$/ {
      printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", family, bench, $1, dtype, side, round, pair, $2,
             (NF >= 3 ? $3 : "-"), status; n++ }
    /^ *[0-9]+\.[0-9]+ *$/ && bench == "osu_barrier" {
      printf "%s,%s,0,-,%s,%s,%s,%s,-,%s\n", family, bench, side, round, pair, $1, status; n++ }
    END { if (n == 0) printf "%s,%s,,,%s,%s,%s,,-,%s\n", family, bench, side, round, pair, status }
  ' "$log" >>"$csv"
  local problem=
  if [ "$status" = 124 ] || [ "$status" = 137 ]; then
    problem="timed out after ${limit} s"
  elif [ "$status" != 0 ]; then
    problem="exit status $status"
  fi
  if grep -Eq ' Fail *$|DATA VALIDATION ERROR' "$log"; then
    problem="${problem:+$problem, }validation FAILED at $(awk '/ Fail *$/ { printf "%s%s B", s, $1; s = ", " }' "$log")"
  fi
  if [ -z "$problem" ] && ! grep -Eq '^ *[0-9]+(\.[0-9]+)?( +[0-9.]+)?( +Pass)? *$' "$log"; then
    problem="no results in its output"
  fi
  if [ -n "$problem" ]; then
    printf '%.1f s\n' "$seconds" >&2
    {
      echo "!!!"
      echo "!!! FAILED: $family $bench $side ($round, pair $pair): $problem"
      echo "!!! log: $log"
      tail -5 "$log" | sed 's/^/!!!   /'
      echo "!!!"
    } >&2
    echo "$family $bench $side ($round, pair $pair): $problem — $log" >>"$failures"
  else
    printf '%.1f s\n' "$seconds" >&2
  fi
}

# The tables and the summary (and, with --cells-to-recheck FAMILY, the benchmarks with a loss).
analyse() {
  PYTHONPATH="$here/bench/lib" "$python" - "$csv" "$runs_csv" "$@" <<'EOF'
import csv, math, statistics, sys
from bench_text import size_text, time_text

path, runs_path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
samples = {}  # (family, bench, size, round, side) -> [avg latency us]
order = []
with open(path) as f:
    for row in csv.DictReader(f):
        # A run that failed counts for nothing (its samples stay in the CSV).
        if (not row["size_bytes"] or not row["avg_latency_us"] or row["validation"] == "Fail"
                or row["exit_status"] != "0"):
            continue
        cell = (row["family"], row["benchmark"], int(row["size_bytes"]))
        if cell not in order:
            order.append(cell)
        key = cell + (row["round"], row["side"])
        samples.setdefault(key, []).append(float(row["avg_latency_us"]))

def judge(cell, rnd):
    plain = samples.get(cell + (rnd, "plain"), [])
    pre = samples.get(cell + (rnd, "preloaded"), [])
    if not plain or not pre:
        return None
    p, q = statistics.median(plain), statistics.median(pre)
    ratio = p / q if q > 0 else math.inf
    ok = ratio >= 0.95 or min(plain) <= q <= max(plain)
    return dict(plain=p, pre=q, ratio=ratio, lo=min(plain) / p if p else 1,
                hi=max(plain) / p if p else 1, ok=ok, n=(len(plain), len(pre)))

if args and args[0] == "--cells-to-recheck":
    family = args[1]
    losing = []
    for cell in order:
        r = judge(cell, "main")
        if cell[0] == family and r and not r["ok"] and cell[1] not in losing:
            losing.append(cell[1])
    print(" ".join(losing))
    sys.exit(0)

families = []
for cell in order:
    if cell[0] not in families:
        families.append(cell[0])
names = {"ompi": "Open MPI", "mpich": "MPICH"}
def tally():
    return dict(cells=0, passes=0, losses=0, noise=0, missing=0, ratios=[], worst=None)
totals = {family: tally() for family in families}
for family in families:
    total = totals[family]
    ratios = total["ratios"]
    cells = [c for c in order if c[0] == family]
    rechecked = any((c + ("recheck", "plain")) in samples for c in cells)
    print(f"\n{names.get(family, family)}: median of the plain runs, of the preloaded runs; "
          "ratio = plain / preloaded (above 1: the library is faster); spread = the plain "
          "runs' min/median-max/median\n")
    head = "| benchmark | size | plain | preloaded | ratio | plain spread | runs |"
    if rechecked:
        head += " recheck ratio |"
    print(head + " verdict |")
    print("|---" * (head.count("|") - 1 + 1) + "|")
    for cell in cells:
        _, bench, size = cell
        r = judge(cell, "main")
        name = bench.removeprefix("osu_")
        size_s = "-" if bench == "osu_barrier" else size_text(size)
        total["cells"] += 1
        if r is None:
            total["missing"] += 1
            line = f"| {name} | {size_s} | - | - | - | - | - |"
            if rechecked:
                line += " |"
            print(line + " **missing** (a run failed) |")
            continue
        ratios.append(r["ratio"])
        if total["worst"] is None or r["ratio"] < total["worst"][0]:
            total["worst"] = (r["ratio"], name, "" if size_s == "-" else size_s)
        verdict = "pass" if r["ok"] else "**loss**"
        again = ""
        if not r["ok"]:
            s = judge(cell, "recheck")
            if s is not None:
                again = f" {s['ratio']:.2f} |"
                verdict = "noise (passes the recheck)" if s["ok"] else "**loss** (again)"
            elif rechecked:
                again = " - |"
        elif rechecked:
            again = " |"
        if r["ok"]:
            total["passes"] += 1
        elif verdict.startswith("noise"):
            total["noise"] += 1
            total["passes"] += 1
        else:
            total["losses"] += 1
        print(f"| {name} | {size_s} | {time_text(r['plain'] * 1e-6)} | "
              f"{time_text(r['pre'] * 1e-6)} | {r['ratio']:.2f} | {r['lo']:.2f}-{r['hi']:.2f} | "
              f"{r['n'][0]}+{r['n'][1]} |{again} {verdict} |")

def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")

if len(families) > 1:
    everything = tally()
    for family in families:
        for key in ("cells", "passes", "losses", "noise", "missing"):
            everything[key] += totals[family][key]
        everything["ratios"] += totals[family]["ratios"]
        w = totals[family]["worst"]
        if w and (everything["worst"] is None or w[0] < everything["worst"][0]):
            everything["worst"] = (w[0], f"{names.get(family, family)} {w[1]}", w[2])
    totals["all"] = everything
print("\nSummary (ratio = plain / preloaded; a loss: below 0.95 and outside the plain runs' "
      "range)\n")
print("| family | cells | pass | loss | worst ratio | geometric mean of the ratios |")
print("|---|---|---|---|---|---|")
for family, t in totals.items():
    passes = f"{t['passes']}" + (f" ({t['noise']} on the recheck)" if t["noise"] else "")
    losses = f"{t['losses']}" + (f" (+{t['missing']} missing)" if t["missing"] else "")
    worst = (f"{t['worst'][0]:.2f} ({t['worst'][1]} {t['worst'][2]}".rstrip() + ")"
             if t["worst"] else "-")
    print(f"| {'all' if family == 'all' else names.get(family, family)} | {t['cells']} | "
          f"{passes} | {losses} | {worst} | {geomean(t['ratios']):.3f} |")

# The whole runs: a call's time can move between OSU's timed call and its untimed barriers
# (with more ranks than cores, the waits land wherever a descheduled rank is awaited), so a cell
# alone can lose where the program does not.
walls = {}  # (family, bench, side) -> [seconds] of the main round's runs that succeeded
with open(runs_path) as f:
    for row in csv.DictReader(f):
        if row["round"] == "main" and row["exit_status"] == "0":
            walls.setdefault((row["family"], row["benchmark"], row["side"]), []).append(
                float(row["seconds"]))
print("\nWhole runs: each benchmark's wall time over all its sizes, launch included (median of "
      "the plain runs, of the preloaded runs; ratio = plain / preloaded)\n")
print("| family | benchmark | plain | preloaded | ratio | plain spread |")
print("|---|---|---|---|---|---|")
for family, bench in dict.fromkeys((f, b) for f, b, _ in walls):
    plain, pre = walls.get((family, bench, "plain")), walls.get((family, bench, "preloaded"))
    if not plain or not pre:
        continue
    p, q = statistics.median(plain), statistics.median(pre)
    print(f"| {names.get(family, family)} | {bench.removeprefix('osu_')} | {p:.1f} s | "
          f"{q:.1f} s | {p / q:.3f} | {min(plain) / p:.2f}-{max(plain) / p:.2f} |")
EOF
}

# How many runs there will be (for the progress lines; the recheck adds its own).
runs_total=$((${#family_list[@]} * ${#benchmark_list[@]} * pairs * 2))

for f in "${family_list[@]}"; do build_osu "$f"; done
if [ "$build_only" = 1 ]; then
  for f in "${family_list[@]}"; do echo "# $f: $work/$f/c/mpi/collective/blocking"; done
  exit 0
fi

# The runs preload a copy of the library taken now, so that every run measures the same one
# while the build folder changes (and the logs keep what was measured). The library needs
# nothing of the build folder (its dependencies are system libraries).
library_of() { echo "$logs/lib/$(basename "$(library_src "$1")")"; }
mkdir -p "$logs/lib"
for f in "${family_list[@]}"; do
  for attempt in 1 2 3 4 5 6; do
    # A library written as we copy it differs from its copy, or is younger than 5 s: again.
    age=$(($(date +%s) - $(date -r "$(library_src "$f")" +%s)))
    if [ "$age" -ge 5 ] && cp -p "$(library_src "$f")" "$(library_of "$f")" \
        && cmp -s "$(library_src "$f")" "$(library_of "$f")"; then
      break
    fi
    [ "$attempt" -lt 6 ] || { echo "osu-compare: $(library_src "$f") keeps changing" >&2; exit 1; }
    sleep 5
  done
done

git_rev=$(git -C "$here" log -1 --format=%h 2>/dev/null || echo "?")
git_dirty=$(git -C "$here" status --porcelain -- src include 2>/dev/null | head -1)
{
  echo "# osu-compare $stamp: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# multilane $git_rev${git_dirty:+ (src/ or include/ modified in the work tree)}"
  for f in "${family_list[@]}"; do
    echo "# $f: $(library_src "$f") of $(date -u -r "$(library_of "$f")" +%FT%TZ)," \
      "sha256 $(sha256sum "$(library_of "$f")" | cut -c1-12), run from its copy $(library_of "$f")"
  done
  echo "# $ranks ranks, $pairs pairs, sizes $sizes: up to 8 KiB -i $iterations -x $warmup," \
    "above -i $iterations_large -x $warmup_large; -c -u $validation_warmup${osu_args:+ $osu_args};" \
    "preloaded env: ${envs[*]:-(none)}"
  echo "# OSU: $osu_src, built in $work/<family>; logs and samples: $logs"
} >"$logs/header.txt"
cat "$logs/header.txt" >&2

# run_pairs FAMILY ROUND BENCHMARK...: the pairs of runs, plain then preloaded, interleaved.
run_pairs() {
  local family=$1 round=$2
  shift 2
  for ((p = 1; p <= pairs; p++)); do
    for b in "$@"; do
      run_one "$family" "$b" plain "$round" "$p"
      run_one "$family" "$b" preloaded "$round" "$p"
    done
  done
}

for f in "${family_list[@]}"; do
  run_pairs "$f" main "${benchmark_list[@]}"
  if [ "$recheck" = 1 ]; then
    read -r -a again <<<"$(analyse --cells-to-recheck "$f")"
    if [ ${#again[@]} -gt 0 ]; then
      echo "# $f: rechecking ${again[*]} ($pairs more pairs)" >&2
      runs_total=$((runs_total + ${#again[@]} * pairs * 2))
      run_pairs "$f" recheck "${again[@]}"
    fi
  fi
done

cat "$logs/header.txt"
analyse | tee "$logs/table.md"
echo "# $runs_done runs in $((SECONDS / 60)) min $((SECONDS % 60)) s; load average now" \
  "$(cut -d' ' -f1-3 /proc/loadavg); raw samples: $csv"
for f in "${family_list[@]}"; do
  if ! cmp -s "$(library_src "$f")" "$(library_of "$f")"; then
    echo "# note: $(library_src "$f") changed during the run; every run preloaded the copy" \
      "taken at the start"
  fi
done
if [ -s "$failures" ]; then
  echo
  echo "!!! $(wc -l <"$failures") run(s) crashed or failed validation:"
  sed 's/^/!!!   /' "$failures"
  exit 1
fi
exit 0
