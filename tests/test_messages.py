"""Warnings read as one line, in the console and on the report pages."""

from bench_utils.messages import one_line_warning


def test_a_warning_is_one_line_without_the_source_excerpt():
    assert one_line_warning("results.jsonl: skipped 1 unreadable line(s): [3]", UserWarning, "/x/results.py", 10,
                            "warnings.warn(...)") == "warning: results.jsonl: skipped 1 unreadable line(s): [3]\n"
    assert one_line_warning("old", DeprecationWarning, "f.py", 1) == "warning (DeprecationWarning): old\n"


def test_use_one_line_warnings_sets_the_format():
    # a fresh interpreter: pytest records warnings itself and would never print them
    import subprocess
    import sys

    # the same text twice, from two places and across a catch_warnings (which resets the per-place
    # registries): said once, as a report that reads its results file three times must
    code = ("import warnings; from bench_utils.messages import use_one_line_warnings; "
            "use_one_line_warnings(); warnings.warn('a results line was skipped')\n"
            "with warnings.catch_warnings(record=True): warnings.simplefilter('always')\n"
            "warnings.warn('a results line was skipped'); warnings.warn('another')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stderr == "warning: a results line was skipped\nwarning: another\n"


def test_text_for_a_terminal_shows_control_characters_instead_of_running_them():
    from bench_utils.messages import terminal_text

    hostile = "vit\x1b]52;c;aGk=\x07\x1b[2J done \x9b31m \u202eexe.txt"
    shown = terminal_text(hostile)
    assert shown == "vit\\x1b]52;c;aGk=\\x07\\x1b[2J done \\x9b31m \\u202eexe.txt"
    assert terminal_text("ViT-B/16: 2.00× faster\n\tnext line") == "ViT-B/16: 2.00× faster\n\tnext line"
