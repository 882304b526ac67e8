#!/usr/bin/env bash
# MPICH's own collective tests (test/mpi/coll of MPICH v4.3.2), natively and with every
# collective forced to multilane, per MPI family. See --help.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: tests/mpi/conformance.sh --mpich-src DIR [options]

Runs MPICH's collective conformance tests (test/mpi/coll, MPICH tag v4.3.2) twice per
program, MPI family and rank count: natively, then with the family's multilane library
preloaded and every collective forced to multilane
(MULTILANE_ALGORITHM_<COLL>=auto for BCAST SCATTER GATHER ALLGATHER ALLTOALL BARRIER
REDUCE ALLREDUCE REDUCE_SCATTER_BLOCK REDUCE_SCATTER SCAN EXSCAN GATHERV SCATTERV ALLGATHERV
ALLTOALLV). The script downloads nothing: get the tests with
  git --git-dir=<mpich.git> archive v4.3.2 test/mpi/coll test/mpi/util test/mpi/include \
      test/mpi/dtpools/include | tar -x -C /tmp/mpich-tests
and pass --mpich-src /tmp/mpich-tests (the MPICH tree, or its test/mpi folder).

Options:
  --mpich-src DIR     MPICH source tree (with test/mpi/coll) or its test/mpi folder
                      (default: $MPICH_SRC)
  --build DIR         multilane build folder holding libmultilane_mpi.so (Open MPI) and
                      libmultilane_mpich.so (MPICH) (default: build, made absolute)
  --work DIR          where the tests are compiled and the logs kept
                      (default: /tmp/multilane-conformance)
  --families LIST     ompi,mpich (default: both; a family whose mpicc is missing is skipped)
  --subset LIST       a bounded set instead of the full list: nonblocking (the MPI_I*
                      programs and the NBC builds of blocking ones, but nonblocking3),
                      datatype (derived datatypes: struct, vector, indexed, zero-size);
                      both, both families: under 3 minutes on 2 cores
  --programs LIST     exactly these programs (names of coll/testlist.in or of the NBC
                      builds of coll/Makefile.am, e.g. nbicbcast)
  --timeout SEC       bound on each run, killing its whole session on expiry (default 120)
  --max-ranks N       rank counts of testlist.in are capped at N, duplicates dropped
                      (default 4; more ranks than that make MPICH busy-poll on 2 cores);
                      coll2, coll6, coll7, gatherv take the largest divisor of 10 below
  --max-mem GB        skip testlist entries declaring mem= above this (default 2;
                      drops gather_big and coll_large's INT_MAX-count runs)
  --forced-env V=X    one more variable for the forced runs (repeatable),
                      e.g. MULTILANE_EXPLAIN=1
  --tail N            lines of output shown for each failure (default 15)
  --list              print the selected runs and exit
  -h, --help          this text

Each run passes when it exits 0 and prints "No Errors". A line of the table per program,
family and rank count: native and forced result with wall time, and forced/native ratio.
Verdict: ok; FAIL when it passes natively and fails forced (error, timeout, no "No
Errors"); slow when forced takes more than 2x native, where a native time under 0.5 s
counts as 0.5 s (start-up noise); skip when it fails natively or does not build for that
family (the MPI library's own failures, not counted). Last line:
  N passed, M failed[, K skipped]
Exit status 0 only when nothing failed (1 when something did, 2 on a usage or setup
error). Logs: WORK/logs/FAMILY/NAME.native.log and .forced.log.

Not run: the persistent (p_*), neighbourhood, alltoallw, reduce_local and GPU programs
(nothing multilane intercepts), bcast.c (needs MPICH's dtpools library),
testlist entries with env= (MPICH-internal algorithm selection at 16-32 ranks).
Open MPI 4.1.4 lacks MPI-4's large-count calls, so coll_large does not build there (skip).
Known native failures on Debian 12: Open MPI's allred -count=100, MPICH's reduce on 3 and
4 ranks (segfault). MPICH busy-polls: on a loaded 2-core machine its allredmany,
allgatherv4 and nonblocking3 on 4 ranks took 80-185 s natively (raise --timeout to 300).

Examples:
  tests/mpi/conformance.sh --mpich-src /tmp/mpich-tests
  tests/mpi/conformance.sh --mpich-src /tmp/mpich-tests --subset nonblocking,datatype
  tests/mpi/conformance.sh --mpich-src /tmp/mpich-tests --families mpich --programs allred,bcasttest
EOF
}

die() { echo "conformance.sh: $*" >&2; exit 2; }

# ---- the programs --------------------------------------------------------------------
# Per collective multilane intercepts, the programs exercising it and its neighbours
# (-v forms, intercommunicators, which the library must leave to MPI).
ALL_PROGRAMS=(
  # bcast
  bcasttest bcastzerotype icbcast nbicbcast
  # scatter
  scattern scatter2 scatter3 coll4 coll5 scatterv icscatter nbicscatter icscatterv
  # gather
  gather gather2 coll2 nbcoll2 gatherv icgather nbicgather icgatherv nbicgatherv
  # allgather
  allgather2 allgather3 allgather_struct coll7 coll6 allgatherv2 allgatherv3 allgatherv4
  icallgather nbicallgather icallgatherv nbicallgatherv
  # alltoall
  alltoall1 nballtoall1 coll13 icalltoall nbicalltoall alltoallv alltoallv0 icalltoallv
  # scan, exscan
  scantst exscan exscan2
  # barrier
  ibarrier icbarrier nbicbarrier
  # reduce
  reduce red3 red4 coll8 coll9 coll10 coll12 opland oplor oplxor opband opbor opbxor
  opprod opsum opmin opminloc opmax opmaxloc uoplong op_coll op_commutative icreduce
  nbicreduce
  # allreduce
  allred allred2 allred3 allred4 allred5 allred6 allred_derived allred_float allredmany
  iallred longuser icallreduce nbicallreduce
  # reduce_scatter_block, and reduce_scatter next to it
  red_scat_block red_scat_block2 redscatblk3 redscatbkinter redscat redscat2 redscat3
  nbredscat nbredscat3
  # nonblocking collectives of every kind, with MPI_Wait/Test*
  nonblocking nonblocking2 nonblocking3
  # large-count (MPI-4 *_c) calls and noncontiguous types: pass through the library
  coll_large
)
# (nonblocking3 is left out: MPICH takes 80 s for it on 4 ranks of 2 cores, natively)
SUBSET_NONBLOCKING=(nonblocking nonblocking2 iallred ibarrier nballtoall1 nbcoll2
                    nbredscat nbicbcast nbicallreduce)
SUBSET_DATATYPE=(allgather_struct allred_derived allred3 bcastzerotype gather2 scatter2
                 scattern red4 coll13)
COLLS=(BCAST SCATTER GATHER ALLGATHER ALLTOALL BARRIER REDUCE ALLREDUCE REDUCE_SCATTER_BLOCK
       REDUCE_SCATTER SCAN EXSCAN GATHERV SCATTERV ALLGATHERV ALLTOALLV)

# ---- options ---------------------------------------------------------------------------
MPICH_SRC=${MPICH_SRC:-}
BUILD=build
WORK=/tmp/multilane-conformance
FAMILIES=ompi,mpich
SUBSET=
PROGRAMS=
TIMEOUT=120
MAX_RANKS=4
MAX_MEM=2
TAIL=15
LIST_ONLY=0
FORCED_EXTRA=()

need() { [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value (see --help)"; }
while [[ $# -gt 0 ]]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --mpich-src) need "$@"; MPICH_SRC=$2; shift 2 ;;
    --build) need "$@"; BUILD=$2; shift 2 ;;
    --work) need "$@"; WORK=$2; shift 2 ;;
    --families) need "$@"; FAMILIES=$2; shift 2 ;;
    --subset) need "$@"; SUBSET=$2; shift 2 ;;
    --programs) need "$@"; PROGRAMS=$2; shift 2 ;;
    --timeout) need "$@"; TIMEOUT=$2; shift 2 ;;
    --max-ranks) need "$@"; MAX_RANKS=$2; shift 2 ;;
    --max-mem) need "$@"; MAX_MEM=$2; shift 2 ;;
    --forced-env) need "$@"; [[ $2 == *=* ]] || die "--forced-env wants VAR=VALUE"
                  FORCED_EXTRA+=("$2"); shift 2 ;;
    --tail) need "$@"; TAIL=$2; shift 2 ;;
    --list) LIST_ONLY=1; shift ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

