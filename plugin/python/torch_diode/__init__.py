"""torch_diode: pick GEMM kernels inside torch.compile from a Diode Workbench model package.

`import torch_diode` registers the selector with PyTorch Inductor, each step only if the one
before succeeded:
  1. import torch (at least the version the library names, diode_vocabulary's min_torch;
     otherwise the reason is recorded and nothing else happens),
  2. check that Inductor has the hook the selector needs (InductorChoices._finalize_template_configs),
  3. detect the GPU and load the best matching package (TORCH_DIODE_MODEL_PATH, the user
     directory, the shipped trained_models/),
  4. install the selector and the Inductor options that engage it.
Nothing here raises: get_integration_status() says what happened and why. Set
TORCH_DIODE_AUTOREGISTER=0 for the library with no side effects.

The selector engages where Inductor autotunes GEMMs: torch.compile(mode="max-autotune") or
"max-autotune-no-cudagraphs" (config.max_autotune / max_autotune_gemm). Instead of
benchmarking every kernel it keeps the model's top_k.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
from typing import Optional

__version__ = "0.2.0"

log = logging.getLogger("torch_diode")
if not log.handlers:
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("[torch_diode] %(levelname)s: %(message)s"))
    log.addHandler(_handler)
    log.setLevel(logging.WARNING)
    log.propagate = False

_lock = threading.RLock()
_runtime = None  # _selector.Runtime while installed
_saved_config: dict = {}
_asked_options: dict = {}  # install()'s options as given (register_model() reuses them)
_previous_handler = None
_previous_factory = None
_status: dict = {
    "version": __version__,
    "autoregister": None,
    "torch": {"ok": False, "reason": "not checked yet"},
    "hook": {"ok": False, "reason": "not checked yet"},
    "hardware": {"ok": False, "reason": "not checked yet"},
    "model": {"ok": False, "reason": "not checked yet"},
    "installed": False,
    "reason": "not registered yet",
}


def set_log_level(level) -> None:
    """Level for the "torch_diode" logger: a logging constant or a name ("INFO", "debug")."""
    if isinstance(level, str):
        value = logging.getLevelName(level.upper())
        if not isinstance(value, int):
            raise ValueError(f"unknown log level {level!r}")
        level = value
    log.setLevel(level)


_NO_TORCH = "torch is missing or broken"


def _min_torch() -> Optional[str]:
    """The oldest torch the selector runs on, as the library says ("2.9"); None without the library."""
    try:
        from ._native import NativeError, vocabulary

        return vocabulary()["min_torch"]
    except (ImportError, NativeError):
        return None


def _check_torch() -> Optional[str]:
    try:
        import torch
    except Exception as e:  # torch missing or broken: the status says so
        return f"{_NO_TORCH}: {e}"
    minimum = _min_torch()
    version = tuple(int(x) for x in re.findall(r"\d+", torch.__version__)[:2])
    old = minimum is not None and version < tuple(int(x) for x in minimum.split("."))
    _status["torch"] = {"ok": not old, "version": torch.__version__}
    if old:
        return f"torch {torch.__version__} is too old: the selector needs torch >= {minimum}"
    return None


def _check_hook() -> Optional[str]:
    from . import _inductor_compat as compat

    return compat.hook_problem()


def get_detected_hardware() -> dict:
    """The GPU this process sees: {"available": True, "gpu", "sm_count", ...} or the reason."""
    from ._hardware import detect

    return detect()


def list_available_models() -> list[dict]:
    """Every package found (path, name, source, gpu, ops, dtypes, matches_hardware, or error).
    Raises torch_diode._native.NativeError, naming where it looked, when libdiode_inductor is
    missing: the library reads the packages and says where they are."""
    from ._models import available

    hw = get_detected_hardware()
    return available(hw if hw.get("available") else None)


# Inductor's post-grad custom pass, where the small-M form decision rewrites its sites.
PRE_PASS = "post_grad_custom_pre_pass"


def _engage(options, runtime=None) -> None:
    """Inductor options the selector needs while installed; the old values come back on
    uninstall(). With autotune_gemm (the default) GEMM autotuning is on for every compile, so
    plain `torch.compile(model)` offers the selector Inductor's Triton kernels; with top_k=1 it
    keeps one candidate a GEMM and Inductor benchmarks none."""
    from . import _inductor_compat as compat

    wanted = {"max_autotune_gemm_search_space": options.search_space}
    if options.autotune_gemm:
        wanted["max_autotune_gemm"] = True
    backends = [b.strip().upper() for b in str(compat.get_config("max_autotune_gemm_backends")).split(",") if b.strip()]
    for b in ("ATEN", "TRITON"):
        if b not in backends:
            backends.append(b)
    wanted["max_autotune_gemm_backends"] = ",".join(backends)
    if options.small_m_forms and runtime is not None and runtime.decisions is not None:
        from ._decisions import make_pass
        from ._selector import active

        # The user's own pre-pass runs first, inside ours; uninstall() puts it back.
        previous = _option_before_install(PRE_PASS)
        wanted[PRE_PASS] = make_pass(previous, runtime.model, options.as_dict(), active)
    if runtime is not None and runtime.turns_first_run_tuning_off():
        # The package decides kernel configurations: while installed, no pointwise kernel of any
        # compile is benchmarked at its first run (nor its other configurations compiled); one kept at
        # Inductor's default, or one the translator cannot describe, runs Inductor's heuristic
        # configuration (docs/PLUGIN.md). Reductions ignore the option: one whose default is several
        # configurations is replaced where the package predicts one near it, else tuned and counted
        # (get_stats()'s tuned_at_first_run). A torch without the option keeps its own behaviour.
        wanted[compat.FIRST_RUN_AUTOTUNE] = False
    for key, value in wanted.items():
        if key not in _saved_config:
            _saved_config[key] = compat.get_config(key)
        compat.set_config(key, value)


def _option_before_install(name: str):
    """Inductor's option `name` as it was before install() changed it (as it is, where install did
    not): what plain torch.compile would run with."""
    from . import _inductor_compat as compat

    return _saved_config.get(name, compat.get_config(name))


def _restore_config() -> None:
    from . import _inductor_compat as compat

    for key, value in _saved_config.items():
        compat.set_config(key, value)
    _saved_config.clear()


def install(model=None, **options) -> bool:
    """Installs the selector. `model`: a path or name of a package, or None for the best package
    for the detected GPU and the regime. The options are torch_diode._selector.Options's keyword
    arguments, with its defaults (help(torch_diode._selector.Options) lists them; an unknown name
    is a TypeError and a bad value a ValueError, each naming it): top_k, performance_threshold,
    ops, search_space, fallback, margin, regime, autotune_gemm, keep_unscored.
    `regime` ("warm": operands in L2, as in a decode loop; "cold": weights
    evicted, as in a large model's forward pass; default: warm chooses the package, whose own regime
    then sets the margin). `margin`: ATen, what plain torch.compile runs,
    is replaced only by a kernel predicted faster by more than this share (default: the margin
    calibrated into the package for the regime by `diode calibrate`, else the library's default for
    the regime; 0 turns the guard off).
    `fallback`: what a GEMM the model cannot decide gets: "plain" (plain torch.compile's kernel,
    nothing benchmarked), "autotune" (Inductor's benchmark) or "raise". `autotune_gemm`: turn
    Inductor's GEMM autotuning on while installed, so that plain torch.compile reaches the selector.
    `keep_unscored`: also hand Inductor the candidates the model cannot score (it then benchmarks).
    `ops`: the GEMM ops to select for (default: every op of problem JSON, of which a package scores
    those its feature schema has an input for: baddbmm needs schema 3).
    The selector is installed for every thread of the process (forward and backward compiles).
    Returns True when installed; otherwise get_integration_status() says why (one warning is
    logged) and Inductor is left exactly as it was."""
    global _runtime, _previous_handler, _previous_factory
    from ._native import NativeError

    try:  # the selector reads core's names from the library: without it, nothing can be installed
        from ._selector import Options, Runtime, activate, choices_factory
    except NativeError as e:
        with _lock:
            uninstall()
            why = _check_torch()  # without torch too, that is what to say, and quietly
            return _fail("torch", why, logging.INFO) if why and why.startswith(_NO_TORCH) else _fail("model", str(e))
    options = Options(**options)
    with _lock:
        uninstall()
        _asked_options.clear()
        _asked_options.update(options.as_dict())
        _status.update(installed=False, options=options.as_dict())
        for step, check in (("torch", _check_torch), ("hook", _check_hook)):
            why = check()
            if why:
                # A Python without torch (a CPU box, a script) is not worth a warning.
                return _fail(step, why, logging.INFO if why.startswith(_NO_TORCH) else logging.WARNING)
            _status[step] = dict(_status.get(step, {}), ok=True, reason="")
            _status[step].pop("reason")
        hw = get_detected_hardware()
        _status["hardware"] = dict(hw, ok=bool(hw.get("available")))
        from ._native import vocabulary

        # Without a regime asked for, the default one chooses the package; the package's own then
        # sets the margin (Runtime).
        loaded = _load_model(model, hw, options.regime or vocabulary()["default_regime"])
        if loaded is None:
            return False
        from . import _inductor_compat as compat

        runtime = Runtime(loaded, options)
        # The margin and regime in use: the package's where none was asked for.
        _status["options"] = dict(options.as_dict(), margin=runtime.margin, regime=runtime.regime)
        _previous_handler = compat.current_choices_handler()  # one set in this thread, or None
        if type(_previous_handler) is compat.choices_base_class():
            # Inductor's own default, made lazily by an earlier compile: restoring it would pin it
            # in this thread over config.inductor_choices_class (a lookup table's handler, say).
            _previous_handler = None
        _previous_factory = compat.process_choices_factory()
        activate(runtime)
        compat.set_process_choices_factory(choices_factory)
        compat.forget_thread_choices_handlers()  # threads that lowered before make theirs anew
        compat.set_choices_handler(choices_factory())
        _engage(options, runtime)
        _runtime = runtime
        _status.update(installed=True, reason="")
        log.info(
            "installed with %s (top_k=%d, threshold=%.2f, margin=%.2f, regime=%s, %s)",
            loaded.path,
            options.top_k,
            options.threshold,
            runtime.margin,
            runtime.regime,
            options.search_space,
        )
        return True


def _load_model(model, hw, regime):
    from ._models import available, best_for, resolve
    from ._native import Model, NativeError

    device = hw if hw.get("available") else None
    gpu = device and device.get("gpu")
    if model is None:
        if not gpu:
            _fail("hardware", hw.get("reason", "no GPU"))
            return None
        choice, why = best_for(device, available(device), regime)
        if choice is None:
            _fail("model", why)
            return None
        if choice.get("transferred"):
            log.warning(
                "no model package for %s; using %s's (%s): %s",
                gpu,
                choice.get("gpu"),
                os.path.basename(choice["path"]),
                choice["transfer"]["why"],
            )
    else:
        try:
            choice = resolve(str(model), device)
        except FileNotFoundError as e:
            _fail("model", str(e))
            return None
        if "error" in choice:
            _fail("model", choice["error"])
            return None
        if not choice.get("matches_hardware"):
            log.warning(
                "model %s was made on %s; this process runs on %s: its choices may be poor",
                choice["path"],
                choice.get("gpu") or "an unknown GPU",
                gpu or "no GPU",
            )
    try:
        loaded = Model(choice["path"])
    except NativeError as e:
        _fail("model", str(e))
        return None
    _status["model"] = {"ok": True, **{k: v for k, v in choice.items() if k != "error"}}
    return loaded


def _fail(step: str, why: str, level: int = logging.WARNING) -> bool:
    _status[step] = dict(_status.get(step, {}), ok=False, reason=why)
    _status.update(installed=False, reason=f"{step}: {why}")
    log.log(level, "not installed: %s", why)
    return False


def uninstall() -> None:
    """Removes the selector and restores the Inductor options it changed. Safe to call twice."""
    global _runtime, _previous_handler, _previous_factory
    with _lock:
        if _runtime is None:
            return
        try:
            from . import _inductor_compat as compat
            from ._selector import activate

            activate(None)  # handlers other threads keep act as Inductor's own from now on
            compat.set_process_choices_factory(_previous_factory)
            compat.forget_thread_choices_handlers()
            if _previous_handler is not None:  # one the user had set in this thread
                compat.set_choices_handler(_previous_handler)
            # else this thread, like every other, makes its next from config.inductor_choices_class
            _restore_config()
        finally:
            _runtime = None
            _previous_handler = None
            _previous_factory = None
            _status.update(installed=False, reason="uninstalled")


def _recommended_way(runtime, stats: dict) -> dict:
    """Whether the compiles so far ran the recommended way (import torch_diode, then plain
    torch.compile), and if not, what differed."""
    from ._selector import NOT_RECOMMENDED

    why = []
    if not runtime.options.autotune_gemm:
        why.append(
            "install(autotune_gemm=False): GEMMs reach the selector only in compiles that turn "
            "max_autotune_gemm on themselves"
        )
    for mode, n in sorted(stats.get("lowerings_by_mode", {}).items()):
        if mode != "recommended":
            why.append(f"{n} GEMM lowering(s) compiled with " + "; ".join(NOT_RECOMMENDED[m] for m in mode.split("+")))
    return {"ok": not why, "why": why}


def _measured_elsewhere(package_path: str) -> list:
    """Where a model step measured on the package's GPU ran faster another way than the recommended
    one: read from the model-step results (`*-model-steps.json`, diode-demo/3) shipped beside the
    package, so the figures are the measurements themselves. One entry a scenario where another mode's
    median step beat the plugin's beyond both spreads: {"scenario", "mode", "speedup", "result"}. A mode
    timed in one process has no spread, so a difference there is not a finding and says nothing."""
    folder = os.path.dirname(package_path or "")
    out = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if not name.endswith("-model-steps.json"):
            continue
        try:
            with open(os.path.join(folder, name)) as f:
                result = json.load(f)
            for case in result.get("cases", []):
                plugin = case["results"].get("plugin", {})
                if not plugin.get("kernel_ms") or plugin.get("processes", 1) < 2:
                    continue
                slowest_plugin = max(plugin.get("kernel_ms_spread") or [plugin["kernel_ms"]])
                for mode, r in case["results"].items():
                    if mode == "plugin" or not r.get("kernel_ms") or r.get("processes", 1) < 2:
                        continue
                    if (
                        max(r.get("kernel_ms_spread") or [r["kernel_ms"]])
                        < min(plugin.get("kernel_ms_spread") or [plugin["kernel_ms"]])
                        and r["kernel_ms"] < slowest_plugin
                    ):
                        out.append(
                            {
                                "scenario": case["name"],
                                "mode": mode,
                                "speedup": round(plugin["kernel_ms"] / r["kernel_ms"], 3),
                                "result": os.path.join(folder, name),
                            }
                        )
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a result that cannot be read gives no advice
    return out


def get_integration_status() -> dict:
    """Whether the selector is installed and, step by step, what was found or why it stopped; with a
    package loaded, `measured_elsewhere` lists the model steps measured on its GPU that another mode
    ran faster than the recommended way, with the measured speed-up."""
    with _lock:
        status = json.loads(json.dumps(_status, default=str))
        if _runtime is not None:
            status["stats"] = _runtime.snapshot()
            status["recommended_way"] = _recommended_way(_runtime, status["stats"])
            status["measured_elsewhere"] = _measured_elsewhere(getattr(_runtime.model, "path", ""))
        try:
            from ._native import library_path

            status["library"] = library_path()
        except Exception:  # no library: the status says none
            status["library"] = None
        return status


def get_stats() -> dict:
    """Selector counters: calls, model selections, fallbacks by reason, candidates filtered and
    the time spent scoring. Empty counters when not installed."""
    with _lock:
        if _runtime is None:
            from ._decisions import DecisionStats
            from ._selector import Stats

            stats = Stats().snapshot()
            stats["decisions"] = DecisionStats().merged(stats["decisions"])
            return stats
        return _runtime.snapshot()


def reset_stats() -> None:
    with _lock:
        if _runtime is not None:
            _runtime.reset_stats()


def register_model(name_or_path, **install_options) -> bool:
    """Loads a package by path or name and installs the selector with it, even when it was made
    on another GPU (then with a warning)."""
    options = dict(_asked_options)  # what was asked for, not what the last package resolved it to
    options.update(install_options)
    options.pop("model", None)
    return install(model=name_or_path, **options)


@contextlib.contextmanager
def record_decisions(path: Optional[str] = None):
    """Keeps every decision made inside the block: for a GEMM the problem, each candidate with its
    predicted time and whether it was kept; for a pointwise/reduction kernel or a small-M site
    {"kind": "kernel_config" or "small_m_form", its "shape" or "site", the library's "decision"}.
    Yields the list; with `path`, also writes its GEMM decisions as problem JSON lines (diode
    import and the workbench read them)."""
    decisions: list = []
    with _lock:
        runtime = _runtime
    if runtime is None:
        log.warning("record_decisions: the selector is not installed; nothing will be recorded")
    else:
        runtime.recorders.append(decisions)
    try:
        yield decisions
    finally:
        if runtime is not None:
            runtime.recorders.remove(decisions)
        if path:
            from ._decisions import gemm_decisions

            with open(path, "w") as f:
                for d in gemm_decisions(decisions):
                    f.write(json.dumps(d, separators=(",", ":")) + "\n")


def _autoregister() -> None:
    flag = os.environ.get("TORCH_DIODE_AUTOREGISTER", "1").strip().lower()
    _status["autoregister"] = flag not in ("0", "false", "no", "off")
    if not _status["autoregister"]:
        _status["reason"] = "TORCH_DIODE_AUTOREGISTER=0: nothing registered"
        return
    try:
        install()
    except Exception as e:  # importing the package must never raise
        _fail("install", f"unexpected error: {e}")


_autoregister()
