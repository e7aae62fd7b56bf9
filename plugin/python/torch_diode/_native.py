"""ctypes binding of libdiode_inductor (plugin/include/diode_inductor.h).

The decisions are made in C++ (core's Selector, Eigen inference); this module only finds the
library, declares the ABI and turns Python values into the C structs and rows. It imports nothing
from torch.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import json
import os
import threading
from array import array
from itertools import chain
from typing import Optional, Sequence

ABI_VERSION = 13
_LIB_NAME = "libdiode_inductor.so"


class Problem(ctypes.Structure):
    _fields_ = [
        ("op", ctypes.c_char_p),
        ("dtype", ctypes.c_char_p),
        ("batch", ctypes.c_int64),
        ("m", ctypes.c_int64),
        ("n", ctypes.c_int64),
        ("k", ctypes.c_int64),
        ("a_transposed", ctypes.c_int32),
        ("b_transposed", ctypes.c_int32),
    ]


class GemmContext(ctypes.Structure):
    """What Inductor knows of a GEMM lowering that a problem line does not carry (diode_gemm_context)."""

    _fields_ = [("addend_varies_along_m", ctypes.c_int32), ("shared_memory_bytes", ctypes.c_int64)]


class Decision(ctypes.Structure):
    """One decision's outcome (diode_decision); the rule that made it is the library's."""

    _fields_ = [
        ("kind", ctypes.c_int32),
        ("selected", ctypes.c_int32),
        ("deferred", ctypes.c_int32),
        ("kept", ctypes.c_int32),
        ("plain", ctypes.c_int32),
        ("scores_reused", ctypes.c_int32),
        ("margin", ctypes.c_double),
        ("not_selected", ctypes.c_char * 64),
        ("why", ctypes.c_char * 256),
    ]


class NativeError(RuntimeError):
    """The library is missing or refused a call; the message says which and why."""


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def library_candidates() -> list[str]:
    """Where the library is looked for, in order: $TORCH_DIODE_LIBRARY, next to this package
    (pip install / cmake --install), then the build trees of the source checkout this package
    lives in (build*/plugin/)."""
    paths = []
    env = os.environ.get("TORCH_DIODE_LIBRARY")
    if env:
        paths.append(env)
    paths.append(os.path.join(_package_dir(), _LIB_NAME))
    repo = os.path.abspath(os.path.join(_package_dir(), "..", "..", ".."))
    if os.path.isfile(os.path.join(repo, "plugin", "include", "diode_inductor.h")):
        found = glob.glob(os.path.join(repo, "build*", "plugin", _LIB_NAME))
        found.sort(key=lambda p: os.path.getmtime(p), reverse=True)  # the newest build first
        paths.extend(found)
    return paths


_lib = None
_lib_path: Optional[str] = None
_lib_lock = threading.Lock()


def load_library() -> ctypes.CDLL:
    """Loads the library once; raises NativeError naming every place it looked."""
    global _lib, _lib_path
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in library_candidates():
            if not os.path.isfile(path):
                tried.append(f"{path} (absent)")
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append(f"{path} ({e})")
                continue
            _declare(lib)
            if lib.diode_abi_version() != ABI_VERSION:
                tried.append(f"{path} (ABI {lib.diode_abi_version()}, this package needs {ABI_VERSION})")
                continue
            _lib, _lib_path = lib, path
            return lib
        raise NativeError(
            "libdiode_inductor not found: build it (cmake --build build --target diode_inductor) or "
            "pip install plugin/python; looked in: " + "; ".join(tried)
        )


def library_path() -> Optional[str]:
    return _lib_path


def _holding_gil(lib, name: str):
    """`lib`'s function `name` called through PyDLL, which keeps the GIL (see the comment where the
    scoring calls are declared), with the same argument types."""
    held = getattr(ctypes.PyDLL(lib._name), name)
    held.argtypes, held.restype = getattr(lib, name).argtypes, ctypes.c_int
    return held


def _declare(lib: ctypes.CDLL) -> None:
    lib.diode_abi_version.restype = ctypes.c_int
    lib.diode_feature_schema_version.restype = ctypes.c_int
    lib.diode_model_open.argtypes = [ctypes.c_char_p]
    lib.diode_model_open.restype = ctypes.c_void_p
    lib.diode_model_close.argtypes = [ctypes.c_void_p]
    lib.diode_model_manifest.argtypes = [ctypes.c_void_p]
    lib.diode_model_manifest.restype = ctypes.c_char_p
    lib.diode_selector_open.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.diode_selector_open.restype = ctypes.c_void_p
    lib.diode_selector_close.argtypes = [ctypes.c_void_p]
    for name in ("diode_selector_options", "diode_selector_counters"):
        getattr(lib, name).argtypes = [ctypes.c_void_p]
        getattr(lib, name).restype = ctypes.c_void_p  # freed with diode_free
    lib.diode_selector_reset_counters.argtypes = [ctypes.c_void_p]
    lib.diode_selector_reset_counters.restype = None
    lib.diode_decide_gemm.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(Problem),
        ctypes.POINTER(GemmContext),
        ctypes.POINTER(ctypes.c_char_p),
        ctypes.c_size_t,
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.POINTER(Decision),
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    lib.diode_decide_gemm.restype = ctypes.c_int
    # The selector's call keeps the GIL (PyDLL): a CDLL call releases it, and getting it back waits
    # for whichever other Python thread took it meanwhile. Measured on the 2-core VM with one busy
    # Python thread beside it: 150-195 µs a call on average (CDLL) against 98-116 µs (PyDLL),
    # medians 45 µs either way. The call is ~50 µs for 20 candidates, a few ms for EXHAUSTIVE's
    # ~1,400: short enough to hold the GIL through.
    lib.decide_gemm_holding_gil = _holding_gil(lib, "diode_decide_gemm")
    lib.diode_gpu_transfer.argtypes = [
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_double),
        ctypes.c_char_p,
        ctypes.c_size_t,
    ]
    lib.diode_gpu_transfer.restype = ctypes.c_int
    lib.diode_choose_package.argtypes = [
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_int),
    ]
    lib.diode_choose_package.restype = ctypes.c_int
    lib.diode_plain_candidate.argtypes = [
        ctypes.POINTER(ctypes.c_char_p),
        ctypes.POINTER(ctypes.c_char_p),
        ctypes.c_size_t,
    ]
    lib.diode_plain_candidate.restype = ctypes.c_int
    lib.diode_read_problem_lines.argtypes = [ctypes.c_char_p]
    lib.diode_read_problem_lines.restype = ctypes.c_void_p  # freed with diode_free
    lib.diode_vocabulary.restype = ctypes.c_char_p
    lib.diode_model_locations.restype = ctypes.c_void_p  # freed with diode_free
    lib.diode_model_facts.argtypes = [ctypes.c_void_p]
    lib.diode_model_facts.restype = ctypes.c_void_p  # freed with diode_free
    lib.diode_free.argtypes = [ctypes.c_void_p]
    lib.diode_last_error.restype = ctypes.c_char_p
    lib.diode_decide_json.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    lib.diode_decide_json.restype = ctypes.c_void_p  # freed with diode_free
    lib.diode_kernel_candidates.argtypes = [ctypes.c_char_p]
    lib.diode_kernel_candidates.restype = ctypes.c_void_p  # freed with diode_free
    lib.diode_fastest_beyond_portfolio.argtypes = [ctypes.c_char_p]
    lib.diode_fastest_beyond_portfolio.restype = ctypes.c_void_p  # freed with diode_free


_vocabulary: Optional[dict] = None


def vocabulary() -> dict:
    """The names and limits core defines and Python shares (diode_vocabulary in diode_inductor.h): the
    ops, the dtypes with torch's names and sizes, a problem's fields, the candidate key and its row
    kinds, the exclusions and decision kinds, the search spaces, a problem line's limits, the minimum
    torch, the timing methods and the regimes. Loads the library; raises NativeError where it is missing."""
    global _vocabulary
    if _vocabulary is None:
        _vocabulary = json.loads(load_library().diode_vocabulary().decode())
    return _vocabulary


@functools.lru_cache(maxsize=None)
def dtype_names() -> dict:
    """torch's dtype as str() writes it ("torch.bfloat16") -> the name core gives it ("bf16")."""
    return {"torch." + d["torch"]: d["name"] for d in vocabulary()["dtypes"]}


