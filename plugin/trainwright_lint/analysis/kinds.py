"""What a call does, by what it calls: the vocabulary of the effect analysis.

Precision first: a call is given a kind only when its target says what it is (``print``,
``logger.info``, ``wandb.log``, ``time.perf_counter``, ``torch.cuda.empty_cache``, ``json.dump``,
``self.log``, ``self.evaluate``) or when a helper's name says it in whole words
(``self.log_completions()``, ``print_samples()``); every other call is unknown, and the analysis
treats unknown calls as part of what the method computes.
"""

from __future__ import annotations

import re

# Effect kinds of a statement (several may apply).
CLOCK = "clock"  # reads the wall clock
LOG = "logging"  # Python logging (logger.info, warnings)
PRINT = "printing"
TRACKER = "tracker"  # Trainer.log, wandb/mlflow/tensorboard/comet, tables
FILE = "file output"
GC = "gc/cache clearing"
SAMPLES = "sample generation"
PROFILE = "profiling"
ACTION = "loop action"  # evaluate / save / push: what TrainerControl flags ask the loop to do
CONTROL = "control flag"  # self.control.should_* = ...
SCHEDULE = "schedule update"  # self.x = f(global step / epoch)
COUNTER = "counter"  # self.x += 1
ATTRIBUTE = "attribute"  # self.x = ...
RECORD = "recording"  # self.x[...] = / self.x.append(...)
LOCAL = "local"  # assigns or mutates locals only
DELEGATE = "delegation"  # super().<same method>(...)
SUPER_OTHER = "super call"  # super().<other>(...)
RETURN = "return"
RAISE = "raise"
YIELD = "yield"
PARAM_MUTATION = "argument mutation"
UNKNOWN = "unknown"
NOOP = "noop"
# ``self.log(...)`` in the evaluation loop whose entry stays in ``state.log_history``: its place among the
# evaluation's entries (before the metrics ``evaluate`` logs) is part of what the evaluation records, and
# no event fires before those metrics are logged.
HISTORY = "history entry"

# Kinds that make a statement part of what the method computes, whatever else it does.
DATA_KINDS = frozenset({DELEGATE, SUPER_OTHER, RETURN, RAISE, YIELD, PARAM_MUTATION, UNKNOWN, HISTORY})
# Kinds that only observe or decide *when* (a callback event can do them).
OBSERVING_KINDS = frozenset({CLOCK, LOG, PRINT, TRACKER, FILE, GC, SAMPLES, PROFILE, ACTION, CONTROL})
# Writes to ``self`` that observe when no other method computes with them (timers, metric buffers).
STATE_KINDS = frozenset({ATTRIBUTE, RECORD, COUNTER})
# Observing kinds that are worth a callback even without a progress gate, around a delegation.
LOUD_KINDS = frozenset({PRINT, TRACKER, FILE, GC, SAMPLES, PROFILE, ACTION})

