#!/usr/bin/env bash
# The sanitizer builds: everything (hipshadow, the launcher, the simulated runtimes, the test
# programs) built with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan and with
# ThreadSanitizer in build-tsan, then the unit, preload and report tests run on each.  Ends with
# one line per build and the total, "N passed, N failed, N skipped".
#
#   bash tests/sanitizers.sh [asan] [tsan]        (default: both; build first with tools/build.sh's deps)
#   bash tests/sanitizers.sh --also LABEL=LOG ... (tools/test.sh: the main suite's log joins the total)
#
# Any sanitizer report fails the build's run: each sanitizer writes its reports to
# <build>/sanitizer-reports/ (log_path), and every file there counts as a failure, whatever the
# test that started the process said.  A sanitized build's launcher preloads the sanitizer
# runtime ahead of libhipshadow.so (tools/meson.build), so the programs it runs need nothing.
# Exit status: 0 only if nothing failed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

kinds=()
also=()
while [ $# -gt 0 ]; do
  case "$1" in
    asan|tsan) kinds+=("$1") ;;
    --also) also+=("$2"); shift ;;
    *) echo "usage: $0 [asan] [tsan] [--also LABEL=LOG]" >&2; exit 2 ;;
  esac
  shift
done
[ ${#kinds[@]} -gt 0 ] || kinds=(asan tsan)

# Not run in the sanitizer builds (counted as skipped, by name, in each build's tally):
#  - fuzz_log_reader_smoke: builds its own libFuzzer + ASan reader with clang, the same in every
#    build directory; the main suite runs it (20 s).
#  - suite install: the install layout and what the installed launcher puts in LD_PRELOAD,
#    which a sanitized build deliberately prefixes with the sanitizer runtime; the installed
#    code is what the other suites run.
#  - tree_fork_storm, under TSan only: there hipshadow walks stacks with unw_step (see
#    src/core/process/stacks.c), whose locks (libunwind's cache, glibc's dl_iterate_phdr) a busy thread
#    holds at another thread's fork often enough that a child hangs; the main and ASan builds
#    run it.
#  - last_error_rocm5_as_plain, last_error_rocm7_as_plain, under TSan only: their failing
#    hipStreamDestroy hands the simulated runtime a destroyed stream, which it recognises by the
#    freed object's contents; TSan's allocator reuses that memory at once, so even the run
#    without hipshadow answers differently (the main and ASan builds run them).
#  - sampler_runs, under TSan only: TSan holds an asynchronous signal back until the program
#    next enters its runtime, so tools/sampler's samples land there, not where the time went.
excluded_names=" fuzz_log_reader_smoke bench_cachesim_runs bench_cachesim_options bench_pages_runs "  # the last three: valgrind cannot run sanitized programs
excluded_suites=" install "
excluded_tsan=" tree_fork_storm last_error_rocm5_as_plain last_error_rocm7_as_plain sampler_runs "

# Leak checking: on for the unit tests (instrumented programs, plain heap data structures), off
# for the programs run under the preload: hipshadow keeps its tables in mmap'd memory (no malloc
# on the hot path), which LeakSanitizer does not scan, so every record reachable only from them
# would read as a leak; the simulators and Python keep theirs to the end too.
#  - handle_segv=0: tests crash programs on purpose (log_segfault_shows_last_copy) and check
#    hipshadow's own fatal-signal path and the -11 it leaves; an unexpected SIGSEGV still fails.
#  - verify_asan_link_order=0: a few tests set LD_PRELOAD themselves (an interposer, a library
#    with a late destructor) in front of an instrumented program; its libasan still precedes libc.
env_for() { # kind leaks reports_dir
  case "$1" in
    asan)
      export ASAN_OPTIONS="halt_on_error=1:detect_leaks=$2:handle_segv=0:verify_asan_link_order=0:print_summary=1:log_path=$3/asan"
      export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:print_summary=1:log_path=$3/ubsan"
      export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0"
      ;;
    tsan)
      # history_size=7: the readers' side of a race must be restorable for tests/tsan.supp to match it.
      export TSAN_OPTIONS="halt_on_error=1:handle_segv=0:history_size=7:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp:print_suppressions=0:log_path=$3/tsan"
      ;;
  esac
}

parts=("${also[@]}")
for kind in "${kinds[@]}"; do
  dir=build-$kind
  case $kind in
    asan) sanitize=address,undefined ;;
    tsan) sanitize=thread ;;
  esac
  logs=$dir/meson-logs
  reports=$root/$dir/sanitizer-reports
  echo "== $kind: $dir (-Db_sanitize=$sanitize)"
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" -Db_sanitize=$sanitize -Db_lto=false >/dev/null
  else
    meson setup "$dir" -Db_sanitize=$sanitize -Db_lto=false >/dev/null
  fi
  mkdir -p "$logs"
  if ! meson compile -C "$dir" >/dev/null; then
    meson compile -C "$dir" 2>&1 | tail -30
    echo '{"name": "build", "result": "FAIL"}' >"$logs/sanitize-build.json"
    parts+=("$kind=$logs/sanitize-build.json")
    continue
  fi
  rm -rf "$reports" && mkdir -p "$reports"
  unit=() preload=()
  : >"$logs/sanitize-excluded.json"
  while read -r suite name; do
    if [[ $excluded_suites == *" $suite "* || $excluded_names == *" $name "* ]] ||
       [[ $kind == tsan && $excluded_tsan == *" $name "* ]]; then
      echo "{\"name\": \"$name\", \"result\": \"SKIP\", \"why\": \"not run in the sanitizer builds\"}" >>"$logs/sanitize-excluded.json"
      echo "$kind: $suite / $name not run here (see tests/sanitizers.sh)"
    elif [ "$suite" = unit ]; then
      unit+=("$name")
    else
      preload+=("$name")
    fi
  done < <(meson test -C "$dir" --no-rebuild --list 2>/dev/null | sed -n 's|^[^ :]*:\([^ ]*\) / \(.*\)$|\1 \2|p')

  if [ ${#unit[@]} -eq 0 ] || [ ${#preload[@]} -eq 0 ]; then # never let an empty list mean "all"
    echo "$kind: meson test --list gave no tests"
    echo '{"name": "list", "result": "FAIL"}' >"$logs/sanitize-build.json"
    parts+=("$kind=$logs/sanitize-build.json")
    continue
  fi

  # gcc's TSan needs the address-space layout of kernels with at most 28 bits of mmap randomness.
  run=()
  if [ "$kind" = tsan ] && [ "$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 28)" -gt 28 ] &&
     setarch "$(uname -m)" -R true 2>/dev/null; then
    run=(setarch "$(uname -m)" -R)
  fi
  test_args=(--no-rebuild --print-errorlogs --num-processes "$(nproc)" --timeout-multiplier 3)
  (env_for "$kind" 1 "$reports"; "${run[@]}" meson test -C "$dir" "${test_args[@]}" --logbase sanitize-unit "${unit[@]}")
  (env_for "$kind" 0 "$reports"; "${run[@]}" meson test -C "$dir" "${test_args[@]}" --logbase sanitize-preload "${preload[@]}")
  parts+=("$kind=$logs/sanitize-unit.json,$logs/sanitize-preload.json,$logs/sanitize-excluded.json,$reports")
done

python3 tests/tally.py "${parts[@]}"