@functools.lru_cache(maxsize=None)
def _candidate_fields() -> tuple[tuple, tuple]:
    """(the candidate key's integer parameters, its flags): its fields after kind and name, read
    once from the vocabulary."""
    key, flags = vocabulary()["candidate_key"], vocabulary()["candidate_flags"]
    return tuple(key[2 : len(key) - len(flags)]), tuple(flags)


def candidate_key(c: dict) -> tuple:
    """The candidate key of a problem-JSON candidate: the library's packed row (diode_vocabulary's
    candidate_key: kind, name, the kernel's integer parameters, then its flags, -1 when not given).
    A Triton candidate without GROUP_M has Inductor's default; one missing another parameter is
    "other" under its template's name, as the selector passes what it cannot read (the library says
    which candidates a model describes)."""
    params, flags = _candidate_fields()
    blank = (0,) * len(params) + (-1,) * len(flags)
    if c["kind"] != "triton":  # aten, or a kind the library names in its error
        return (c["kind"], c.get("name", "")) + blank
    group_m = vocabulary()["default_group_m"]
    try:
        return (
            ("triton", c["template"])
            + tuple(int(c.get(f, group_m) if f == "GROUP_M" else c[f]) for f in params)
            + tuple(-1 if c.get(f) is None else int(bool(c[f])) for f in flags)
        )
    except KeyError:
        return ("other", str(c.get("template", ""))) + blank