[[ $TIMEOUT =~ ^[0-9]+$ && $TIMEOUT -gt 0 ]] || die "--timeout wants seconds"
[[ $MAX_RANKS =~ ^[0-9]+$ && $MAX_RANKS -gt 0 ]] || die "--max-ranks wants a count"
[[ $TAIL =~ ^[0-9]+$ ]] || die "--tail wants a count"
[[ $MAX_MEM =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--max-mem wants GB"
[[ -n $MPICH_SRC ]] || die "give the MPICH tests with --mpich-src DIR or MPICH_SRC (see --help)"
if [[ -d $MPICH_SRC/test/mpi/coll ]]; then T=$MPICH_SRC/test/mpi
elif [[ -d $MPICH_SRC/coll ]]; then T=$MPICH_SRC
else die "$MPICH_SRC has neither test/mpi/coll nor coll"; fi
T=$(cd "$T" && pwd)
for d in coll util include dtpools/include; do
  [[ -d $T/$d ]] || die "$T/$d is missing (extract test/mpi/{coll,util,include,dtpools/include})"
done
[[ -f $T/coll/testlist.in ]] || die "$T/coll/testlist.in is missing"
mkdir -p "$WORK" || die "cannot create $WORK"
WORK=$(cd "$WORK" && pwd)
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || die "build folder '$BUILD' does not exist"

# ---- which programs --------------------------------------------------------------------
SELECTED=()
if [[ -n $PROGRAMS ]]; then
  IFS=, read -r -a SELECTED <<<"$PROGRAMS"
elif [[ -n $SUBSET ]]; then
  IFS=, read -r -a subsets <<<"$SUBSET"
  for s in "${subsets[@]}"; do
    case $s in
      nonblocking) SELECTED+=("${SUBSET_NONBLOCKING[@]}") ;;
      datatype) SELECTED+=("${SUBSET_DATATYPE[@]}") ;;
      *) die "unknown subset '$s' (nonblocking, datatype)" ;;
    esac
  done
