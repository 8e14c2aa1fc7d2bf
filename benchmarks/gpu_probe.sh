#!/usr/bin/env bash
# A first GPU run in one command (docs/gpu.md): the machine's facts, `selfcheck --device cuda`, then the
# short profile benchmarks/gpu-probe.yaml. Each step is capped in seconds so that a run cut short still
# leaves what it measured in OUTDIR: selfcheck's lines (its JSON is written only when it ends) and the
# profile's rows (it resumes where it stopped when run again). A device call allows 600 s in all.
# Usage: benchmarks/gpu_probe.sh OUTDIR [SELFCHECK_S] [PROFILE_S] (0 skips a step; defaults 270 and 280)
set -u
out=${1:?usage: benchmarks/gpu_probe.sh OUTDIR [SELFCHECK_S] [PROFILE_S]}
selfcheck_s=${2:-270}
profile_s=${3:-280}
py=${PYTHON:-python3}
results=reports/gpu-probe/results.jsonl
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export TORCHINDUCTOR_CACHE_DIR="${TORCHINDUCTOR_CACHE_DIR:-$PWD/.cache/inductor}"
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
    timeout -k 15 "$profile_s" "$py" -m bench_utils run benchmarks/gpu-probe.yaml --results "$results" 2>&1 \
        | tee -a "$out/profile.txt"
fi
cp "$results" "$out/" 2>/dev/null
tar czf "$out/logs.tgz" --exclude='caches*' reports/gpu-probe .cache/selfcheck 2>/dev/null  # options first (GNU tar)
ls -la "$out"