def candidate_dict(key: tuple) -> dict:
    """The problem-JSON form of a candidate key (the inverse of candidate_key)."""
    if key[0] != "triton":
        return {"kind": key[0], "name": key[1]}
    params, flags = _candidate_fields()
    c = {"kind": "triton", "template": key[1], **dict(zip(params, key[2:]))}
    c.update((f, bool(v)) for f, v in zip(flags, key[2 + len(params) :]) if v >= 0)
    return c


def model_locations() -> list[tuple[str, str]]:
    """(source, path) of each place a user's packages are looked for, in order, as core decides
    them (diode_model_locations): $TORCH_DIODE_MODEL_PATH's entries, then the user folder."""
    lib = load_library()
    return [(loc["source"], loc["path"]) for loc in _taken_json(lib, lib.diode_model_locations())]


TRANSFER_KINDS = ("same", "similar", "refused")


def gpu_transfer(package_gpu: str, device_gpu: str, device_arch: str = "", device_sms: int = 0) -> dict:
    """Whether a package made on `package_gpu` may serve `device_gpu` (core's rule, gputable.h):
    {"kind": "same" | "similar" | "refused", "distance": float, "why": one line}."""
    lib = load_library()
    distance = ctypes.c_double(0.0)
    why = ctypes.create_string_buffer(512)
    rc = lib.diode_gpu_transfer(
        package_gpu.encode(),
        device_gpu.encode(),
        (device_arch or "").encode(),
        int(device_sms or 0),
        ctypes.byref(distance),
        why,
        len(why),
    )
    if rc < 0:
        raise NativeError(_last_error(lib))
    return {"kind": TRANSFER_KINDS[rc], "distance": distance.value, "why": why.value.decode()}


def choose_package(packages: Sequence[dict], device: dict, regime: str) -> tuple[Optional[int], bool]:
    """(index into `packages`, transferred) of the package the plugin loads on `device` ({"gpu",
    "cc", "sm_count"}), core's rule (choosePackage, diode_choose_package); (None, False) when none
    may serve it. Each package: {"gpu", "created_at", "timing_method", "source_rank"}."""
    lib = load_library()
    # The fields as given (core checks each and names a bad one); a package without a GPU record
    # is one that matches no GPU, not an error.
    rows = [
        dict(
            {k: p[k] for k in ("created_at", "timing_method", "source_rank") if p.get(k) is not None},
            gpu=p.get("gpu") or "",
        )
        for p in packages
    ]
    transferred = ctypes.c_int(0)
    index = lib.diode_choose_package(
        json.dumps(rows).encode(),
        str(device.get("gpu", "")).encode(),
        str(device.get("cc", "") or "").encode(),
        int(device.get("sm_count", 0) or 0),
        regime.encode(),
        ctypes.byref(transferred),
    )
    if index < -1:
        raise NativeError(_last_error(lib))
    return (None, False) if index < 0 else (index, bool(transferred.value))


