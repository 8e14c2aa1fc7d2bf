"""`python -m bench_utils selfcheck` on the CPU, as a new user runs it: every check passes or says why it
is skipped, and a failing check makes the exit code 1."""

import re

from bench_utils.selfcheck import Check, row_checks
from conftest import make_row, run_cli


def test_selfcheck_on_cpu_passes_every_check():
    proc = run_cli("selfcheck", "--device", "cpu", timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert lines[0].startswith("PASS  clock: perf_counter: median sample ")
    names = [re.match(r"(PASS|FAIL|SKIP)  ([^:]+):", line).group(2) for line in lines]
    assert names == ["clock", "selfcheck cpu · eager", "selfcheck cpu · default", "environment record",
                     "selfcheck cpu bf16 · eager", "selfcheck cpu bf16 · default", "environment record",
                     "oversized batch"]
    assert all(line.startswith("PASS") for line in lines[:-1]) and lines[-1].startswith("SKIP  oversized batch: CPU")
    assert "8 of 8 checks passed or skipped, 0 failed" in proc.stderr


def test_a_wrong_row_fails_its_check_with_the_reason():
    from bench_utils.results.aggregate import to_dataframe

    rows = [make_row("vit", 1, "eager", 2.0), make_row("vit", 1, "default", 1.0, accuracy_ok=False, max_abs_diff=0.3,
                                                       compile_s=2.0)]
    checks = row_checks(to_dataframe(rows), "cpu")
    assert [c.status for c in checks] == ["PASS", "FAIL"]
    assert "output differs from eager by 0.3 (beyond tolerance)" in checks[1].reason
    assert Check("x", "FAIL", "why").line() == "FAIL  x: why"


def test_the_cuda_profiles_are_valid_configs_without_a_gpu():
    from bench_utils.selfcheck import profiles

    cuda = profiles("cuda")
    assert cuda[0].modes == ("eager", "default", "reduce-overhead", "max-autotune-no-cudagraphs")
    assert [c.dtype for c in cuda] == ["float32", "float16", "bfloat16"]
    assert all(c.device == "cuda" and c.batch_sizes == (1,) and not c.cold_compile for c in cuda)