else
  SELECTED=("${ALL_PROGRAMS[@]}")
fi

# source file and -D flags of a program, from coll/Makefile.am (nbX_SOURCES = X.c)
source_of() {
  local p=$1 s
  s=$(awk -v k="${p}_SOURCES" '$1 == k && $2 == "=" { print $3; exit }' "$T/coll/Makefile.am")
  echo "${s:-$p.c}"
}
defines_of() {
  awk -v k="${1}_CPPFLAGS" '$1 == k && $2 == "=" {
      for (i = 3; i <= NF; i++) if ($i ~ /^-D/) printf "%s ", $i; exit }' "$T/coll/Makefile.am"
}

declare -A DIVIDES=([coll2]=10 [nbcoll2]=10 [coll6]=10 [coll7]=10 [gatherv]=10)
# runs: "name|ranks|args" from testlist.in, ranks capped, duplicates dropped
RUNS=()
declare -A SEEN=()
add_run() {
  local key="$1|$2|$3"
  [[ -n ${SEEN[$key]:-} ]] && return 0
  SEEN[$key]=1
  RUNS+=("$key")
}
for p in "${SELECTED[@]}"; do
  [[ -n $p ]] || continue
  src=$(source_of "$p")
  if [[ ! -f $T/coll/$src ]]; then
    echo "conformance.sh: no source coll/$src for $p, left out" >&2
    continue
  fi
  found=0
  while read -r name ranks rest; do
    [[ $name == "$p" ]] || continue
    found=1
    args='' skip=''
    for f in $rest; do
      case $f in
        arg=*) args+="${args:+ }${f#arg=}" ;;
        env=*) skip=1 ;;
        mem=*) awk -v m="${f#mem=}" -v l="$MAX_MEM" 'BEGIN { exit !(m > l) }' && skip=1 ;;
      esac
    done
    [[ -z $skip ]] || continue
    if (( ranks > MAX_RANKS )); then
      ranks=$MAX_RANKS
      # coll2, coll6, coll7, gatherv: the rank count must divide 10 (their MAX_PROCESSES)
      if [[ -n ${DIVIDES[$p]:-} ]]; then
        while (( ranks > 1 && DIVIDES[$p] % ranks != 0 )); do ranks=$((ranks - 1)); done
      fi
    fi
    add_run "$p" "$ranks" "$args"
  done < <(grep -v '^[[:space:]]*#' "$T/coll/testlist.in" | sed 's/@[A-Za-z_]*@//g')
  (( found )) || add_run "$p" "$(( MAX_RANKS < 4 ? MAX_RANKS : 4 ))" ""
