"""The top of a run's page: header, then the verdict table, legend, page-wide caveats and links, as HTML
from plain text (escaped)."""

import re

from bench_utils.report.page import CELLS_CSV, folded_figures, top_of_page
from bench_utils.results.aggregate import to_dataframe
from conftest import make_row, speedup_rows


def test_header_comes_first_then_the_verdict_legend_caveats_and_links():
    html = top_of_page(to_dataframe(speedup_rows("vit", 1, 4.0, 2.0, compiled=dict(compile_s=3.0))))
    order = [html.index(part) for part in ("bench-header", "Should you compile?", "bench-verdict", "bench-legend",
                                           "Random weights", f'href="{CELLS_CSV}"')]
    assert order == sorted(order)
    assert "Compile — compile (default mode): 2.00× faster" in html and "pays back after 1,500 calls" in html
    assert "batch 1, float32, CPU" in html  # for what: on the first screen, beside the answer


def test_text_from_the_rows_is_escaped():
    rows = [make_row("vit", 1, "eager", 2.0, label="<b>lab</b>")]
    html = top_of_page(to_dataframe(rows))
    assert "<b>lab</b>" not in html and "&lt;b&gt;lab&lt;/b&gt;" in html


def test_figures_fold_into_a_closed_details_grid():
    from matplotlib.figure import Figure

    html = folded_figures([Figure(figsize=(2, 1)), Figure(figsize=(2, 1))], "per cell")
    assert html.startswith("<details><summary>per cell</summary>") and html.count("<img") == 2


def test_the_page_links_back_to_the_index_and_to_the_rendered_method():
    html = top_of_page(to_dataframe(speedup_rows("vit", 1, 4.0, 2.0)))
    assert 'href="../index.html"' in html and 'href="../method.html"' in html


def test_the_method_page_is_rendered_and_names_repository_files_instead_of_dead_links():
    from bench_utils.report.method_page import method_html, repository_path

    assert repository_path("../README.md") == "README.md" and repository_path("gpu.md#item") == "docs/gpu.md"
    html = method_html("# The method\n\nSee the [README](../README.md), [below](#the-method) and "
                       "[torch](https://pytorch.org).\n")
    assert '<h1 id="the-method">The method</h1>' in html and 'href="index.html"' in html
    assert "README.md" in html and 'href="../README.md"' not in html  # no link a moved folder breaks
    assert 'href="#the-method"' in html and 'href="https://pytorch.org"' in html


def test_the_first_screen_gives_each_answers_latency_eager_and_chosen():
    from bench_utils.report.verdict import verdict_table, verdict_text

    df = to_dataframe(speedup_rows("vit", 1, 404.0, 250.0, compiled=dict(compile_s=3.0)))
    table = verdict_table(df)
    assert table.loc[0, "Latency (eager → chosen)"] == "404 ms → 250 ms"
    assert verdict_text(df).strip().startswith("ViT-B/16 (batch 1, CPU): Compile")
    assert verdict_text(df).strip().endswith("; 404 ms → 250 ms a call")


def test_a_gpu_page_says_what_its_cuda_graphs_hold_and_cost():
    """reduce-overhead on a GPU: the caveats a reader needs (static shapes, overwritten outputs, the pool's
    memory), and the environment table's GPU facts, not the CPU's."""
    from bench_utils.report.provenance import run_facts
    from bench_utils.report.verdict import page_caveats

    gpu = {"device_name": "NVIDIA H200", "driver": "580.1", "cudnn": "91300", "cuda_build": "13.0",
           "cuda_matmul_allow_tf32": False, "cudnn_allow_tf32": True, "cpu_capability": "AVX512"}
    env = {**make_row().env, **gpu}
    rows = speedup_rows("resnet", 1, 4.0, 1.0, configuration="reduce-overhead", device="cuda", env=env,
                        compiled=dict(cudagraphs_recorded=1, cudagraph_pool_mb=56.0))
    df = to_dataframe(rows)
    caveat = next(note for note in page_caveats(df) if "CUDA graphs" in note)
    assert caveat.startswith("reduce-overhead replays CUDA graphs") and "56 MiB" in caveat and "overwritten" in caveat
    facts = run_facts(df).iloc[:, 0]
    assert facts["GPU driver"] == "580.1" and facts["cuDNN"] == "91300"
    assert facts["CUDA graphs"].startswith("recorded in 1 of 1 compiled cells (reduce-overhead); its pool held 56")
    assert "CPU instruction set" not in facts.index and "memory allocator" not in facts.index
    cpu = run_facts(to_dataframe(speedup_rows("resnet", 1, 4.0, 2.0))).iloc[:, 0]
    assert "GPU driver" not in cpu.index and "CUDA graphs" not in cpu.index and "CPU instruction set" in cpu.index
    assert not any("CUDA graphs" in note for note in page_caveats(to_dataframe(speedup_rows("resnet", 1, 4.0, 2.0))))


def test_every_chart_carries_its_description():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    ax.set(title="ViT-B/16: where the time goes", xlabel="self time per call (ms)")
    html = folded_figures([fig], "per cell")
    assert 'alt="ViT-B/16: where the time goes; self time per call (ms)"' in html


def test_the_method_page_has_contents_and_an_anchor_for_every_heading():
    import re

    from bench_utils.report.method_page import heading_id, method_html
    from conftest import REPO

    assert heading_id("Why a model gets faster (or not): the profiler pass") == \
        "why-a-model-gets-faster-or-not-the-profiler-pass"
    assert heading_id("2. A look: <code>benchmarks/gpu_probe.sh</code>") == "2-a-look-benchmarksgpu_probesh"
    html = method_html((REPO / "docs" / "method.md").read_text())
    ids = set(re.findall(r'\bid="([^"]+)"', html))
    headings = re.findall(r"<h([23]) id=\"([^\"]+)\">", html)
    assert len(headings) >= 30 and all(anchor in ids for _, anchor in headings)
    assert sorted(set(re.findall(r'href="#([^"]+)"', html)) - ids) == []  # every link within the page lands
    contents = html[html.index('id="contents"'):html.index('id="weights-and-inputs"')]
    assert [anchor for level, anchor in headings if level == "2" and f'href="#{anchor}"' not in contents] == ["contents"]


def test_a_pages_legend_links_its_jargon_to_the_glossary():
    html = top_of_page(to_dataframe(speedup_rows("vit", 1, 4.0, 2.0)))
    for anchor in ("term-speedup", "term-interval", "term-round", "term-configuration"):
        assert f'href="../method.html#{anchor}"' in html
    # the words stay as written: only markup is added
    assert re.sub(r"<[^>]+>", "", html).count("Speedup: eager float32 time ÷ the configuration") == 2
