"""What a failed process's row says (bench_utils/measure/errors.py): its status, and one short line of
error text that names the frame, the compiler's own error, or the damaged cache folder to delete."""

import torch

from bench_utils.measure.errors import error_text, status_and_text


def test_an_allocation_failure_is_oom_and_anything_else_an_error():
    assert status_and_text(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))[0] == "oom"
    assert status_and_text(MemoryError())[0] == "oom"
    cpu = RuntimeError("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate memory")
    assert status_and_text(cpu) == ("oom", "RuntimeError: " + str(cpu))
    assert status_and_text(ValueError("out of memory"))[0] == "error"  # the text alone names no allocation
    assert status_and_text(RuntimeError("shape mismatch")) == ("error", "RuntimeError: shape mismatch")


def test_error_text_is_short_and_names_the_frame():
    try:
        torch.zeros(2) @ torch.zeros(3)
    except RuntimeError as err:
        text = error_text(err)
    assert text.startswith("RuntimeError: ") and "test_errors.py:" in text and "\n" not in text
    assert "Inductor cache" not in text


def test_a_damaged_inductor_cache_entry_names_the_folder_to_delete(monkeypatch):
    """What torch 2.x raises for a truncated generated module in the cache (seen with every file of a
    filled cache cut to 10 bytes): an InductorError naming neither the cache nor the file."""
    from torch._inductor.exc import InductorError

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/tmp/my-cache")
    try:
        try:
            raise AttributeError("module 'torch._inductor.runtime.compile_tasks.cg3x6r4x' has no attribute 'call'")
        except AttributeError as inner:
            raise InductorError(inner, None) from None
    except InductorError as err:
        text = error_text(err)
    assert text.startswith("InductorError: AttributeError: module")
    assert text.endswith("(a damaged Inductor cache entry? delete /tmp/my-cache and run again)")


def test_a_failed_cpp_compile_names_the_compilers_own_error():
    """Inductor's CppCompileError says "C++ compile error" first; the compiler's message, the cause a user
    needs ("Python.h: No such file", "File too large"), is in its Output: part, and dynamo wraps it."""
    from torch._inductor.exc import CppCompileError

    output = "x.cpp:1:10: fatal error: Python.h: No such file or directory\ncompilation terminated.\n"
    try:
        try:
            raise CppCompileError(["g++", "x.cpp", "-o", "x.so"], output)
        except CppCompileError as inner:  # as dynamo's BackendCompilerFailed wraps it (its signature varies)
            raise RuntimeError("backend='inductor' raised:\nCppCompileError: C++ compile error") from inner
    except RuntimeError as err:
        text = error_text(err)
    assert "\n" not in text and text.endswith("(compiler: x.cpp:1:10: fatal error: Python.h: No such file or directory)")
    assert "compiler:" not in error_text(RuntimeError("no compiler involved"))
