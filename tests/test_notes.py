"""The record's codes in words (report/notes.py): what a page says next to its failed and missing cells."""


def test_failed_and_missing_cells_name_the_command_that_measures_each():
    from bench_utils.report.notes import failed_and_missing_words

    words = failed_and_missing_words(2, 1, 4, "python -m bench_utils report p.yaml")
    assert words == ("2 failed; 1 of 4 cells missing. python -m bench_utils report p.yaml measures the missing ones; "
                     "python -m bench_utils run p.yaml --retry-failed measures the failed ones again (after a timeout, "
                     "raise timeout_s first).")
    assert failed_and_missing_words(0, 3, 4, "python -m bench_utils report p.yaml").endswith("measures the missing ones.")
    assert "report p.yaml" not in failed_and_missing_words(1, 0, 4, "python -m bench_utils report p.yaml")