CLOCK_CALLS = frozenset(
    {
        "time.time", "time.perf_counter", "time.monotonic", "time.process_time", "time.time_ns",
        "time.perf_counter_ns", "time.monotonic_ns", "perf_counter", "monotonic", "datetime.now",
        "datetime.datetime.now", "datetime.utcnow", "datetime.datetime.utcnow", "timeit.default_timer",
        "default_timer",
    }
)  # fmt: skip
_LOGGER_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "warning_once", "info_once"}
)
_LOGGER_ROOTS = frozenset({"logger", "logging", "_logger", "LOGGER", "log", "warnings", "LOG", "_LOGGER"})
_TRACKER_ROOTS = frozenset(
    {"wandb", "mlflow", "comet_ml", "swanlab", "neptune", "clearml", "tb_writer", "writer", "summary_writer",
     "tensorboard", "aim", "dvclive", "trackio"}
)  # fmt: skip
_TRACKER_METHODS = frozenset(
    {
        "add_scalar", "add_scalars", "add_text", "add_histogram", "add_image", "add_figure", "log_dict",
        "log_artifact", "log_table", "log_metric", "log_metrics", "log_param", "log_params", "set_postfix",
        "set_description", "log_text", "log_image",
    }
)  # fmt: skip
_SELF_TRACKER = frozenset({"log", "log_metrics", "save_metrics"})
_SELF_FILE = frozenset({"create_model_card", "save_state"})
_SELF_ACTION = frozenset({"evaluate", "save_model", "_save_checkpoint", "push_to_hub", "predict", "_save"})
_FILE_CALLS = frozenset(
    {"open", "torch.save", "np.save", "numpy.save", "json.dump", "pickle.dump", "os.makedirs", "os.mkdir",
     "yaml.dump", "yaml.safe_dump", "np.savez", "plt.savefig", "shutil.copy", "shutil.copyfile",
     "shutil.copytree", "shutil.rmtree", "shutil.move", "os.remove", "os.rename", "os.replace"}
)  # fmt: skip
_FILE_METHODS = frozenset(
    {"write", "writelines", "dump", "savefig", "to_csv", "to_json", "to_parquet", "makedirs", "mkdir", "touch",
     "write_text", "write_bytes", "save_pretrained", "save_to_disk", "flush"}
)  # fmt: skip
_GC_CALLS = frozenset(
    {"gc.collect", "torch.cuda.empty_cache", "torch.cuda.synchronize", "torch.cuda.ipc_collect"}
)
_GC_METHODS = frozenset(
    {
        "empty_cache",
        "ipc_collect",
        "reset_peak_memory_stats",
        "synchronize",
        "malloc_trim",
        "collect",
        "clear_cache",
    }
)
_PROFILE_METHODS = frozenset(
    {"start", "stop", "step", "tic", "toc", "record", "enable", "disable", "elapsed_time"}
)
# Calls with no effect beyond their value: a statement made of these only assigns locals.
PURE_CALLS = frozenset(
    {
        "len", "str", "int", "float", "bool", "round", "sum", "min", "max", "abs", "isinstance", "hasattr",
        "getattr", "dict", "list", "tuple", "set", "frozenset", "sorted", "reversed", "enumerate", "zip", "range",
        "repr", "format", "type", "id", "any", "all", "map", "filter", "iter", "next", "divmod", "pow",
        "math.isfinite", "math.isnan", "math.sqrt", "math.log", "math.exp", "copy.copy", "copy.deepcopy",
        "os.path.join", "os.path.exists", "os.path.isdir", "os.path.isfile", "os.getpid", "socket.gethostname",
        "np.mean", "np.std", "np.array", "numpy.mean", "statistics.mean", "pd.DataFrame", "pandas.DataFrame",
    }
)  # fmt: skip
PURE_METHODS = frozenset(
    {
        "item", "detach", "cpu", "float", "tolist", "numpy", "get", "keys", "items", "values", "mean", "sum",
        "clone", "format", "join", "split", "strip", "startswith", "endswith", "copy", "lower", "upper",
        "replace", "size", "dim", "std", "max", "min", "numel", "to", "count", "index", "isnan", "isinf",
        "isfinite", "any", "all", "abs", "nelement", "element_size", "total_seconds", "timestamp", "strftime",
        "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "decode",
        "batch_decode", "is_main_process", "is_world_process_zero", "is_local_process_zero",
    }
)  # fmt: skip
LOCAL_MUTATORS = frozenset({"append", "extend", "update", "add", "insert", "appendleft", "setdefault", "pop",
                            "clear", "add_data", "add_row", "add_column", "extendleft", "remove", "discard"})  # fmt: skip

