#!/usr/bin/env bash
# Fuzzes one target (or all, two at a time) for a number of executions and
# prints what AFL++ found. Usage: fuzz/run.sh [TARGET|all] [EXECUTIONS]
# Needs cargo-afl: `cargo install cargo-afl && cargo afl config --build`.
set -euo pipefail
cd "$(dirname "$0")"
target="${1:-all}"
executions="${2:-1000000}"
targets=(tetgen medit gmsh obj stl ply vtu scene scene_build)
cargo afl build --release --quiet
export AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1

fuzz_one() {
    local name="$1"
    rm -rf "out/$name"
    # -E: stop after this many executions; -t: a run over 1 s counts as a hang.
    cargo afl fuzz -i "seeds/$name" -o "out/$name" -E "$executions" -t 1000 "target/release/$name" \
        > "out/$name.log" 2>&1 || true
    report "$name"
}

report() {
    local stats="out/$1/default/fuzzer_stats"
    if [[ ! -f "$stats" ]]; then
        echo "$1: no statistics (see out/$1.log)"
        return
    fi
    local value
    value() { grep "^$1 " "$stats" | sed 's/.*: //'; }
    printf '%-12s %10s executions, %5s paths, %s crashes, %s hangs, %s s\n' "$1" \
        "$(value execs_done)" "$(value corpus_count)" "$(value saved_crashes)" "$(value saved_hangs)" \
        "$(( $(value last_update) - $(value start_time) ))"
}

mkdir -p out
if [[ "$target" == all ]]; then
    for ((i = 0; i < ${#targets[@]}; i += 2)); do
        fuzz_one "${targets[i]}" &
        if ((i + 1 < ${#targets[@]})); then fuzz_one "${targets[i + 1]}" & fi
        wait
    done
else
    fuzz_one "$target"
fi
