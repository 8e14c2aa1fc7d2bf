#!/usr/bin/env bash
# A first look at a GPU in about ten minutes (docs/gpu.md): the machine's facts, `selfcheck --device cuda --quick`, the
# short profile benchmarks/gpu-probe.yaml (or $GPU_PROBE_PARAMS), then the checks of its method on the same
# rows: the CUDA method check (benchmarks/method_check.py: the profile's latencies and speedups against
# Timer.blocked_autorange and do_bench in a reference process) and an A/A check (eager against eager in two
# workers: --eager-apart, whatever the profile's eager_in_process).
#
# The whole script ends by a deadline (GPU_PROBE_DEADLINE_S, default 570 s from its start; a step cut there
# unwinds for up to 15 s more: timeout -k), so a machine held for ten minutes runs it whole: each step is promised its seconds, and gets what is left before the deadline less
# what the steps after it are promised (so what one leaves unused goes to the next); a step left no time
# is skipped, saying so. A step cut short still leaves what it measured in OUTDIR: selfcheck's lines and
# its JSON of the checks made, the profile's rows (it resumes where it stopped when run again), the method
# check's lines cell by cell, the A/A check's verdict on the rounds it measured.
# Usage: benchmarks/gpu_probe.sh OUTDIR [SELFCHECK_S] [PROFILE_S] [METHOD_S] [AA_S]
#        (each step's promise, 0 skips it; defaults 135, 290, 90 and 45: 560 s, and the machine's facts
#        first; GPU_PROBE_SELFCHECK=full: the whole selfcheck, about 7 minutes on a GPU, alone:
#        `OUTDIR 540 0 0 0`)
# Run again in the same checkout, it resumes: the selfcheck's cells in .cache/selfcheck and the profile's
# rows stay (both are ignored folders), the profile's failed rows measured again (--retry-failed). After a
# fix, GPU_PROBE_FRESH=1 removes what the last run measured first.
set -u
out=${1:?usage: benchmarks/gpu_probe.sh OUTDIR [SELFCHECK_S] [PROFILE_S] [METHOD_S] [AA_S]}
selfcheck_s=${2:-135}
profile_s=${3:-290}
method_s=${4:-90}
aa_s=${5:-45}
deadline_s=${GPU_PROBE_DEADLINE_S:-570}
py=${PYTHON:-python3}
params=${GPU_PROBE_PARAMS:-benchmarks/gpu-probe.yaml}
quick=--quick
[ "${GPU_PROBE_SELFCHECK:-quick}" = full ] && quick=
results=reports/gpu-probe/results.jsonl
[ "${GPU_PROBE_FRESH:-0}" = 1 ] && rm -rf .cache/selfcheck reports/gpu-probe reports/gpu-aa  # before OUTDIR is made
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export TORCHINDUCTOR_CACHE_DIR="${TORCHINDUCTOR_CACHE_DIR:-$PWD/.cache/inductor}"
started=$(date +%s)

# seconds a step may run: what is left before the deadline less the later steps' promises ($1); 0 when
# nothing is left (the step is then skipped: `timeout 0` would mean no limit)
budget() {
    local left=$(( deadline_s - ( $(date +%s) - started ) - $1 ))
    [ "$left" -lt 1 ] && left=0
    echo "$left"
}

# run step $1 (its promise $2, the later steps' $3; the rest: the command), its output in $out/$1.txt
step() {
    local name=$1 promise=$2 later=$3 cap began
    shift 3
    [ "$promise" -gt 0 ] || return 0
    cap=$(budget "$later")
    if [ "$cap" -eq 0 ]; then
        echo "$name step skipped: no time left before the deadline" | tee -a "$out/$name.txt"
        return 0
    fi
    began=$(date +%s)
    timeout -k 15 "$cap" "$@" 2>&1 | tee -a "$out/$name.txt"
    echo "$name step: $(( $(date +%s) - began )) s (cap $cap s), $(( $(date +%s) - started )) s since the start" \
        | tee -a "$out/$name.txt"
}

{
    date -u
    nvidia-smi
    nproc
    lscpu | grep -E 'Model name|^CPU\(s\)'
    # the versions from the packages' metadata, not by importing them (seconds of the selfcheck's share);
    # torch's CUDA and cuDNN are in every row's environment record
    "$py" -c "import sys, importlib.metadata as m; print(sys.version); print(*(p + ' ' + ([d.version for d in m.distributions(name=p)] or ['not installed'])[0] for p in ('torch', 'transformers', 'triton')))"
} >>"$out/env.txt" 2>&1
step selfcheck "$selfcheck_s" $(( profile_s + method_s + aa_s )) \
    "$py" -m bench_utils selfcheck --device cuda $quick --keep .cache/selfcheck --json "$out/selfcheck.json"
step profile "$profile_s" $(( method_s + aa_s )) "$py" -m bench_utils run "$params" --results "$results" --retry-failed
if [ -f "$results" ]; then  # the method check reads the profile's own rows (no second sweep)
    step method_check "$method_s" "$aa_s" "$py" benchmarks/method_check.py --device cuda --params "$params" \
        --engine-results "$results" --min-run-time 0.5
elif [ "$method_s" -gt 0 ]; then
    echo "method_check step skipped: the profile left no rows to check" | tee -a "$out/method_check.txt"
fi
step aa_check "$aa_s" 0 "$py" benchmarks/aa_check.py --params "$params" --models resnet --batch-sizes 1 \
    --budget-min 0.6 --eager-apart --results reports/gpu-aa/results.jsonl
cp "$results" "$out/" 2>/dev/null
cp reports/gpu-aa/results.jsonl "$out/aa-results.jsonl" 2>/dev/null
tar czf "$out/logs.tgz" --exclude='caches*' reports/gpu-probe reports/gpu-aa .cache/selfcheck 2>/dev/null  # options first (GNU tar)
echo "gpu_probe: $(( $(date +%s) - started )) s"
ls -la "$out"
