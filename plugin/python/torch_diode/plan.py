"""Sweep plan expansion, the Python twin of core/sweepplan.cpp.

The worker runs alone on GPU servers that have no diode binary, so it has to expand plans
itself. Both implementations follow docs/PLANS.md and a CTest test checks that they produce
the same problems, in the same order, for every plan under resources/plans/.
This module must not import torch.
"""

import json
import math
import os

OPS = ("mm", "addmm", "bmm")
DTYPES = ("bf16", "fp16", "fp32")
SEARCH_SPACES = ("DEFAULT", "EXHAUSTIVE")
MASK64 = (1 << 64) - 1


class PlanError(ValueError):
    pass


class SplitMix64:
    """The generator both implementations share, so a seed means the same sizes in C++ and Python."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * (1.0 / 9007199254740992.0)


def log_uniform(rng, lo, hi, multiple_of):
    u = rng.uniform()
    v = int(math.floor(math.exp(math.log(lo) + u * (math.log(hi + 1) - math.log(lo)))))
    v = min(max(v, lo), hi)
    if multiple_of > 1:
        v = max(multiple_of, (v // multiple_of) * multiple_of)
    return v


def _sample(items, spec, where):
    """Keep `count` items chosen by a seeded partial Fisher-Yates, in their original order."""
    if not isinstance(spec, dict):
        raise PlanError(f"{where}: field 'sample' must be an object with 'count' and 'seed'")
    count, seed = spec.get("count"), spec.get("seed", 0)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise PlanError(f"{where}: field 'sample.count' must be an integer >= 1")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise PlanError(f"{where}: field 'sample.seed' must be an integer >= 0")
    if count >= len(items):
        return items
    rng = SplitMix64(seed)
    idx = list(range(len(items)))
    for i in range(count):
        j = i + rng.next() % (len(idx) - i)
        idx[i], idx[j] = idx[j], idx[i]
    return [items[i] for i in sorted(idx[:count])]


def shuffle(items, seed):
    rng = SplitMix64(seed)
    for i in range(len(items) - 1, 0, -1):
        j = rng.next() % (i + 1)
        items[i], items[j] = items[j], items[i]
    return items


def _where(index, entry):
    name = entry.get("name") if isinstance(entry, dict) else None
    return f"entries[{index}]" + (f" ({name})" if name else "")


def _size_list(value, field, where, allow_zero=False):
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value:
        raise PlanError(f"{where}: field '{field}' must be a positive integer or a non-empty list of them")
    for v in value:
        if not isinstance(v, int) or isinstance(v, bool):
            raise PlanError(f"{where}: field '{field}' has {json.dumps(v)}, which is not an integer")
        if v < 1:
            raise PlanError(f"{where}: field '{field}' has {v}; sizes must be at least 1")
    return value


def _choice_list(value, field, allowed, where):
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise PlanError(f"{where}: field '{field}' must be a non-empty list")
    for v in value:
        if v not in allowed:
            raise PlanError(f"{where}: field '{field}' has unknown value {json.dumps(v)}; "
                            f"expected one of {', '.join(allowed)}")
    return value


def _bool_list(value, field, where):
    if isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, bool) for v in value):
        raise PlanError(f"{where}: field '{field}' must be true, false or a list of them")
    return value


def _sizes(entry, field, where, default=None):
    """A size axis: a list, an integer, or {"log_uniform": {min, max, count, seed, multiple_of}}."""
    value = entry.get(field, default)
    if value is None:
        raise PlanError(f"{where}: field '{field}' is missing")
    if isinstance(value, dict):
        spec = value.get("log_uniform")
        if not isinstance(spec, dict):
            raise PlanError(f"{where}: field '{field}' is an object without 'log_uniform'")
        lo, hi = spec.get("min"), spec.get("max")
        count, seed = spec.get("count"), spec.get("seed", 0)
        mult = spec.get("multiple_of", 1)
        for k, v in (("min", lo), ("max", hi), ("count", count), ("multiple_of", mult)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise PlanError(f"{where}: field '{field}.log_uniform.{k}' must be an integer >= 1")
        if hi < lo:
            raise PlanError(f"{where}: field '{field}.log_uniform' has max {hi} < min {lo}")
        rng = SplitMix64(seed)
        return [log_uniform(rng, lo, hi, mult) for _ in range(count)]
    return _size_list(value, field, where)


def _problem(op, dtype, b, m, n, k, at, bt):
    return {"op": op, "dtype": dtype, "B": b if op == "bmm" else 1, "M": m, "N": n, "K": k,
            "a_transposed": at, "b_transposed": bt}


def problem_key(p):
    return (p["op"], p["dtype"], p["B"], p["M"], p["N"], p["K"], p["a_transposed"], p["b_transposed"])


def _explicit(entry, where):
    out = []
    for j, p in enumerate(entry["problems"]):
        w = f"{where} problems[{j}]"
        if not isinstance(p, dict):
            raise PlanError(f"{w}: must be an object")
        op = _choice_list(p.get("op"), "op", OPS, w)[0]
        dtype = _choice_list(p.get("dtype"), "dtype", DTYPES, w)[0]
        sizes = {}
        for f in ("B", "M", "N", "K"):
            if f == "B" and "B" not in p:
                sizes[f] = 1
                continue
            v = p.get(f)
            if v is None:
                raise PlanError(f"{w}: field '{f}' is missing")
            sizes[f] = _size_list(v, f, w)[0] if not isinstance(v, list) else None
            if sizes[f] is None:
                raise PlanError(f"{w}: field '{f}' must be one integer")
        at = _bool_list(p.get("a_transposed", False), "a_transposed", w)[0]
        bt = _bool_list(p.get("b_transposed", False), "b_transposed", w)[0]
        out.append(_problem(op, dtype, sizes["B"], sizes["M"], sizes["N"], sizes["K"], at, bt))
    return out


def _load_shape_set(path, base_dir, where):
    full = path if os.path.isabs(path) else os.path.join(base_dir, path)
    try:
        with open(full) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise PlanError(f"{where}: cannot read shape set '{path}': {e}")
    layers = doc.get("layers") if isinstance(doc, dict) else None
    if not isinstance(layers, list) or not layers:
        raise PlanError(f"{where}: shape set '{path}' has no 'layers' list")
    nk = []
    for i, layer in enumerate(layers):
        w = f"{where} shape set '{path}' layers[{i}]"
        n = _size_list(layer.get("N"), "N", w)[0] if isinstance(layer, dict) else None
        k = _size_list(layer.get("K"), "K", w)[0] if isinstance(layer, dict) else None
        if n is None or k is None:
            raise PlanError(f"{w}: needs N and K")
        nk.append((n, k))
    return nk


def _generated(entry, where, base_dir):
    ops = _choice_list(entry.get("ops"), "ops", OPS, where)
    dtypes = _choice_list(entry.get("dtypes"), "dtypes", DTYPES, where)
    a_t = _bool_list(entry.get("a_transposed", [False]), "a_transposed", where)
    b_t = _bool_list(entry.get("b_transposed", [False]), "b_transposed", where)
    batches = _sizes(entry, "B", where, default=[1])
    ms = _sizes(entry, "M", where)
    if "shape_set" in entry:
        if not isinstance(entry["shape_set"], str):
            raise PlanError(f"{where}: field 'shape_set' must be a path")
        nks = _load_shape_set(entry["shape_set"], base_dir, where)
    else:
        ns = _sizes(entry, "N", where)
        ks = _sizes(entry, "K", where)
        if entry.get("zip_sizes", False):
            if not (len(ms) == len(ns) == len(ks)):
                raise PlanError(f"{where}: 'zip_sizes' needs M, N and K of the same length")
            out = []
            for op in ops:
                for dtype in dtypes:
                    for b in batches if op == "bmm" else [1]:
                        for m, n, k in zip(ms, ns, ks):
                            for at in a_t:
                                for bt in b_t:
                                    out.append(_problem(op, dtype, b, m, n, k, at, bt))
            return out
        nks = [(n, k) for n in ns for k in ks]
    out = []
    for op in ops:
        for dtype in dtypes:
            for b in batches if op == "bmm" else [1]:
                for m in ms:
                    for n, k in nks:
                        for at in a_t:
                            for bt in b_t:
                                out.append(_problem(op, dtype, b, m, n, k, at, bt))
    return out


def expand(plan, base_dir="."):
    """Validate a plan and return (settings, problems). Raises PlanError naming the entry and field."""
    if not isinstance(plan, dict):
        raise PlanError("plan: must be a JSON object")
    version = plan.get("version", 1)
    if version != 1:
        raise PlanError(f"plan: field 'version' is {version}; this build reads version 1")
    space = plan.get("search_space", "DEFAULT")
    if space not in SEARCH_SPACES:
        raise PlanError(f"plan: field 'search_space' has unknown value {json.dumps(space)}; "
                        f"expected one of {', '.join(SEARCH_SPACES)}")
    entries = plan.get("entries")
    if not isinstance(entries, list) or not entries:
        raise PlanError("plan: field 'entries' must be a non-empty list")
    seen = set()
    problems = []
    for i, entry in enumerate(entries):
        where = _where(i, entry)
        if not isinstance(entry, dict):
            raise PlanError(f"{where}: must be an object")
        batch = _explicit(entry, where) if "problems" in entry else _generated(entry, where, base_dir)
        if "sample" in entry:
            batch = _sample(batch, entry["sample"], where)
        for p in batch:
            key = problem_key(p)
            if key not in seen:
                seen.add(key)
                problems.append(p)
    seed = plan.get("shuffle_seed")
    if seed is not None:
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise PlanError("plan: field 'shuffle_seed' must be an integer >= 0")
        shuffle(problems, seed)
    settings = {"name": plan.get("name", ""), "search_space": space,
                "timeout_s": plan.get("timeout_s", 600)}
    return settings, problems


def load(path):
    with open(path) as f:
        try:
            plan = json.load(f)
        except ValueError as e:
            raise PlanError(f"{path}: not valid JSON: {e}")
    return expand(plan, os.path.dirname(os.path.abspath(path)))


if __name__ == "__main__":
    import sys
    try:
        _, probs = load(sys.argv[1])
    except PlanError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    for p in probs:
        print(json.dumps(p, separators=(",", ":")))
