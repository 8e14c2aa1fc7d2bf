"""The record's codes in words (report/notes.py): what a page says next to its failed and missing cells."""


def test_failed_and_missing_cells_point_to_the_runs_one_next_step():
    from bench_utils.report.notes import failed_and_missing_words

    assert failed_and_missing_words(2, 1, 4) == ("2 failed; 1 of 4 cells missing: the next step at the top of the page "
                                                 "measures them.")