#!/usr/bin/env bash
# A GPU run in one device call (docs/gpu.md): the machine's facts, `selfcheck --device cuda --quick`, the
# short profile benchmarks/gpu-probe.yaml (or $GPU_PROBE_PARAMS), then the checks of its method on the same
# rows: the CUDA method check (benchmarks/method_check.py: the profile's latencies and speedups against
# Timer.blocked_autorange and do_bench in a reference process) and an A/A check (eager against eager in two
# workers: --eager-apart, whatever the profile's eager_in_process).
#
# A session has 15 minutes of device time, the machine's start (about 250 s on the H200) included, and a
# call at most 600 s: one call of this script fits both. Each step is capped in seconds, and no step runs
# past the call's deadline (GPU_PROBE_DEADLINE_S, default 570 s from the script's start: a step gets what is
# left of it, less what the steps after it are promised; one left no time is skipped, saying so), so a run cut
# short still leaves what it measured
# in OUTDIR: selfcheck's lines (its JSON is written only when it ends) and the profile's rows (it resumes
# where it stopped when run again).
# Usage: benchmarks/gpu_probe.sh OUTDIR [SELFCHECK_S] [PROFILE_S] [CHECKS_S]
#        (0 skips a step; defaults 140, 300 and 140; GPU_PROBE_SELFCHECK=full: the whole selfcheck, about
#        7 minutes on an H200, for a session that runs nothing else: `OUTDIR 540 0 0`)
set -u
out=${1:?usage: benchmarks/gpu_probe.sh OUTDIR [SELFCHECK_S] [PROFILE_S] [CHECKS_S]}
selfcheck_s=${2:-140}
profile_s=${3:-300}
checks_s=${4:-140}
deadline_s=${GPU_PROBE_DEADLINE_S:-570}  # a step cut at its cap unwinds for up to 15 s more (timeout -k)
py=${PYTHON:-python3}
params=${GPU_PROBE_PARAMS:-benchmarks/gpu-probe.yaml}
quick=--quick
[ "${GPU_PROBE_SELFCHECK:-quick}" = full ] && quick=
results=reports/gpu-probe/results.jsonl
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export TORCHINDUCTOR_CACHE_DIR="${TORCHINDUCTOR_CACHE_DIR:-$PWD/.cache/inductor}"
started=$(date +%s)

# seconds a step may run: its cap ($1), or what is left before the deadline less the later steps' promises ($2);
# 0 when nothing is left (the step is then skipped: `timeout 0` would mean no limit)
budget() {
    local left=$(( deadline_s - ( $(date +%s) - started ) - $2 ))
    [ "$left" -lt 1 ] && left=0
    [ "$left" -lt "$1" ] && echo "$left" || echo "$1"
}

{
    date -u
    nvidia-smi
    nproc
    lscpu | grep -E 'Model name|^CPU\(s\)'
    "$py" -c "import sys, torch, transformers, triton; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__, 'triton', triton.__version__)"
} >>"$out/env.txt" 2>&1
cap=$(budget "$selfcheck_s" $(( profile_s + checks_s )))
if [ "$selfcheck_s" -gt 0 ] && [ "$cap" -eq 0 ]; then
    echo "selfcheck step skipped: no time left before the deadline" | tee -a "$out/selfcheck.txt"
elif [ "$selfcheck_s" -gt 0 ]; then
    step=$(date +%s)
    timeout -k 15 "$cap" "$py" -m bench_utils selfcheck --device cuda $quick --keep .cache/selfcheck \
        --json "$out/selfcheck.json" 2>&1 | tee -a "$out/selfcheck.txt"
    echo "selfcheck step: $(( $(date +%s) - step )) s (cap $cap s)" | tee -a "$out/selfcheck.txt"
fi
cap=$(budget "$profile_s" "$checks_s")
if [ "$profile_s" -gt 0 ] && [ "$cap" -eq 0 ]; then
    echo "profile step skipped: no time left before the deadline" | tee -a "$out/profile.txt"
elif [ "$profile_s" -gt 0 ]; then
    step=$(date +%s)
    timeout -k 15 "$cap" "$py" -m bench_utils run "$params" --results "$results" 2>&1 | tee -a "$out/profile.txt"
    echo "profile step: $(( $(date +%s) - step )) s (cap $cap s), $(( $(date +%s) - started )) s since the start" \
        | tee -a "$out/profile.txt"
fi
cap=$(budget "$deadline_s" 0)  # CHECKS_S at least (promised above), and what the steps before left of the deadline
if [ "$checks_s" -gt 0 ] && [ -f "$results" ] && [ "$cap" -gt 0 ]; then
    # the method check reads the profile's own rows (no second sweep), then the A/A check
    checks_started=$(date +%s)
    timeout -k 15 "$cap" "$py" benchmarks/method_check.py --device cuda --params "$params" \
        --engine-results "$results" --min-run-time 0.5 2>&1 | tee -a "$out/method_check.txt"
    left=$(( cap - ( $(date +%s) - checks_started ) ))
    if [ "$left" -gt 45 ]; then
        timeout -k 15 "$left" "$py" benchmarks/aa_check.py --params "$params" --models resnet --batch-sizes 1 \
            --budget-min 0.75 --eager-apart --results reports/gpu-aa/results.jsonl 2>&1 | tee -a "$out/aa_check.txt"
    fi
fi
cp "$results" "$out/" 2>/dev/null
cp reports/gpu-aa/results.jsonl "$out/aa-results.jsonl" 2>/dev/null
tar czf "$out/logs.tgz" --exclude='caches*' reports/gpu-probe reports/gpu-aa .cache/selfcheck 2>/dev/null  # options first (GNU tar)
echo "gpu_probe: $(( $(date +%s) - started )) s"
ls -la "$out"