def plain_candidate(kinds: Sequence[str], names: Sequence[Optional[str]]) -> Optional[int]:
    """Index of plain torch.compile's kernel among candidates of `kinds` and `names` when nothing is
    predicted (the selection policy's rule, diode_plain_candidate), None without an ATen candidate."""
    lib = load_library()
    n = len(kinds)
    if len(names) != n:
        raise NativeError(f"plain_candidate: {n} kinds and {len(names)} names")
    k = (ctypes.c_char_p * n)(*[x.encode() for x in kinds])
    m = (ctypes.c_char_p * n)(*[(x or "").encode() for x in names])
    i = lib.diode_plain_candidate(k, m, n)
    if i < -1:
        raise NativeError(_last_error(lib))
    return None if i == -1 else i


def _last_error(lib) -> str:
    return lib.diode_last_error().decode("utf-8", "replace")


def _taken_json(lib, ptr):
    """The JSON text a call returned malloc'ed (NULL: NativeError with the library's reason),
    parsed, and the text released with diode_free."""
    if not ptr:
        raise NativeError(_last_error(lib))
    try:
        return json.loads(ctypes.string_at(ptr).decode())
    finally:
        lib.diode_free(ptr)


def kernel_candidates(shape: dict, near: Optional[dict] = None, extra: Sequence[dict] = (), grid: bool = False) -> list:
    """The configurations the kernel sweep measures on a pointwise or reduction kernel
    (diode_kernel_candidates): what the kernel-config decision chooses among (its portfolio, then the
    configurations of `extra` its grid holds); with `near` (a config), that config's neighbours in
    the kernel's grid; with `grid`, the whole grid (every configuration a decision may give it)."""
    lib = load_library()
    request: dict = {"shape": shape}
    if near is not None:
        request["near"] = near
    if extra:
        request["extra"] = list(extra)
    if grid:
        request["grid"] = True  # the library refuses more than one of these
    return _taken_json(lib, lib.diode_kernel_candidates(json.dumps(request).encode()))["configs"]


def fastest_beyond_portfolio(paths: Sequence[str]) -> list:
    """The distinct fastest configuration of each measured kernel of these kernel line files beyond its
    portfolio (diode_fastest_beyond_portfolio): what a second sweep measures on every kernel."""
    lib = load_library()
    request = json.dumps({"lines": list(paths)}).encode()
    return _taken_json(lib, lib.diode_fastest_beyond_portfolio(request))["configs"]


def _cstr(text: str, cache: dict) -> bytes:
    b = cache.get(text)
    if b is None:
        b = cache[text] = text.encode()
    return b


def read_problems(path: str) -> list[dict]:
    """The problem JSON lines of a file, read by core's reader within its limits (diode_read_problem_lines):
    each problem with every field of its line (B and the layouts as core defaults them). NativeError
    names the file, the line and the field at fault."""
    lib = load_library()
    return _taken_json(lib, lib.diode_read_problem_lines(os.fsencode(path)))