_NAME_HINTS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"generate", "generation", "sample", "samples", "completion", "completions"}), SAMPLES),
    (frozenset({"print", "pprint"}), PRINT),
    (
        frozenset({"log", "logs", "report", "plot", "visualize", "visualise", "table", "track", "wandb"}),
        TRACKER,
    ),
    (frozenset({"save", "write", "dump", "export"}), FILE),
    (frozenset({"profile", "profiler", "timer", "timing"}), PROFILE),
    (frozenset({"gc", "cache", "memory"}), GC),
)
_SAMPLE_LAST = re.compile(r"^(?:generate|sample)")
_LOGGER_ATTRIBUTE = re.compile(
    r"logger|writer|wandb|tensorboard|tb_|tracker|mlflow|comet|neptune", re.IGNORECASE
)
_HANDLE_WRITES = frozenset({"write", "writelines", "flush"})
_ANY_LOG_METHOD = _LOGGER_METHODS | _TRACKER_METHODS | {"log", "write", "flush", "print"}


def hint_kind(name: str) -> str | None:
    """The kind a helper's name announces in whole ``_``-separated words, if any."""
    words = set(name.lower().strip("_").split("_"))
    for hints, kind in _NAME_HINTS:
        if words & hints:
            return kind
    return None


def call_kind(dotted: str) -> str | None:
    """The effect kind of a call to ``dotted`` (``self.log``, ``wandb.log``, ``print``), or None when
    the target says nothing we can trust. Pure calls return ``LOCAL``."""
    parts = dotted.split(".")
    last = parts[-1]
    root = parts[0]
    if dotted in CLOCK_CALLS:
        return CLOCK
    if dotted in ("print", "pprint", "pprint.pprint", "rich.print") or (last == "print" and len(parts) == 2):
        return PRINT
    if dotted in PURE_CALLS:
        return LOCAL
    if root == "self" and len(parts) == 3 and _LOGGER_ATTRIBUTE.search(parts[1]) and last in _ANY_LOG_METHOD:
        return TRACKER  # self.wandb_logger.log(...), self.writer.add_scalar(...), self.logger.info(...)
    if (
        root == "self"
        and len(parts) == 3
        and "file" in parts[1].lower().split("_")
        and last in _HANDLE_WRITES
    ):
        return FILE  # self.log_file.write(...): a file handle the class opened
    if root == "self" and len(parts) == 2:
        if last in _SELF_TRACKER:
            return TRACKER
        if last in _SELF_FILE:
            return FILE
        if last in _SELF_ACTION:
            return ACTION
        if _SAMPLE_LAST.match(last):
            return SAMPLES
        return hint_kind(last)
    if root in _LOGGER_ROOTS and (last in _LOGGER_METHODS or root == "warnings"):
        return LOG
    if root in _TRACKER_ROOTS or (last in _TRACKER_METHODS and len(parts) >= 2):
        return TRACKER
    if dotted in _GC_CALLS or (last in _GC_METHODS and len(parts) >= 2 and root in ("torch", "gc", "ctypes")):
        return GC
    if dotted in _FILE_CALLS or (root in ("shutil", "json", "yaml", "pickle") and len(parts) == 2):
        return FILE
    if last in _FILE_METHODS and len(parts) >= 2 and root != "self":
        return FILE
    if ("profil" in dotted or "timer" in dotted.lower()) and last in _PROFILE_METHODS | {
        "__enter__",
        "__exit__",
    }:
        return PROFILE
    if len(parts) >= 2 and _SAMPLE_LAST.match(last) and (root == "self" or "model" in parts[-2].lower()):
        return SAMPLES
    if len(parts) == 1:
        return hint_kind(last)
    if last in PURE_METHODS:
        return LOCAL
    return None


_PROFILE_CONTEXT = re.compile(
    r"profil|record_function|timer|timing|nvtx|trace|measure|stopwatch", re.IGNORECASE
)


def is_profiling_name(dotted: str) -> bool:
    """A decorator or context manager that only measures (``@profiling_decorator``,
    ``torch.profiler.record_function``, ``Timer()``)."""
    return bool(_PROFILE_CONTEXT.search(dotted))
