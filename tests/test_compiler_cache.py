"""The cold process's compiler cache joins the shared one entry by entry, each entry whole or absent."""

import os
from pathlib import Path

from bench_utils.measure.compiler_cache import compiler_cache, merge_into


def _tree(root):
    return {str(p.relative_to(root)): (p.read_text() if p.is_file() and not p.is_symlink() else os.readlink(p)
                                       if p.is_symlink() else None) for p in sorted(root.rglob("*"))}


def test_merge_adds_new_entries_replaces_files_and_merges_folders(tmp_path):
    source, target = tmp_path / "cold", tmp_path / "shared"
    (source / "fxgraph" / "ab").mkdir(parents=True)
    (source / "fxgraph" / "ab" / "entry").write_text("new graph")
    (source / "triton" / "HASH1").mkdir(parents=True)
    (source / "triton" / "HASH1" / "kernel.cubin").write_text("cubin")
    (source / "triton" / "HASH1" / "__grp__kernel.json").write_text("{}")
    (source / "link").symlink_to("fxgraph")
    (target / "fxgraph" / "cd").mkdir(parents=True)
    (target / "fxgraph" / "cd" / "entry").write_text("another cell's graph")
    (target / "triton").mkdir()
    (target / "triton" / "same").write_text("old")
    (source / "triton" / "same").write_text("new")
    merge_into(source, target)
    assert _tree(target) == {"fxgraph": None, "fxgraph/ab": None, "fxgraph/ab/entry": "new graph",
                             "fxgraph/cd": None, "fxgraph/cd/entry": "another cell's graph", "link": "fxgraph",
                             "triton": None, "triton/HASH1": None, "triton/HASH1/__grp__kernel.json": "{}",
                             "triton/HASH1/kernel.cubin": "cubin", "triton/same": "new"}
    assert not list(target.rglob("*.tmp"))  # no staging copies left behind


def test_a_new_folder_appears_by_one_rename_with_all_its_files(tmp_path, monkeypatch):
    """A reader never sees a Triton kernel folder without its files: the folder is renamed into place whole."""
    source, target = tmp_path / "cold", tmp_path / "shared"
    (source / "HASH").mkdir(parents=True)
    for name in ("a.cubin", "b.json", "__grp__a.json"):
        (source / "HASH" / name).write_text(name)
    seen = []
    real_replace = os.replace

    def watching_replace(src, dst):
        seen.append((os.path.basename(dst), sorted(os.listdir(src)) if os.path.isdir(src) else None))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", watching_replace)
    merge_into(source, target)
    assert seen == [("HASH", ["__grp__a.json", "a.cubin", "b.json"])]


def test_a_folder_another_process_created_meanwhile_is_merged_not_lost(tmp_path, monkeypatch):
    source, target = tmp_path / "cold", tmp_path / "shared"
    (source / "HASH").mkdir(parents=True)
    (source / "HASH" / "mine").write_text("mine")
    real_replace = os.replace

    def racing_replace(src, dst):
        if os.path.basename(dst) == "HASH" and not os.path.exists(dst):  # the other process wins the race
            os.makedirs(dst)
            with open(os.path.join(dst, "theirs"), "w") as fh:
                fh.write("theirs")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", racing_replace)
    merge_into(source, target)
    assert _tree(target) == {"HASH": None, "HASH/mine": "mine", "HASH/theirs": "theirs"}
    assert not list(target.rglob("*.tmp"))


def _cold_compile_writes(kernel: str) -> None:
    """What a cold compile leaves behind, written where Inductor and Triton would put it now: an FX-graph
    entry and a Triton kernel, after Inductor's first kernel set TRITON_CACHE_DIR as CachingAutotuner does."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir, triton_cache_dir

    os.environ["TRITON_CACHE_DIR"] = triton_cache_dir(0)
    (Path(cache_dir()) / "fxgraph").mkdir(parents=True, exist_ok=True)
    (Path(cache_dir()) / "fxgraph" / "graph").write_text("graph")
    (Path(os.environ["TRITON_CACHE_DIR"]) / "HASH").mkdir(parents=True)
    (Path(os.environ["TRITON_CACHE_DIR"]) / "HASH" / "k.cubin").write_text(kernel)


def test_a_cold_compile_reads_neither_the_users_inductor_nor_triton_cache(tmp_path, monkeypatch):
    from torch._inductor.runtime.cache_dir_utils import cache_dir, triton_cache_dir

    inductor, triton = tmp_path / "inductor", tmp_path / "triton"
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(inductor))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(triton))
    with compiler_cache(empty=True):
        assert not Path(cache_dir()).is_relative_to(inductor)
        assert Path(triton_cache_dir(0)).is_relative_to(cache_dir())  # a warm Triton kernel is not found
        assert not Path(triton_cache_dir(0)).is_relative_to(triton)
        _cold_compile_writes("cold kernel")
    assert os.environ["TRITON_CACHE_DIR"] == str(triton) and os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(inductor)
    assert (triton / "HASH" / "k.cubin").read_text() == "cold kernel"  # where a warm process looks for it
    assert (inductor / "fxgraph" / "graph").read_text() == "graph" and not (inductor / "triton").exists()


def test_without_triton_cache_dir_the_kernels_join_inductors_cache_and_the_variable_is_dropped(tmp_path,
                                                                                             monkeypatch):
    from torch._inductor.runtime.cache_dir_utils import triton_cache_dir

    inductor = tmp_path / "inductor"
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(inductor))
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    with compiler_cache(empty=True):
        _cold_compile_writes("cold kernel")
    assert "TRITON_CACHE_DIR" not in os.environ  # not left pointing at the deleted cold folder
    assert (Path(triton_cache_dir(0)) / "HASH" / "k.cubin").read_text() == "cold kernel"
    assert Path(triton_cache_dir(0)) == inductor / "triton" / "0"


def test_the_cli_keeps_torch_compiles_cache_in_the_checkout_unless_one_is_named(monkeypatch):
    # a rerun typed after `make report` (the command a "Can't tell" prints) must find make's cache:
    # torch's own default is under /tmp, where every configuration would compile cold again
    from bench_utils.paths import default_inductor_cache_dir, repo_root

    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    default_inductor_cache_dir()
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(repo_root() / ".cache" / "inductor")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/tmp/mine")
    default_inductor_cache_dir()
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == "/tmp/mine"
