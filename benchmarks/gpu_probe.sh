#!/usr/bin/env bash
# A GPU run in one command (docs/gpu.md): the machine's facts, `selfcheck --device cuda`, the short profile
# benchmarks/gpu-probe.yaml (or $GPU_PROBE_PARAMS), then the checks of its method on the same rows: the
# CUDA method check (benchmarks/method_check.py: the profile's latencies and speedups against
# Timer.blocked_autorange and do_bench in reference processes) and an A/A check (eager against eager in two
# workers: --eager-apart, whatever the profile's eager_in_process). Each step is capped in seconds so that
# a run cut short still leaves what it measured in OUTDIR: selfcheck's lines (its JSON is written only
# when it ends) and the profile's rows (it resumes where it stopped when run again). A device call
# allows 600 s in all; the device time of a session is 15 minutes.
# Usage: benchmarks/gpu_probe.sh OUTDIR [SELFCHECK_S] [PROFILE_S] [CHECKS_S]
#        (0 skips a step; defaults 240, 240 and 150: two calls, `OUT 240 0 0` then `OUT 0 240 150`)
set -u
out=${1:?usage: benchmarks/gpu_probe.sh OUTDIR [SELFCHECK_S] [PROFILE_S] [CHECKS_S]}
selfcheck_s=${2:-240}
profile_s=${3:-240}
checks_s=${4:-150}
py=${PYTHON:-python3}
params=${GPU_PROBE_PARAMS:-benchmarks/gpu-probe.yaml}
results=reports/gpu-probe/results.jsonl
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export TORCHINDUCTOR_CACHE_DIR="${TORCHINDUCTOR_CACHE_DIR:-$PWD/.cache/inductor}"
started=$(date +%s)
{
    date -u
    nvidia-smi
    nproc
    "$py" -c "import sys, torch, transformers, triton; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__, 'triton', triton.__version__)"
} >>"$out/env.txt" 2>&1
if [ "$selfcheck_s" -gt 0 ]; then
    timeout -k 15 "$selfcheck_s" "$py" -m bench_utils selfcheck --device cuda --keep .cache/selfcheck \
        --json "$out/selfcheck.json" 2>&1 | tee -a "$out/selfcheck.txt"
fi
if [ "$profile_s" -gt 0 ]; then
    timeout -k 15 "$profile_s" "$py" -m bench_utils run "$params" --results "$results" 2>&1 \
        | tee -a "$out/profile.txt"
    echo "profile step: $(( $(date +%s) - started )) s since the start" | tee -a "$out/profile.txt"
fi
if [ "$checks_s" -gt 0 ] && [ -f "$results" ]; then
    # the method check reads the profile's own rows (no second sweep), then the A/A check, in what is left
    checks_started=$(date +%s)
    timeout -k 15 "$checks_s" "$py" benchmarks/method_check.py --device cuda --params "$params" \
        --engine-results "$results" --min-run-time 0.5 2>&1 | tee -a "$out/method_check.txt"
    left=$(( checks_s - ( $(date +%s) - checks_started ) ))
    if [ "$left" -gt 60 ]; then
        timeout -k 15 "$left" "$py" benchmarks/aa_check.py --params "$params" --models resnet --budget-min 1 --eager-apart \
            --results reports/gpu-aa/results.jsonl 2>&1 | tee -a "$out/aa_check.txt"
    fi
fi
cp "$results" "$out/" 2>/dev/null
cp reports/gpu-aa/results.jsonl "$out/aa-results.jsonl" 2>/dev/null
tar czf "$out/logs.tgz" --exclude='caches*' reports/gpu-probe reports/gpu-aa .cache/selfcheck 2>/dev/null  # options first (GNU tar)
echo "gpu_probe: $(( $(date +%s) - started )) s"
ls -la "$out"
