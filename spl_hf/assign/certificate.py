"""Optimality certificates for tenet assignments and their solver-free verification.

A certificate records the parameters that define the integer problem (capacity, threshold, scale,
seed, tie range R, M, B), the kept and dropped tenets, the objective and node potentials. The verifier
rebuilds the network from the score table with plain numpy, derives the flow from the assignment and
checks, without any solver:

- every assigned pair exists in the scores with that tenet, prompt and score, is eligible and is the
  best pair of its prompt for that tenet; no pair and no prompt appears twice;
- every kept tenet holds exactly `capacity` pairs; every other input tenet is listed as dropped, and
  tenets dropped for a small pool do have fewer distinct eligible prompts than `capacity`;
- M and B have the values that make the integer optimum score-optimal and flow-value-first;
- every residual arc (return arc included) has a non-negative reduced cost under the potentials,
  which proves the flow is a maximum flow of minimum cost over the kept tenets;
- the recorded objective equals Σ|score| of the assignment.

A tenet dropped as "unsaturated" is checked for consistency (its solve exists and records the drop,
its flow there was below capacity), but that flow itself is not re-proved: that would need the
flows and potentials of every intermediate solve, and only the final solve's are stored.
"""

from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass, field, fields, is_dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.assign.network import (
    CostRangeError,
    best_arcs,
    build_network,
    cost_bounds,
    eligible_pools,
)
from spl_hf.assign.residual import reduced_costs
from spl_hf.assign.scores import ScoreTable, encode_scores
from spl_hf.errors import SplHfError

CERTIFICATE_FORMAT = "spl_hf.assign.certificate/v1"
_POTENTIAL_LIMIT = 2**60
_SHOWN = 5


@dataclass(frozen=True)
class DroppedTenet:
    tenet: str
    reason: str  # "pool_below_capacity" or "unsaturated"
    pool: int  # distinct eligible prompts of the tenet
    flow: int | None = None  # pairs it received in the solve that dropped it
    solve: int | None = None  # index of that solve


@dataclass(frozen=True)
class SolveRecord:
    index: int
    tenets: int
    flow_value: int
    unsaturated: int
    dropped: tuple[str, ...]


@dataclass(frozen=True)
class Certificate:
    capacity: int
    threshold: float
    scale: int
    seed: int
    tie_range: int
    big_m: int
    return_cost: int
    strategy: str
    solver: str
    kept_tenets: tuple[str, ...]
    dropped_tenets: tuple[DroppedTenet, ...]
    assigned: int
    objective: float  # Σ|score| over the assignment (math.fsum, exactly rounded)
    objective_levels: int  # Σ round(|score|·scale)
    potential_source: int
    potential_sink: int
    tenet_potentials: tuple[int, ...]  # aligned with kept_tenets
    prompt_ids: tuple = ()  # every prompt node of the final network
    prompt_potentials: tuple[int, ...] = ()
    solves: tuple[SolveRecord, ...] = ()
    format: str = field(default=CERTIFICATE_FORMAT)

    def to_dict(self) -> dict:
        # What dataclasses.asdict gives, field by field: asdict deep-copies the prompt lists (one per
        # prompt of the network, hundreds of thousands) element by element, which takes seconds.
        d = {f.name: _asdict_value(getattr(self, f.name)) for f in fields(self)}
        d["kept_tenets"] = list(self.kept_tenets)
        d["prompt_ids"] = list(self.prompt_ids)
        return {"format": d.pop("format"), **d}

    @classmethod
    def from_dict(cls, d: dict) -> Certificate:
        d = dict(d)
        if d.get("format") != CERTIFICATE_FORMAT:
            raise SplHfError(f"not a {CERTIFICATE_FORMAT} certificate (format={d.get('format')!r})")
        d["dropped_tenets"] = tuple(DroppedTenet(**x) for x in d["dropped_tenets"])
        d["solves"] = tuple(SolveRecord(**{**x, "dropped": tuple(x["dropped"])}) for x in d["solves"])
        for key in ("kept_tenets", "tenet_potentials", "prompt_ids", "prompt_potentials"):
            d[key] = tuple(d[key])
        return cls(**d)


