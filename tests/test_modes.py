from bench_utils.config.modes import COMPILE_MODES, CUDAGRAPH_MODES, EXTRA_WARMUP_CALLS, MODE_BY_NAME, MODES


def test_the_mode_table_defines_every_mode_list_the_project_uses():
    assert MODES == ("eager", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs",
                     "aot-inductor", "onnxruntime", "precompile")
    assert CUDAGRAPH_MODES == ("reduce-overhead", "max-autotune")  # no-cudagraphs: autotuning alone
    # torch.compile's modes; the last three build a file ahead of time that a serving process loads
    assert COMPILE_MODES == MODES[1:-3] and all(MODE_BY_NAME[name].packaged for name in MODES[-3:])
    # CUDA-graph modes record on their first calls: more untimed calls before the steady warm-up
    assert EXTRA_WARMUP_CALLS == {"eager": 0, "default": 1, "reduce-overhead": 3, "max-autotune": 3,
                                  "max-autotune-no-cudagraphs": 1, "aot-inductor": 1, "onnxruntime": 1,
                                  "precompile": 1}


def test_a_configuration_keeps_its_colour_on_every_chart_of_a_page_eager_first():
    import seaborn as sns

    from bench_utils.report.charts import colours

    names = ["default+freezing", "eager", "default", "max-autotune-no-cudagraphs+freezing"]
    palette = sns.color_palette("colorblind", 4)
    assert colours(names) == {"eager": palette[0], "default": palette[1], "default+freezing": palette[2],
                              "max-autotune-no-cudagraphs+freezing": palette[3]}


def test_every_mode_prices_its_cold_and_warm_compile():
    cold = {mode.name: mode.cold_compile_s for mode in MODE_BY_NAME.values()}
    warm = {mode.name: mode.warm_compile_s for mode in MODE_BY_NAME.values()}
    assert cold["eager"] == warm["eager"] == 0
    for mode in MODES[1:]:  # a warm compile (cache hits) is cheaper than a cold one, and not free
        assert 0 < warm[mode] < cold[mode]
    assert cold["max-autotune"] > cold["default"]  # autotuning benchmarks kernels
    # CUDA graphs wrap the same compiled graph after compiling (modes.py): they add no compile time
    assert cold["reduce-overhead"] == cold["default"]
    assert cold["max-autotune"] == cold["max-autotune-no-cudagraphs"]
