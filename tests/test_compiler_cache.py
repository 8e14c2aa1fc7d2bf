"""The cold process's compiler cache joins the shared one entry by entry, each entry whole or absent."""

import os

from bench_utils.measure.compiler_cache import merge_into


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
