"""The cell record, declared once: every column of a cell (one row of the report's DataFrame, one line
of cells.csv) with its unit, what it means and how a cell's rounds give its value, the way config's
`Parameter` declares a parameter. aggregate.py combines a cell's rows by these declarations (a loop,
not hand-kept lists); the report reads the labels and units; cells.csv's data dictionary is this table.
Values are numbers, codes and measured text (error messages, dynamo's reasons): the words a reader
sees are made in report/. No torch.

Adding a measured column: docs/architecture.md, "Where a change goes".
"""

from __future__ import annotations

from dataclasses import dataclass

# How a cell's rows (one per process and round) give a column's value; "computed": results/aggregate.py
# and results/stats.py compute it (statistics, the pairing with eager, codes).
COMBINES = ("same", "first", "largest", "union", "all", "least", "sum", "env", "computed")
# What a measurement could give (row_schema.py checks every row read back against a column's bounds: a
# value outside is garbage or a lie, 1e308 s of process time, a negative peak memory, not data). A
# sample is one timed call, seconds: below a microsecond no forward pass ran (or the timer cannot
# tell), above a day the number is a typo, not a latency.
MIN_SAMPLE_S, MAX_SAMPLE_S = 1e-6, 86_400.0
DAY_S = 86_400.0
LATENCY_MS = (MIN_SAMPLE_S * 1e3, MAX_SAMPLE_S * 1e3)  # a call's latency, ms
PER_CALL_MS = (0.0, MAX_SAMPLE_S * 1e3)  # a share of a call's time, ms
SECONDS = (0.0, 7 * DAY_S)  # a compile, a warm-up, a setting
MIB = (0.0, 2.0**30)  # memory
PERCENT = (0.0, 100.0)
PER_CALL = (0.0, 1e9)  # things counted per call (operators, kernels)
CUDA = "cuda"  # a column only a CUDA run fills
FUSED_KERNELS = "compiled code (Inductor)"  # profile_top_ops' name of the time in compiled graphs outside operators


@dataclass(frozen=True)
class Column:
    name: str
    combine: str  # one of COMBINES
    unit: str = ""  # "ms", "s", "MiB", "%", "×", "calls", ...; "" for codes, text and counts of things
    meaning: str = ""  # one line: cells.csv's data dictionary
    label: str = ""  # its name on a page, unit included ("" : a column pages do not show by name)
    source: str = ""  # the row field (or env key, combine "env") it is read from, when not `name`
    device: str = ""  # CUDA: filled on CUDA runs only (left out of a CPU run's cells.csv)
    internal: bool = False  # for results/ and sweep/ (adaptive rounds, benchmarks/): never a DataFrame column
    bounds: tuple | None = None  # (low, high) a row's field of this name may hold (row_schema.py), in `unit`

    def __post_init__(self) -> None:
        if self.combine not in COMBINES:
            raise ValueError(f"{self.name}: combine {self.combine!r} is not allowed; allowed: {', '.join(COMBINES)}")

    @property
    def field(self) -> str:
        return self.source or self.name


def _profile(name: str, unit: str, meaning: str, device: str = "", bounds: tuple | None = None) -> Column:
    return Column(f"profile_{name}", "first", unit, f"profiler pass (eager and the configurations the race kept, "
                  f"once): {meaning}", device=device, bounds=bounds)