class _Owned:
    """An object of the library this process owns (`_handle`), released by `_closer` once: by
    close() or when collected."""

    _closer = ""

    def close(self) -> None:
        if getattr(self, "_handle", None):
            getattr(self._lib, self._closer)(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Model(_Owned):
    """An open .diode package."""

    _closer = "diode_model_close"

    def __init__(self, path: str):
        self._lib = load_library()
        self.path = os.path.abspath(path)
        handle = self._lib.diode_model_open(self.path.encode())
        if not handle:
            raise NativeError(_last_error(self._lib))
        self._handle = handle
        self.manifest = json.loads(self._lib.diode_model_manifest(handle).decode())

    @property
    def hardware(self) -> dict:
        return self.manifest.get("hardware", {})

    def facts(self) -> dict:
        """What the plugin makes of the package (diode_model_facts): its timing method (with the
        default for packages older than timing methods), how well it fits each regime
        ({"warm": rank, "cold": rank}, lower is better) and why it is refused ("" when not)."""
        return _taken_json(self._lib, self._lib.diode_model_facts(self._handle))


class Selector(_Owned):
    """The library's decisions with one package (diode_selector): the rule `diode eval` scores.
    `options` as diode_selector_open takes them (None values: the package's). Safe from several
    threads."""

    _closer = "diode_selector_close"

    def __init__(self, model: Model, options: Optional[dict] = None):
        self._lib = model._lib
        self.model = model  # the selector reads it: it lives as long
        text = json.dumps(options or {}).encode()
        handle = self._lib.diode_selector_open(model._handle, text)
        if not handle:
            raise NativeError(_last_error(self._lib))
        self._handle = handle
        self._names: dict = {}
        self._name_index: dict = {}
        self._name_table = (ctypes.c_char_p * 0)()
        self._problems: dict = {}
        self._rows: dict = {}  # key -> its packed row
        self._kinds = {k: i for i, k in enumerate(vocabulary()["row_kinds"])}
        self._width = len(vocabulary()["candidate_key"])

    def options(self) -> dict:
        """The options in use, the margin and regime resolved (diode_selector_options)."""
        return _taken_json(self._lib, self._lib.diode_selector_options(self._handle))

    def counters(self) -> dict:
        """Per decision kind, what the decisions came to (diode_selector_counters)."""
        return _taken_json(self._lib, self._lib.diode_selector_counters(self._handle))

    def reset_counters(self) -> None:
        self._lib.diode_selector_reset_counters(self._handle)

    def decide_json(self, kind: str, request: dict) -> dict:
        """A decision beside the GEMM kernel (diode_decide_json): "kernel_config" for {"shape": ...},
        "small_m_form" for {"site": ...}; counted under its kind."""
        return _taken_json(
            self._lib, self._lib.diode_decide_json(self._handle, kind.encode(), json.dumps(request).encode())
        )

    def _name(self, name: str) -> int:
        index = self._name_index.get(name)
        if index is None:
            index = self._name_index[name] = len(self._name_index)
            names = sorted(self._name_index, key=self._name_index.__getitem__)
            self._name_table = (ctypes.c_char_p * len(names))(*(n.encode() for n in names))
        return index

    def _row(self, key: tuple) -> tuple:
        """The packed row of a candidate key: its kind's code, its name's index, its parameters."""
        if len(key) != self._width:
            raise NativeError(f"candidate key {key!r} has {len(key)} fields; expected {vocabulary()['candidate_key']}")
        row = self._rows[key] = (self._kinds.get(key[0], -1), self._name(key[1]), *key[2:])
        return row

    def _problem(self, problem: tuple) -> Problem:
        p = self._problems.get(problem)
        if p is None:
            if len(self._problems) > 4096:  # a long-lived process compiling many shapes
                self._problems.clear()
            names = self._names
            p = self._problems[problem] = Problem(_cstr(problem[0], names), _cstr(problem[1], names), *problem[2:])
        return p

    def decide_gemm(self, problem: tuple, keys: Sequence[tuple], addend_varies_along_m=False, shared_memory=0):
        """The GEMM kernel decision (diode_decide_gemm): `problem` is (op, dtype, B, M, N, K, a_t, b_t)
        with op and dtype as Inductor names them, each key a candidate key (kind "aten", "triton" or
        "other", name, the parameters, the flags; -1 for a flag not given). Returns (Decision,
        kept indices, predicted ms per key with NaN where none, exclusion name per key)."""
        rows = self._rows
        try:
            packed = array("i", chain.from_iterable([rows[key] for key in keys]))
        except KeyError:  # a key not seen before
            packed = array("i", chain.from_iterable([rows.get(key) or self._row(key) for key in keys]))
        n = len(keys)
        decision = Decision()
        kept, predicted, excluded = array("i", bytes(4 * n)), array("d", bytes(8 * n)), array("i", bytes(4 * n))
        context = GemmContext(int(bool(addend_varies_along_m)), int(shared_memory or 0))
        rc = self._lib.decide_gemm_holding_gil(
            self._handle,
            ctypes.byref(self._problem(problem)),
            ctypes.byref(context),
            self._name_table,
            len(self._name_index),
            packed.buffer_info()[0],
            n,
            ctypes.byref(decision),
            kept.buffer_info()[0],
            predicted.buffer_info()[0],
            excluded.buffer_info()[0],
        )
        if rc != 0:
            raise NativeError(_last_error(self._lib))
        names = vocabulary()["exclusions"]
        return decision, kept[: decision.kept].tolist(), predicted.tolist(), [names[e] for e in excluded]