done
(( ${#RUNS[@]} > 0 )) || die "no program selected"

if (( LIST_ONLY )); then
  for r in "${RUNS[@]}"; do IFS='|' read -r n k a <<<"$r"; echo "$n $k $a"; done
  exit 0
fi

# ---- families --------------------------------------------------------------------------
IFS=, read -r -a FAMS <<<"$FAMILIES"
for f in "${FAMS[@]}"; do
  case $f in ompi|mpich) ;; *) die "unknown family '$f' (ompi, mpich)" ;; esac
done
fam_cc() { [[ $1 == ompi ]] && echo mpicc.openmpi || echo mpicc.mpich; }
fam_lib() { [[ $1 == ompi ]] && echo "$BUILD/libmultilane_mpi.so" || echo "$BUILD/libmultilane_mpich.so"; }
fam_launch() {  # family ranks preload(0/1) -> the launcher's words, in LAUNCH
  local fam=$1 n=$2 forced=$3 kv
  local env=()
  if (( forced )); then
    env+=("LD_PRELOAD=$(fam_lib "$fam")")
    for c in "${COLLS[@]}"; do env+=("MULTILANE_ALGORITHM_$c=auto"); done
    env+=(${FORCED_EXTRA[@]+"${FORCED_EXTRA[@]}"})
  fi
  if [[ $fam == ompi ]]; then
    LAUNCH=(mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -n "$n")
    for kv in ${env[@]+"${env[@]}"}; do LAUNCH+=(-x "$kv"); done
  else
    LAUNCH=(mpiexec.mpich -n "$n")
    for kv in ${env[@]+"${env[@]}"}; do LAUNCH+=(-genv "${kv%%=*}" "${kv#*=}"); done
  fi
}

ACTIVE=()
for f in "${FAMS[@]}"; do
  cc=$(fam_cc "$f")
  if [[ $f == ompi ]]; then launcher=mpirun.openmpi; else launcher=mpiexec.mpich; fi
  if ! command -v "$cc" >/dev/null || ! command -v "$launcher" >/dev/null; then
    echo "conformance.sh: $cc or $launcher not found, family $f left out" >&2
    continue
  fi
  [[ -f $(fam_lib "$f") ]] || die "$(fam_lib "$f") does not exist (build multilane first, or --families)"
  ACTIVE+=("$f")
done
(( ${#ACTIVE[@]} > 0 )) || die "no MPI family available"

# ---- running one program, bounded, in its own session ----------------------------------
CUR_SID_FILE=$WORK/.session.$$
session_pids() {  # live processes of session $1 (zombies are their parents' to reap)
  ps -s "$1" -o pid=,stat= 2>/dev/null | awk '$2 !~ /^Z/ { printf "%s ", $1 }' || true
}
reap_session() {  # kill whatever is left of the run's session (ranks, daemons), by id
  local sid pids
  [[ -s $CUR_SID_FILE ]] || return 0
  sid=$(<"$CUR_SID_FILE")
  rm -f "$CUR_SID_FILE"
  [[ $sid =~ ^[0-9]+$ ]] || return 0
  read -r -a pids <<<"$(session_pids "$sid")"
  (( ${#pids[@]} > 0 )) || return 0
  echo "conformance.sh: after ${CUR_LABEL:-the run}: killing what is left of its session:" \
    "$(ps -o pid=,stat=,comm= -p "$(IFS=,; echo "${pids[*]}")" | tr -s ' \n' ' ')" >&2
  kill -TERM "${pids[@]}" 2>/dev/null || true
  sleep 1
  read -r -a pids <<<"$(session_pids "$sid")"
  if (( ${#pids[@]} > 0 )); then kill -KILL "${pids[@]}" 2>/dev/null || true; fi
}
on_signal() { reap_session; echo "conformance.sh: interrupted" >&2; exit 130; }
trap on_signal INT TERM
trap reap_session EXIT

RUN_RC=0 RUN_TIME=0
run_bounded() {  # log command... -> RUN_RC, RUN_TIME (s)
  local log=$1 t0 t1 pid
  shift
  rm -f "$CUR_SID_FILE"
  t0=$EPOCHREALTIME
  # setsid: the run gets a session of its own (its id in CUR_SID_FILE); timeout kills the
  # launcher's process group on expiry, and reap_session whatever left that group.
  # shellcheck disable=SC2016
  setsid -w bash -c 'echo $$ >"$0"; exec timeout -k 5 "$@"' "$CUR_SID_FILE" "$TIMEOUT" "$@" \
    >"$log" 2>&1 </dev/null &
  pid=$!
  RUN_RC=0
  wait "$pid" || RUN_RC=$?
  t1=$EPOCHREALTIME
  reap_session
  RUN_TIME=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
}
passed() { [[ $RUN_RC -eq 0 ]] && grep -q "No Errors" "$1"; }
status_word() {  # log -> pass / fail / timeout
  if passed "$1"; then echo pass
  elif [[ $RUN_RC -eq 124 || $RUN_RC -eq 137 ]]; then echo timeout
  else echo fail; fi
}

# ---- compiling -------------------------------------------------------------------------
CONF=$WORK/include
mkdir -p "$CONF"
conf_text='/* written by tests/mpi/conformance.sh in place of configure */
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STDARG_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define USE_STRICT_MPI 1
#define HAVE_PTHREAD_H 1
#define THREAD_PACKAGE_NAME 2'
if [[ ! -f $CONF/mpitestconf.h || $(<"$CONF/mpitestconf.h") != "$conf_text" ]]; then
  printf '%s\n' "$conf_text" >"$CONF/mpitestconf.h"
fi
[[ -f $CONF/mtest_mpix.h ]] || : >"$CONF/mtest_mpix.h"
INCS=(-I "$CONF" -I "$T/include" -I "$T/dtpools/include")

declare -A BUILT=()
compile_family() {
  local fam=$1 cc obj bin src defs r n k a
  cc=$(fam_cc "$fam")
  mkdir -p "$WORK/$fam/util" "$WORK/$fam/bin" "$WORK/logs/$fam"
  local objs=()
  for u in mtest mtest_common dtypes mtest_thread; do
    obj=$WORK/$fam/util/$u.o
    if [[ ! $obj -nt $T/util/$u.c || ! $obj -nt $CONF/mpitestconf.h ]]; then
      "$cc" -O1 -w -c "${INCS[@]}" "$T/util/$u.c" -o "$obj" >"$WORK/logs/$fam/util-$u.build.log" 2>&1 \
        || die "$fam: util/$u.c does not compile: see $WORK/logs/$fam/util-$u.build.log"
    fi
    objs+=("$obj")
  done
  local done_names=" " nbuilt=0 ncached=0 nfailed=0
  for r in "${RUNS[@]}"; do
    IFS='|' read -r n k a <<<"$r"
    [[ $done_names == *" $n "* ]] && continue
    done_names+="$n "
    src=$T/coll/$(source_of "$n")
    defs=$(defines_of "$n")
    bin=$WORK/$fam/bin/$n
    local fresh=1
    [[ -x $bin && $bin -nt $src ]] || fresh=0
    for obj in "${objs[@]}"; do [[ $bin -nt $obj ]] || fresh=0; done
    if (( fresh )); then
      BUILT[$fam/$n]=1; ncached=$((ncached + 1)); continue
    fi
    # shellcheck disable=SC2086
    if "$cc" -O1 -w $defs "${INCS[@]}" "$src" "${objs[@]}" -o "$bin" -lm -lpthread \
         >"$WORK/logs/$fam/$n.build.log" 2>&1; then
      BUILT[$fam/$n]=1; nbuilt=$((nbuilt + 1))
    else
      rm -f "$bin"; nfailed=$((nfailed + 1))
    fi
  done
  echo "# $fam: $nbuilt compiled, $ncached up to date, $nfailed do not build ($cc)"
}

# ---- the runs --------------------------------------------------------------------------
echo "# MPICH tests: $T"
echo "# multilane: $BUILD ($(for f in "${ACTIVE[@]}"; do
  printf '%s %s; ' "$(basename "$(fam_lib "$f")")" "$(date -r "$(fam_lib "$f")" '+%F %T')"; done))"
echo "# timeout ${TIMEOUT}s per run, ranks capped at $MAX_RANKS, work folder $WORK"
for f in "${ACTIVE[@]}"; do compile_family "$f"; done

cd "$WORK"  # the programs write nothing, but run them away from the sources
row() { printf '%-40s %-5s %5s  %-7s %7s  %-7s %7s  %6s  %s\n' "$@"; }
row program family ranks native time forced time ratio verdict
npass=0 nfail=0 nskip=0
FAILED_LOGS=()
for f in "${ACTIVE[@]}"; do
  for r in "${RUNS[@]}"; do
    IFS='|' read -r n k a <<<"$r"
    label=$n${a:+ $a}
    tag=$n-$k${a:+-$(tr -c 'A-Za-z0-9=\n' '_' <<<"$a")}
    if [[ -z ${BUILT[$f/$n]:-} ]]; then
      row "$label" "$f" "$k" - - - - - "skip (does not build)"
      nskip=$((nskip + 1)); continue
    fi
    nlog=$WORK/logs/$f/$tag.native.log
    CUR_LABEL="$label, $f, $k ranks, native"
    fam_launch "$f" "$k" 0
    # shellcheck disable=SC2086
    run_bounded "$nlog" "${LAUNCH[@]}" "$WORK/$f/bin/$n" $a
    nt=$RUN_TIME
    ns=$(status_word "$nlog")
    flog=$WORK/logs/$f/$tag.forced.log
    CUR_LABEL="$label, $f, $k ranks, forced"
    fam_launch "$f" "$k" 1
    # shellcheck disable=SC2086
    run_bounded "$flog" "${LAUNCH[@]}" "$WORK/$f/bin/$n" $a
    ft=$RUN_TIME
    fs=$(status_word "$flog")
    ratio=$(awk -v a="$ft" -v b="$nt" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    if [[ $ns != pass ]]; then
      verdict="skip (fails natively)"; nskip=$((nskip + 1))
    elif [[ $fs != pass ]]; then
      verdict=FAIL; nfail=$((nfail + 1)); FAILED_LOGS+=("$label|$f|$k|$fs|$flog")
    elif awk -v a="$ft" -v b="$nt" 'BEGIN { if (b < 0.5) b = 0.5; exit !(a > 2 * b) }'; then
      verdict=slow; nfail=$((nfail + 1)); FAILED_LOGS+=("$label|$f|$k|slow|$flog")
    else
      verdict=ok; npass=$((npass + 1))
    fi
    row "$label" "$f" "$k" "$ns" "${nt}s" "$fs" "${ft}s" "${ratio}x" "$verdict"
  done
done

if (( ${#FAILED_LOGS[@]} > 0 && TAIL > 0 )); then
  echo
  echo "# failures with multilane forced (last $TAIL lines of each)"
  for x in "${FAILED_LOGS[@]}"; do
    IFS='|' read -r label f k why log <<<"$x"
    echo "## $label, $f, $k ranks: $why ($log)"
    tail -n "$TAIL" "$log" | cut -c1-300 | sed 's/^/   /'
  done
fi
echo
summary="$npass passed, $nfail failed"
(( nskip > 0 )) && summary+=", $nskip skipped"
echo "$summary"
(( nfail == 0 ))
