"""The command line's help: a description and examples for every verb a user types."""

import contextlib
import io

import pytest

from bench_utils.__main__ import build_parser


@pytest.mark.parametrize("verb", [None, "models", "plan", "run", "report", "selfcheck"])
def test_every_verb_has_a_description_and_examples(verb):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        build_parser().parse_args([verb, "--help"] if verb else ["--help"])
    text = out.getvalue()
    assert "examples:\n  python -m bench_utils " in text and "(see --help)" not in text
    if verb:
        assert f"python -m bench_utils {verb}" in text.split("examples:")[1]


def test_report_compare_takes_two_files():
    args = build_parser().parse_args(["report", "--compare", "a.jsonl", "b.jsonl"])
    assert args.compare == ["a.jsonl", "b.jsonl"] and args.params == []