_ATOMIC = (str, int, float, bool, type(None))


def _asdict_value(value: object) -> object:
    """``dataclasses.asdict``'s conversion of one field value (its deep copy keeps atomic values)."""
    if type(value) in _ATOMIC:
        return value
    if type(value) in (tuple, list):
        return type(value)(_asdict_value(v) for v in value)  # type: ignore[call-arg]
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return copy.deepcopy(value)


@dataclass(frozen=True)
class CertificateCheck:
    ok: bool
    failures: tuple[str, ...]
    residual_arcs: int = 0
    min_reduced_cost: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _listing(values: list) -> str:
    more = f" … and {len(values) - _SHOWN} more" if len(values) > _SHOWN else ""
    return ", ".join(repr(v) for v in values[:_SHOWN]) + more


def _codes(values: pa.Array | pa.ChunkedArray, value_set: pa.Array) -> np.ndarray:
    """Index of each value in value_set, −1 where absent or not castable."""
    try:
        values = pc.cast(values, value_set.type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return np.full(len(values), -1, np.int64)
    idx = pc.index_in(values, value_set=value_set)
    return pc.fill_null(idx, -1).to_numpy(zero_copy_only=False).astype(np.int64)


def verify_assignment(
    scores: pa.Table | ScoreTable, assignment: pa.Table, cert: Certificate
) -> CertificateCheck:
    """Check `assignment` against `cert` using only the score table (see module docstring).

    The checks run in the order below; a step whose failure makes the later ones meaningless stops there.

    >>> from spl_hf.assign import AssignConfig, assign_tenets
    >>> scores = pa.table({"pair_id": ["p1", "p2"], "prompt_id": ["q1", "q2"],
    ...                    "tenet": ["kind", "kind"], "score": [0.9, -0.6]})
    >>> result = assign_tenets(scores, AssignConfig(capacity=1, threshold=0.5))
    >>> verify_assignment(scores, result.assignment, result.certificate).ok
    True
    >>> tampered = result.assignment.set_column(3, "score", pa.array([0.5]))
    >>> verify_assignment(scores, tampered, result.certificate).failures
    ('assignment rows 0 have a score that differs from the scores',)
    """
    st = scores if isinstance(scores, ScoreTable) else encode_scores(scores)
    failures: list[str] = []

    def done(**kw) -> CertificateCheck:
        return CertificateCheck(not failures, tuple(failures), **kw)

    if cert.format != CERTIFICATE_FORMAT:
        failures.append(f"unknown certificate format {cert.format!r}")
        return done()
    tenet_index = {name: i for i, name in enumerate(st.tenets)}
    failures += _check_tenet_lists(st, cert, tenet_index)
    if failures:
        return done()
    failures += _check_drops(st, cert, tenet_index)
    kept_codes = np.array([tenet_index[t] for t in cert.kept_tenets], np.int32)
    net = _network(st, cert, kept_codes, failures)
    if net is None:
        return done()
    located = _locate_rows(st, assignment, failures)
    if located is None:
        return done()
    a_pair, a_tenet, rows = located
    failures += _check_rows(st, assignment, cert, kept_codes, a_pair, a_tenet, rows)
    if failures:
        return done()
    arc_flow = _arc_flow(net, st, a_pair, a_tenet, rows, failures)
    if arc_flow is None:
        return done()
    pi = _potentials(net, st, cert, failures)
    if pi is None:
        return done()
    tail, head, red = reduced_costs(net, arc_flow, pi)
    failures += _check_optimality(st, cert, rows, tail, head, red)
    return done(residual_arcs=len(red), min_reduced_cost=int(red.min()) if len(red) else None)


def _check_tenet_lists(st: ScoreTable, cert: Certificate, tenet_index: dict[str, int]) -> list[str]:
    """Every input tenet kept or dropped, once; kept ones distinct and sorted."""
    failures = []
    dropped_names = [d.tenet for d in cert.dropped_tenets]
    unknown = [t for t in (*cert.kept_tenets, *dropped_names) if t not in tenet_index]
    if unknown:
        failures.append(f"tenets not in the scores: {_listing(unknown)}")
    both = sorted(set(cert.kept_tenets) & set(dropped_names))
    if both:
        failures.append(f"tenets both kept and dropped: {_listing(both)}")
    if len(set(cert.kept_tenets)) != len(cert.kept_tenets) or list(cert.kept_tenets) != sorted(
        cert.kept_tenets
    ):
        failures.append("kept_tenets must be distinct and sorted")
    unaccounted = sorted(set(st.tenets) - set(cert.kept_tenets) - set(dropped_names))
    if unaccounted:
        failures.append(f"input tenets neither kept nor dropped: {_listing(unaccounted)}")
    return failures


def _check_drops(st: ScoreTable, cert: Certificate, tenet_index: dict[str, int]) -> list[str]:
    """Each dropped tenet's pool and reason, and the solves' record of the unsaturated drops."""
    failures = []
    pools = eligible_pools(st, cert.threshold)
    for d in cert.dropped_tenets:
        pool = int(pools[tenet_index[d.tenet]])
        if d.pool != pool:
            failures.append(f"dropped tenet {d.tenet!r}: recorded pool {d.pool} but the scores give {pool}")
        if d.reason == "pool_below_capacity" and pool >= cert.capacity:
            failures.append(f"dropped tenet {d.tenet!r}: pool {pool} is not below capacity {cert.capacity}")
        if d.reason not in ("pool_below_capacity", "unsaturated"):
            failures.append(f"dropped tenet {d.tenet!r}: unknown reason {d.reason!r}")
        if d.reason == "unsaturated":
            failures += _check_unsaturated(d, cert)
    recorded = {(t, s.index) for s in cert.solves for t in s.dropped}
    listed = {(d.tenet, d.solve) for d in cert.dropped_tenets if d.reason == "unsaturated"}
    if recorded != listed:
        failures.append(
            f"solves record unsaturated drops {_listing(sorted(recorded - listed))} not listed as dropped, "
            f"or list drops no solve records: {_listing(sorted(listed - recorded))}"
        )
    return failures


def _check_unsaturated(d: DroppedTenet, cert: Certificate) -> list[str]:
    """The drop must be the one recorded by that solve, with a flow short of capacity."""
    failures = []
    if d.solve is None or not 0 <= d.solve < len(cert.solves):
        failures.append(f"dropped tenet {d.tenet!r}: no recorded solve {d.solve!r}")
    elif d.tenet not in cert.solves[d.solve].dropped:
        failures.append(f"dropped tenet {d.tenet!r}: solve {d.solve} does not record dropping it")
    if d.flow is None or not 0 <= d.flow < cert.capacity:
        failures.append(f"dropped tenet {d.tenet!r}: flow {d.flow!r} is not below capacity {cert.capacity}")
    return failures


def _network(st: ScoreTable, cert: Certificate, kept_codes: np.ndarray, failures: list[str]):
    """The flow network the certificate's parameters define; None (with a failure) when they cannot."""
    bounds = cost_bounds(len(cert.kept_tenets), cert.scale, cert.tie_range)
    if (cert.big_m, cert.return_cost) != (bounds.big_m, bounds.return_cost):
        failures.append(
            f"big_m/return_cost {cert.big_m}/{cert.return_cost} differ from 2·T·R+1 / T·max_gain+1 = "
            f"{bounds.big_m}/{bounds.return_cost}"
        )
        return None
    try:
        if cert.scale * cert.tie_range >= 2**61:
            raise CostRangeError(f"scale × tie_range = {cert.scale * cert.tie_range} is out of range")
        arcs = best_arcs(st, cert.threshold, cert.scale, cert.seed, cert.tie_range)
        return build_network(arcs, kept_codes, cert.capacity, cert.scale, cert.tie_range)
    except CostRangeError as exc:
        failures.append(str(exc))
        return None


def _locate_rows(
    st: ScoreTable, assignment: pa.Table, failures: list[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Each assignment row's pair code, tenet code and score row; None (with a failure) when impossible."""
    missing = [c for c in ("pair_id", "prompt_id", "tenet", "score") if c not in assignment.column_names]
    if missing:
        failures.append(f"assignment lacks column(s) {missing}")
        return None
    a_pair = _codes(assignment.column("pair_id"), st.pair_ids)
    a_tenet = _codes(assignment.column("tenet"), pa.array(st.tenets, pa.string()))
    bad = np.flatnonzero((a_pair < 0) | (a_tenet < 0))
    if len(bad):
        failures.append(
            f"assignment rows {_listing(bad.tolist())} name a pair_id/tenet absent from the scores"
        )
        return None
    repeated = np.flatnonzero(np.bincount(a_pair, minlength=len(st.pair_ids))[a_pair] > 1).tolist()
    if repeated:
        failures.append(f"assignment rows {_listing(repeated)} repeat a pair_id")
        return None
    # Score row of each assigned (pair, tenet), by direct indexing rather than a sort of all rows.
    tenet_of_pair = np.full(len(st.pair_ids), -1, np.int64)
    tenet_of_pair[a_pair] = a_tenet
    hits = np.flatnonzero(tenet_of_pair[st.pair] == st.tenet)
    row_of_pair = np.full(len(st.pair_ids), -1, np.int64)
    row_of_pair[st.pair[hits]] = hits
    rows = row_of_pair[a_pair]
    if (rows < 0).any():
        bad = np.flatnonzero(rows < 0).tolist()
        failures.append(f"assignment rows {_listing(bad)} pair a pair with a tenet it was not scored on")
        return None
    return a_pair, a_tenet, rows


def _check_rows(
    st: ScoreTable,
    assignment: pa.Table,
    cert: Certificate,
    kept_codes: np.ndarray,
    a_pair: np.ndarray,
    a_tenet: np.ndarray,
    rows: np.ndarray,
) -> list[str]:
    """Prompt, score, eligibility and tenet of each row; prompts once; capacity per kept tenet."""
    failures = []
    a_prompt = _codes(assignment.column("prompt_id"), st.prompt_ids)
    wrong_prompt = np.flatnonzero(a_prompt != st.prompt[rows]).tolist()
    if wrong_prompt:
        failures.append(
            f"assignment rows {_listing(wrong_prompt)} have a prompt_id that differs from the scores"
        )
    a_score = pc.cast(assignment.column("score"), pa.float64()).to_numpy(zero_copy_only=False)
    wrong_score = np.flatnonzero(~(a_score == st.score[rows])).tolist()
    if wrong_score:
        failures.append(f"assignment rows {_listing(wrong_score)} have a score that differs from the scores")
    ineligible = np.flatnonzero(np.abs(st.score[rows]) < cert.threshold).tolist()
    if ineligible:
        failures.append(f"assignment rows {_listing(ineligible)} have |score| below the threshold")
    kept_mask = np.zeros(len(st.tenets), bool)
    kept_mask[kept_codes] = True
    not_kept = np.flatnonzero(~kept_mask[a_tenet]).tolist()
    if not_kept:
        failures.append(f"assignment rows {_listing(not_kept)} use a tenet that is not kept")
    prompt_rows = st.prompt[rows].astype(np.int64)
    rep = np.flatnonzero(np.bincount(prompt_rows, minlength=len(st.prompt_ids))[prompt_rows] > 1).tolist()
    if rep:
        failures.append(f"assignment rows {_listing(rep)} repeat a prompt_id")
    counts = np.bincount(a_tenet, minlength=len(st.tenets))[kept_codes]
    off = [f"{t}: {c}" for t, c in zip(cert.kept_tenets, counts.tolist(), strict=True) if c != cert.capacity]
    if off:
        failures.append(f"kept tenets without exactly {cert.capacity} pairs: {_listing(off)}")
    if assignment.num_rows != cert.assigned:
        failures.append(
            f"certificate records {cert.assigned} assigned pairs, the assignment has {assignment.num_rows}"
        )
    return failures


def _arc_flow(net, st: ScoreTable, a_pair, a_tenet, rows, failures: list[str]) -> np.ndarray | None:
    """Flow on the network's arcs; each assigned pair must be the arc's (best) pair."""
    local_t = np.searchsorted(net.tenets, a_tenet)
    local_p = np.searchsorted(net.prompts, st.prompt[rows])
    arc_keys = net.arc_tenet.astype(np.int64) * max(net.num_prompts, 1) + net.arc_prompt
    want = local_t * max(net.num_prompts, 1) + local_p
    arc_idx = np.minimum(np.searchsorted(arc_keys, want), max(net.num_arcs - 1, 0))
    n = len(a_pair)
    not_best = np.flatnonzero((net.num_arcs == 0) | (net.arc_pair[arc_idx] != a_pair)).tolist() if n else []
    if not_best:
        failures.append(
            f"assignment rows {_listing(not_best)} are not their prompt's best pair for the tenet "
            "(a better pair of the same prompt is eligible)"
        )
        return None
    arc_flow = np.zeros(net.num_arcs, np.int8)
    arc_flow[arc_idx] = 1
    return arc_flow


def _potentials(net, st: ScoreTable, cert: Certificate, failures: list[str]) -> np.ndarray | None:
    """Node potentials over exactly the network's nodes; None (with a failure) when they do not fit it."""
    num_t = len(cert.kept_tenets)
    if len(cert.tenet_potentials) != num_t or len(cert.prompt_potentials) != len(cert.prompt_ids):
        failures.append("potentials do not match the kept tenets / recorded prompts")
        return None
    p_codes = (
        _codes(pa.array(list(cert.prompt_ids)), st.prompt_ids) if cert.prompt_ids else np.zeros(0, np.int64)
    )
    if len(p_codes) != net.num_prompts or not np.array_equal(np.sort(p_codes), net.prompts):
        failures.append(
            f"certificate gives potentials for {len(p_codes)} prompts; the network has {net.num_prompts} "
            "prompt nodes and every one needs exactly one potential"
        )
        return None
    raw = [cert.potential_source, *cert.tenet_potentials, *cert.prompt_potentials, cert.potential_sink]
    if any(not isinstance(v, int) or abs(v) >= _POTENTIAL_LIMIT for v in raw):
        failures.append("potentials must be integers of magnitude below 2**60")
        return None
    pi_prompt = np.zeros(net.num_prompts, np.int64)
    pi_prompt[np.searchsorted(net.prompts, p_codes)] = np.array(cert.prompt_potentials, np.int64)
    return np.concatenate(
        [[cert.potential_source], np.array(cert.tenet_potentials, np.int64), pi_prompt, [cert.potential_sink]]
    ).astype(np.int64)


def _check_optimality(st: ScoreTable, cert: Certificate, rows, tail, head, red) -> list[str]:
    """Non-negative reduced costs on every residual arc, and the recorded objective."""
    failures = []
    neg = np.flatnonzero(red < 0)
    if len(neg):
        failures.append(
            f"{len(neg)} residual arc(s) with negative reduced cost (the flow is not a maximum flow of "
            f"minimum cost, or the potentials are wrong); first node pairs: "
            f"{_listing([(int(tail[i]), int(head[i])) for i in neg])}"
        )
    objective = math.fsum(np.abs(st.score[rows]).tolist())
    if objective != cert.objective:
        failures.append(
            f"recorded objective {cert.objective!r} but Σ|score| of the assignment is {objective!r}"
        )
    levels = int(np.rint(np.abs(st.score[rows]) * cert.scale).astype(np.int64).sum())
    if levels != cert.objective_levels:
        failures.append(
            f"recorded objective_levels {cert.objective_levels} but the assignment gives {levels}"
        )
    return failures