RECORD = (
    # --- what the cell is (the same in every round) ---
    Column("label", "same", meaning="the run's label (a profile's `label`)", label="Run"),
    Column("model", "same", meaning="registry short name, or your checkpoint's name", label="Model"),
    Column("checkpoint", "same", meaning="the hub id (or folder) of the architecture", label="Checkpoint"),
    Column("task", "same", meaning="the model's task, e.g. image-classification", label="Task"),
    Column("size", "same", meaning="full (the checkpoint's architecture) or tiny (a shrunk config)", label="Model size"),
    Column("batch_size", "same", "images", "images per forward pass", "Batch (images)"),
    Column("configuration", "same", meaning="eager (the float32 baseline), or a compile mode and its modifiers, "
           "e.g. default+freezing", label="Configuration"),
    Column("mode", "computed", meaning="the configuration's torch.compile mode (eager: none)", label="Compile mode"),
    Column("fullgraph", "same", meaning="torch.compile(fullgraph=...)"),
    Column("device", "same", meaning="cpu or cuda", label="Device"),
    # --- how it ended ---
    Column("status", "computed", meaning="ok, or the last failure's status (oom, error, timeout, crashed) when "
           "no process ended ok", label="Status"),
    Column("error", "computed", meaning="the last failed process's error text", label="Error"),
    Column("failed_processes", "computed", "processes", "processes of the cell that did not end ok"),
    Column("exited_processes", "computed", "processes", "processes that wrote their row, then exited with a "
           "non-zero status (exit_codes)"),
    Column("exit_codes", "computed", meaning="those processes' exit statuses (-N: killed by signal N)"),
    Column("weights", "first", meaning="pretrained, random, or own (a notebook's object as it held them)",
           label="Weights"),
    Column("weights_note", "first", meaning="why those weights (e.g. not in the local cache, offline)"),
    Column("num_params", "first", "parameters", "the model's parameter count"),
    # --- latency: statistics over the rounds (results/stats.py) ---
    Column("latency_ms_mean", "computed", "ms", "mean of every timed call (the guide's statistic)", "Mean (ms)",
           bounds=LATENCY_MS),
    Column("latency_ms_median", "computed", "ms", "geometric mean of the processes' medians", "Median (ms)",
           bounds=LATENCY_MS),
    Column("latency_ms_p10", "computed", "ms", "10th percentile of the timed calls (over several rounds: the "
           "geometric mean of each round's, as the median)"),
    Column("latency_ms_p90", "computed", "ms", "90th percentile of the timed calls (over several rounds: the "
           "geometric mean of each round's, as the median)", "p90 (ms)"),
    Column("images_per_s", "computed", "images/s", "throughput: batch_size images per latency_ms_median",
           "Throughput (images/s)"),
    Column("latency_ms_std", "computed", "ms", "standard deviation of every timed call"),
    Column("latency_ms_ci95_low", "computed", "ms", "95% interval of the median, low end"),
    Column("latency_ms_ci95_high", "computed", "ms", "95% interval of the median, high end"),
    Column("process_spread", "computed", "fraction", "largest / smallest process median - 1"),
    Column("between_process", "computed", meaning="the intervals include the variation between processes"),
    Column("noisy", "computed", meaning="(p90 - p10) / median above 10%", label="Noisy"),
    Column("mean_outliers", "computed", meaning="the mean is more than 10% above the median: a few slow calls"),
    # --- against eager (a compiled cell; an eager cell leaves them empty), over the rounds both ran ---
    Column("eager_ms_mean", "computed", "ms", "the eager float32 cell's mean over the rounds this cell ran", "Eager mean (ms)"),
    Column("eager_ms_median", "computed", "ms", "the eager cell's median over the rounds this cell ran",
           "Eager median, its rounds (ms)"),
    Column("eager_ms_p90", "computed", "ms", "the eager cell's 90th percentile over the rounds this cell ran",
           "Eager p90 (ms)"),
    Column("eager_images_per_s", "computed", "images/s", "the eager cell's throughput over the rounds this cell "
           "ran: batch_size images per eager_ms_median", "Eager throughput (images/s)"),
    Column("eager_held_mem_mb", "computed", "MiB", "the eager cell's held memory (held_mem_mb) over the rounds "
           "this cell ran", "Eager peak memory (MiB)"),
    Column("eager_ms_ci95_low", "computed", "ms", "the eager cell's median interval, low end"),
    Column("eager_ms_ci95_high", "computed", "ms", "the eager cell's median interval, high end"),
    Column("eager_beside", "computed", meaning="eager float32 was timed in this cell's own processes, beside its "
           "blocks (eager_in_process): its eager columns and speedup are over those calls"),
    Column("speedup", "computed", "×", "eager time / this configuration's over every paired round (> 1: faster)"),
    Column("speedup_ci95_low", "computed", "×", "95% interval of the speedup, low end"),
    Column("speedup_ci95_high", "computed", "×", "95% interval of the speedup, high end"),
    Column("speedup_halfwidth", "computed", "fraction", "the interval's half-width on the log scale (0.08: ±8%)"),
    Column("significant", "computed", meaning="the speedup's interval excludes 1×"),
    Column("improvement_pct", "computed", "%", "the guide's improvement, (eager - compiled) / eager, of the race "
           "figure: 100 * (1 - 1 / race_speedup)", "Improvement (%)"),
    Column("paired_rounds", "computed", "rounds", "rounds both cells timed in blocks (the interval's rounds)"),
    Column("outlying_rounds", "computed", meaning="rounds whose speedup lies outside the others' 99% prediction "
           "interval"),
    Column("round_logs", "computed", meaning="each round's log speedup", internal=True),
    Column("round_ids", "computed", meaning="the paired rounds, in order", internal=True),
    Column("round_pairs", "computed", meaning="each paired round's block-pair log ratios", internal=True),
    Column("round_workers", "computed", meaning="each round's worker pair", internal=True),
    Column("round_blocks_ms", "computed", meaning="round -> its blocks' medians, ms", internal=True),
    Column("round_process", "computed", meaning="round -> the round its processes started in", internal=True),
    Column("round_eager_samples_s", "computed", meaning="round -> eager's samples timed beside it, s", internal=True),
    Column("round_eager_blocks_ms", "computed", meaning="round -> the blocks' medians of eager timed beside it, ms",
           internal=True),
    Column("round_held_mem_mb", "computed", meaning="round -> its process's held memory, MiB", internal=True),
    # --- the race between a group's configurations (results/race.py) ---
    Column("race_outcome", "computed", meaning="recommended, runner_up, contender, dropped (clearly slower in the "
           "selection round; a dropped runner-up keeps it: the recommended row's runner_up names it), inaccurate, "
           "unsupported or failed; empty for eager"),
    Column("race_rounds", "computed", "rounds", "the rounds of the race figure (every round; a dropped "
           "configuration's: its selection round)"),
    Column("race_round_ids", "computed", meaning="those rounds", internal=True),
    Column("race_speedup", "computed", "×", "the speedup over those rounds (the recommended "
           "configuration's lowered by race_selection_bias)", "Speedup (×)"),
    Column("race_ci95_low", "computed", "×", "its 95% interval, low end (a dropped configuration's at least as "
           "wide as one of the leader's rounds moves and as the run's first rounds stand from later ones)",
           "95% low (×)"),
    Column("race_ci95_high", "computed", "×", "its 95% interval, high end", "95% high (×)"),
    Column("race_significant", "computed", meaning="that interval excludes 1×", label="Differs from eager?"),
    Column("race_halfwidth", "computed", "fraction", "its half-width on the log scale"),
    Column("race_least_pair", "computed", "×", "the smallest speedup of one block pair over those rounds (eager's block "
           "time over this configuration's, timed moments apart): above 1, it was faster in every pair"),
    Column("race_pairs", "computed", "block pairs", "the block pairs of those rounds"),
    Column("race_round_sd", "computed", "log ratio", "how far one of those rounds' log speedups strays: their "
           "standard deviation (what more rounds would narrow, decision.rounds_to_decide)"),
    Column("race_selection_bias", "computed", "fraction", "how far the recommended figure and its low end were "
           "lowered for the round that picked it (the winner's curse)"),
    Column("runner_up", "computed", meaning="the recommended configuration's runner-up (on its row)"),
    Column("versus_runner_up", "computed", "×", "the recommended configuration's speed over the runner-up's, "
           "paired round by round"),
    Column("versus_ci95_low", "computed", "×", "its 95% interval, low end"),
    Column("versus_ci95_high", "computed", "×", "its 95% interval, high end"),
    Column("race_trailing", "computed", meaning="a contender the recommended configuration beats over the rounds "
           "both ran (their paired interval above 1×): it can change no answer, so no later round times it"),
    Column("race_simpler", "computed", meaning="the recommended configuration is the simpler of two the rounds cannot "
           "tell apart (its runner-up looked faster by a margin within the noise: race.simpler_first)"),
    # --- the machine while timing ---
    Column("others_cpu_pct", "largest", "%", "CPU used by other processes while timing, of the machine",
           bounds=PERCENT),
    Column("steal_pct", "largest", "%", "CPU time the hypervisor took while timing, of the machine", bounds=PERCENT),
    Column("page_faults_per_call", "largest", "faults", "minor page faults per timed call (memory the call "
           "touched for the first time: 0 when the allocator keeps freed memory, keep_freed_memory)",
           bounds=PER_CALL),
    Column("launch_cpus", "union", meaning="the CPUs its measuring thread ran on at its blocks' ends (a GPU worker's "
           "is pinned to one: measure/launch_thread.py; -1: unknown)", source="block_cpus"),
    Column("compiled_beside_starts", "largest", "workers", "spares for the next round (sweep/workers.Spares) still "
           "importing when one of its compiles began: its compile time may read high", device=CUDA),
    Column("sm_clock_mhz_low", "computed", "MHz", "the GPU's SM clock, the lowest NVML read at a block's end",
           device=CUDA),
    Column("sm_clock_mhz_high", "computed", "MHz", "the GPU's SM clock, the highest NVML read at a block's end",
           device=CUDA),
    Column("busy_pct", "computed", "%", "the larger others_cpu_pct of this cell and its eager cell"),
    Column("stolen_pct", "computed", "%", "the larger steal_pct of this cell and its eager cell"),
    Column("disturbed", "computed", meaning="busy_pct or stolen_pct above 10%, or outlying rounds", label="Disturbed"),
    # --- how it was measured ---
    Column("repeats", "computed", "processes", "rows of the cell (a process per round)", "Processes"),
    Column("repeats_ok", "computed", "processes", "of them, ended ok", "Processes ok"),
    Column("warmup", "same", "calls", "the profile's minimum warm-up calls"),
    Column("warmup_calls", "largest", "calls", "untimed calls until the latency was steady"),
    Column("warmup_s", "largest", "s", "seconds they took", bounds=SECONDS),
    Column("warmup_steady", "all", meaning="every process reached a steady latency before max_warmup_s"),
    Column("warmup_tail", "computed", "fraction", "how much slower a round's first timed block ran than its "
           "others, the median over the rounds"),
    Column("warmup_unfinished", "computed", meaning="warmup_tail above 5%: the warm-up had not ended when timing "
           "began"),
    Column("iterations", "same", "calls", "the profile's minimum timed calls per worker and round"),
    Column("min_time_s", "same", "s", "the profile's minimum timed seconds per worker and round", bounds=SECONDS),
    # --- compiling ---
    Column("compile_s", "first", "s", "the first compiled call of round 0, in a compiler cache of the cell's own "
           "emptied before it (a cold compile)",
           "Cold compile (s)", bounds=SECONDS),
    Column("compile_warm_s", "computed", "s", "median first compiled call of the later fresh processes (GPU), or (CPU) "
           "a new process's compile from the cell's filled cache, or load of a shipped form, and its first call "
           "(first_answer_s without the model's build)",
           "Warm compile (s)", bounds=SECONDS),
    # --- a new process's start (measure/startup.py) ---
    Column("build_s", "first", "s", "round 0's process building the model (its code and weights) before its cold "
           "compile", bounds=SECONDS),
    Column("first_answer_s", "first", "s", "a new process from its start to its first correct answer: the model "
           "built (where the form runs its code), the form compiled (from its own filled cache) or loaded (a shipped "
           "file, into an empty cache), its first call", "First answer in a new process (s)", bounds=SECONDS),
    Column("first_answer_cold_s", "computed", "s", "a compiled configuration's first answer with an empty compiler "
           "cache: round 0's build_s and compile_s (a shipped form: its build, once)", "First answer, cold (s)"),
    Column("start_frames", "first", "frames", "dynamo frames that new process traced (0: it compiled nothing)"),
    Column("start_fx_cache_hits", "first", "graphs", "Inductor FX-graph cache hits in that new process"),
    Column("start_fx_cache_misses", "first", "graphs", "... and misses: graphs it compiled from scratch"),
    Column("ships_bytes", "first", "bytes", "the file a new process starts from: a package, an ONNX file, cache "
           "artifacts, a precompiled function", "Ships (bytes)", bounds=(0.0, 2.0**50)),
    Column("regions", "first", "blocks", "regional: the repeated blocks compiled one by one", "Blocks compiled"),
    Column("regions_at", "first", meaning="regional: which blocks, and where in the model"),
    Column("fx_cache_hits", "first", "graphs", "Inductor FX-graph cache hits of round 0's compile (0: it was cold)",
           "Cold compile's cache hits"),
    Column("fx_cache_misses", "first", "graphs", "... and misses"),
    Column("compile_cold", "computed", meaning="round 0's compile found nothing of this cell in Inductor's "
           "FX-graph cache (no hit, or none counted): compile_s is a cold compile; false where the cache held it (a "
           "run resumed after its round 0), compile_s then a first compile from a filled cache"),
    # --- what the configuration's settings did, read back from torch (measure/evidence.py) ---
    Column("params_folded", "first", "tensors", "freezing: parameters and buffers the compiled graphs held as constants "
           "to fold",
           "Parameters folded"),
    Column("params_unfolded", "first", "parameters", "freezing: parameters still passed to the compiled graphs as "
           "inputs (0 when freezing took effect)"),
    Column("autotune_choices", "first", "operators", "max-autotune: operators Inductor lowered with several kernels "
           "to choose between", "Operators autotuned"),
    Column("matmuls_seen", "first", "operators", "matrix multiplies and convolutions of one call, as the profiler "
           "saw them dispatched (autocast and channels_last configurations)"),
    Column("matmuls_in_autocast_dtype", "first", "operators", "... of them in the configuration's autocast dtype",
           "Matrix multiplies in the autocast dtype"),
    Column("convs_seen", "first", "operators", "channels_last: convolutions of one call"),
    Column("convs_channels_last", "first", "operators", "... of them with a channels_last input",
           "Convolutions in channels_last"),
    Column("graph_breaks", "largest", "breaks", "dynamo's graph breaks", "Graph breaks"),
    Column("graph_count", "largest", "graphs", "graphs dynamo compiled"),
    Column("recompiles", "largest", "recompiles", "frames compiled again after the first call", "Recompiles"),
    Column("break_reasons", "union", meaning="dynamo's graph-break reasons, first lines", label="Why the graph broke"),
    Column("recompile_reasons", "union", meaning="the guards that failed, first lines", label="Why it recompiled"),
    Column("compile_notes", "computed", meaning="codes: what a compile mode did not do (ran_eager, bf16_capability, "
           "no_cudagraphs, cudagraph_skips, no_replay, partial_cudagraphs)", label="Compile notes"),
    Column("cudagraph_skips", "largest", "graphs", "graphs Inductor ran without CUDA graphs", device=CUDA),
    Column("cudagraphs_recorded", "largest", "graphs", "CUDA graphs recorded (0: the mode ran without)", device=CUDA),
    Column("kernels_outside_graphs", "computed", "kernels per call", "kernels the host launched outside CUDA-graph "
           "replays (profiled)", device=CUDA),
    # --- memory, MiB, right after the timed calls ---
    Column("peak_mem_mb", "largest", "MiB", "CUDA: max allocated while timing; CPU: the process's peak resident "
           "memory over its life (model, inputs, torch, Python and its compile)", "Peak memory (MiB)", bounds=MIB),
    Column("peak_reserved_mb", "largest", "MiB", "CUDA: max reserved while timing (CUDA-graph pools included)",
           device=CUDA, bounds=MIB),
    Column("cudagraph_pool_mb", "largest", "MiB", "CUDA: reserved in CUDA-graph pools after timing", device=CUDA,
           bounds=MIB),
    Column("held_mem_mb", "computed", "MiB", "what the cell held while timing, comparable across modes: CUDA: "
           "peak_reserved_mb (CUDA-graph pools included); CPU: peak_mem_mb"),
    # --- accuracy against eager ---
    Column("max_abs_diff", "largest", "", "largest absolute difference of the compiled output from eager's",
           "Largest difference"),
    Column("accuracy_ok", "all", meaning="float32: every output element within tolerance of eager float32's; a "
           "lower precision: the task's answer kept (task_agreement >= 0.9)", label="Matches eager"),
    Column("accuracy_reference", "first", meaning="elementwise (float32) or task (a lower precision)"),
    Column("task_agreement", "least", "fraction", "top-1 / mask IoU / box agreement with eager float32 (a "
           "notebook's object of no known task: its outputs' cosine)", "Task agreement", bounds=(0.0, 1.0)),
    # --- why (the profiler's pass: the first round after the selection round, sweep/jobs.profiled) ---
    _profile("calls", "calls", "calls profiled"),
    _profile("call_ms", "ms", "a profiled call (the profiler slows it)", bounds=PER_CALL_MS),
    _profile("ops_per_call", "operators", "dispatcher operators per call, top of their nesting", bounds=PER_CALL),
    _profile("op_ms", "ms", "time inside those operators per call", bounds=PER_CALL_MS),
    _profile("compiled_ms", "ms", "time in compiled graphs outside operators per call", bounds=PER_CALL_MS),
    _profile("overhead_ms", "ms", "the rest per call: Python, module calls, guards", bounds=PER_CALL_MS),
    _profile("kernels_per_call", "kernels", "CUDA kernels run per call", CUDA, PER_CALL),
    _profile("device_ms", "ms", "the GPU's busy time per call", CUDA, PER_CALL_MS),
    _profile("launches_per_call", "launches", "kernel launches by the host per call", CUDA, PER_CALL),
    _profile("graph_replays_per_call", "replays", "CUDA-graph replays per call", CUDA, PER_CALL),
    _profile("top_ops", "", "[operator or kernel, self ms per call] with the most time"),
    _profile("error", "", "why the profiler's pass failed (the timing stands)"),
    _profile("trace", "", "the trace's file in traces/ (Perfetto, TensorBoard)"),
    _profile("s", "s", "seconds the pass took: its calls, their summary, the trace", bounds=SECONDS),
    Column("eager_profile_ops_per_call", "computed", "operators", "the eager cell's profiled operators per call"),
    Column("eager_profile_op_ms", "computed", "ms", "the eager cell's time inside operators per call"),
    Column("eager_profile_overhead_ms", "computed", "ms", "the eager cell's overhead per call"),
    Column("eager_profile_call_ms", "computed", "ms", "the eager cell's profiled call"),
    Column("eager_profile_kernels_per_call", "computed", "kernels", "the eager cell's kernels per call", device=CUDA),
    Column("eager_profile_device_ms", "computed", "ms", "the eager cell's GPU time per call", device=CUDA),
    Column("eager_profile_top_ops", "computed", meaning="the eager cell's operators with the most time"),
    # --- where it ran ---
    Column("hardware", "env", meaning="GPU or CPU name", label="Hardware", source="device_name"),
    Column("torch", "env", meaning="torch version", label="torch"),
    Column("transformers", "env", meaning="transformers version", label="transformers"),
    Column("python", "env", meaning="Python version"),
    Column("cpu_capability", "env", meaning="the instruction set torch's CPU kernels use (AVX2, AVX512, ...)"),
    Column("compile_bench", "env", meaning="the compile-bench commit that measured it (+changes: local edits)"),
    Column("hostname", "computed", meaning="the hosts that measured it (several on a Ray cluster)", label="Host"),
    Column("torch_threads", "env", "threads", "torch.get_num_threads() in the measuring process"),
    Column("allocator", "env", meaning="the C allocator's settings (keep_freed_memory)"),
    Column("cpu_count", "env", "cores", "CPUs the measuring process may run on (its affinity: taskset, a cpuset; not a CPU quota)"),
    Column("compute_capability", "env", meaning="the GPU's compute capability", device=CUDA),
    Column("gpu_memory_gb", "env", "GB", "the GPU's memory", device=CUDA),
    Column("driver", "env", meaning="the NVIDIA driver version", device=CUDA),
    Column("cuda_build", "env", meaning="the CUDA version torch was built with", device=CUDA),
    Column("cudnn", "env", meaning="the cuDNN version torch loaded", device=CUDA),
    Column("cuda_matmul_allow_tf32", "env", meaning="float32 matmuls may run in TF32 (torch.backends.cuda.matmul."
           "allow_tf32)", device=CUDA),
    Column("cudnn_allow_tf32", "env", meaning="float32 cuDNN convolutions may run in TF32 (torch.backends.cudnn."
           "allow_tf32)", device=CUDA),
    Column("settings", "same", meaning="fingerprint of the settings that change a measurement"),
    Column("started_at", "first", meaning="when its first process started, UTC"),
    Column("duration_s", "sum", "s", "wall time of all its processes", "Process time (s)", bounds=(0.0, 30 * DAY_S)),
    Column("round_s", "computed", "s", "median wall time of the cell's rounds that prepared nothing (what one more "
           "round takes)"),
    Column("sweep_s", "computed", "s", "how long the run's sweep measured, its rounds' time spans joined (the "
           "clock budget_min is read on)"),
    Column("samples_s", "computed", "s", "every process's raw samples (with_samples only)"),
)
COLUMNS = [column.name for column in RECORD if not column.internal]  # the DataFrame's columns, in order
# A cell row's (rows.BenchResult) fields that no column holds as they are: the record computes from them
ROW_ONLY = {"repeat": "the round the row measured",
            "block_lengths": "calls per timed block, in order (samples_s holds them one after another)",
            "eager_samples_s": "eager float32's samples timed in the row's own process (eager_in_process), s",
            "eager_block_lengths": "calls per block of eager_samples_s, block i beside the row's block i",
            "env": "the measuring process's environment (the env columns read it)",
            "exit_code": "the worker's exit status when it ended after writing the row (exit_codes)",
            "process_round": "the round whose process measured it (a CPU round's fork: its own round)",
            "template_round": "the round that prepared the process it was forked from (CPU)",
            "block_others_cpu_pct": "other processes' CPU share over each timed block, % (others_cpu_pct: their mean)",
            "block_sm_clock_mhz": "the GPU's SM clock at each timed block's end, MHz (CUDA with NVML)",
            "pinned_cpu": "the CPU a GPU worker pinned its measuring thread to (launch_cpus)"}

