"""Randomness on workers: per-partition ChaCha20 streams, geo privatize and sample-and-aggregate on Dask.

The stream construction is checked against an independent ChaCha20 block function (pinned to the RFC 8439
test vector); the worker-drawn reports are checked for their law (KS), for reproducibility across dask
schedulers and recomputations (a retried task draws the same numbers), and for independence across
partitions; sample-and-aggregate's block outputs are checked against the public labels API.
"""

from __future__ import annotations

import pickle
import struct
from typing import Any

import numpy as np
import pytest
from scipy import stats

import smoothdp.geo as geo
from smoothdp.accounting import Accountant, BudgetError
from smoothdp.central.frameworks.sample_aggregate import SampleAndAggregate, sample_and_aggregate
from smoothdp.noise import Laplace
from smoothdp.rng import StreamKey, default_rng, is_secure, stream_key
from smoothdp.scale.streams import map_row_blocks, partition_generator

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

SCHEDULERS = ("sync", "threads")


# -- an independent ChaCha20 block function (RFC 8439 §2.3) --------------------------------------------------
_M = 0xFFFFFFFF


def _rotl(v: int, c: int) -> int:
    return ((v << c) & _M) | (v >> (32 - c))


def _quarter(s: list[int], a: int, b: int, c: int, d: int) -> None:
    s[a] = (s[a] + s[b]) & _M
    s[d] = _rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & _M
    s[b] = _rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & _M
    s[d] = _rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & _M
    s[b] = _rotl(s[b] ^ s[c], 7)


def _chacha20_block(key: bytes, words_12_15: list[int]) -> list[int]:
    init = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574, *struct.unpack("<8I", key), *words_12_15]
    s = list(init)
    for _ in range(10):
        for a, b, c, d in ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15)):
            _quarter(s, a, b, c, d)
        for a, b, c, d in ((0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14)):
            _quarter(s, a, b, c, d)
    return [(x + y) & _M for x, y in zip(s, init, strict=True)]


def test_reference_chacha20_matches_rfc8439() -> None:
    out = _chacha20_block(bytes(range(32)), [1, 0x09000000, 0x4A000000, 0])
    assert (out[0], out[1], out[15]) == (0xE4E7F110, 0x15593BD1, 0x4E3C50A2)


@pytest.mark.parametrize("stream", [0, 1, 7, 2**40 + 3, 2**64 - 1])
def test_stream_s_is_chacha20_blocks_from_s_times_2_to_60(stream: int) -> None:
    """Stream s of a key reads the ChaCha20 keystream from block s·2^60 (words 12–15: a 128-bit counter)."""
    key = bytes(range(100, 132))
    sk = StreamKey(key=int.from_bytes(key, "little"), secure=False)
    raw = sk.generator(stream).bit_generator.random_raw(16)  # two blocks of 16 words
    words = [w for v in raw.tolist() for w in (v & _M, v >> 32)]
    for j in range(2):
        block = (stream << 60) + j
        ref = _chacha20_block(key, [(block >> (32 * i)) & _M for i in range(4)])
        assert words[16 * j : 16 * (j + 1)] == ref


def test_stream_keys() -> None:
    secure = stream_key(default_rng())
    assert secure.secure and is_secure(secure.generator(3))
    seeded = stream_key(default_rng(5))
    assert not seeded.secure and not is_secure(seeded.generator(0))
    assert seeded.key == stream_key(default_rng(5)).key != stream_key(default_rng(6)).key
    assert secure.key != stream_key(default_rng()).key  # fresh per draw
    # a rebuilt (or unpickled) key gives the same stream; different streams differ
    again = pickle.loads(pickle.dumps(seeded))
    np.testing.assert_array_equal(again.generator(4).random(8), seeded.generator(4).random(8))
    assert not np.array_equal(seeded.generator(4).random(8), seeded.generator(5).random(8))
    # the key never shows: repr and dask's token
    assert str(secure.key) not in repr(secure) and hex(secure.key)[2:] not in repr(secure)
    token = dask.base.tokenize(secure)
    assert token == dask.base.tokenize(pickle.loads(pickle.dumps(secure)))
    assert token != dask.base.tokenize(stream_key(default_rng()))
    with pytest.raises(ValueError, match="stream must be in"):
        seeded.generator(2**64)
    with pytest.raises(ValueError, match="stream must be in"):
        seeded.generator(-1)
    with pytest.raises(TypeError, match="rng must be a numpy Generator"):
        stream_key(3)  # type: ignore[arg-type]


def test_partition_streams_look_independent() -> None:
    sk = stream_key(default_rng(12))  # over 600 keys these KS p-values were uniform (checked once)
    u = np.array([partition_generator(sk, p).random(20000) for p in range(4)])
    for row in u:
        assert stats.kstest(row, "uniform").pvalue > 1e-4
    corr = np.corrcoef(u)
    assert np.all(np.abs(corr[np.triu_indices(4, 1)]) < 0.04)  # 5.6 standard errors at n = 20000


def test_map_row_blocks_draws_per_partition() -> None:
    """A generator shipped in the graph would give every block the same draws; streams do not."""
    sk = stream_key(default_rng(2))
    x = da.zeros(40, chunks=10)
    out = map_row_blocks(lambda b, g: b + g.random(b.shape[0]), x, sk, keep=1).compute(scheduler="sync")
    blocks = out.reshape(4, 10)
    assert len({tuple(b) for b in blocks}) == 4
    np.testing.assert_array_equal(blocks[2], partition_generator(sk, 2).random(10))


# -- geo privatize on Dask -----------------------------------------------------------------------------------
def _points_1d(n: int = 6000, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).normal(0.0, 1.5, n)
    x[:4] = [np.nan, np.inf, -np.inf, -0.0]  # the data policy, per block
    return x


def _points_2d(n: int = 3000, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, 1.0, (n, 2))


MECHANISMS = {
    "ss threshold": lambda: geo.SmoothSensitivityMechanism(geo.SoftThreshold(0.0, 1.0), epsilon=1.0),
    "ss threshold grid": lambda: geo.SmoothSensitivityMechanism(
        geo.SoftThreshold([-1.0, 0.0, 1.0], 1.0), epsilon=1.0
    ),
    "global kde 2-D": lambda: geo.GlobalLipschitz(
        geo.GaussianKDE([[0.0, 0.0], [1.0, 1.0]], 0.5), epsilon=1.0
    ),
    "noise a priori 2-D": lambda: geo.NoiseAPriori(geo.GaussianKDE([[0.0, 0.0]], 0.5), epsilon=1.0),
    "noise a priori distance": lambda: geo.NoiseAPriori(
        geo.GaussianKDE([[0.0, 0.0], [1.0, 0.0]], 0.5), epsilon=1.0, variant="distance"
    ),
    "local dp float": lambda: geo.LocalDP(geo.SoftThreshold(0.0, 1.0), epsilon=2.0, numerics="float"),
}


def _dask_points(mech: Any, chunk: int = 700) -> tuple[np.ndarray, Any]:
    x = _points_2d() if mech.query.dimension == 2 else _points_1d()
    return x, da.from_array(x, chunks=(chunk, *x.shape[1:]))


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_seeded_reports_are_the_same_on_every_scheduler_and_every_compute(name: str) -> None:
    mech = MECHANISMS[name]()
    x, dx = _dask_points(mech)
    reports = mech.privatize(dx, rng=3)
    assert isinstance(reports, da.Array)
    first = reports.compute(scheduler="sync")
    np.testing.assert_array_equal(reports.compute(scheduler="sync"), first)  # a recomputation: same draws
    np.testing.assert_array_equal(reports.compute(scheduler="threads"), first)
    np.testing.assert_array_equal(mech.privatize(dx, rng=3).compute(scheduler="threads"), first)
    assert first.shape == mech.privatize(x, rng=3).shape  # the in-memory layout
    assert not np.array_equal(mech.privatize(dx, rng=4).compute(scheduler="sync"), first)
    # estimate: one reduction, equal to the in-memory estimate of the computed reports
    with dask.config.set(scheduler="sync"):
        lazy = mech.estimate(reports)
    np.testing.assert_allclose(lazy.total, mech.estimate(first).total, rtol=1e-12, atol=1e-9)
    assert lazy.n == mech.estimate(first).n


def test_reports_on_a_cluster_match_the_local_schedulers(client: Any) -> None:  # client: conftest.py
    for name in ("ss threshold grid", "noise a priori 2-D"):
        mech = MECHANISMS[name]()
        _, dx = _dask_points(mech)
        on_cluster = mech.privatize(dx, rng=9, engine=client)
        got = client.compute(on_cluster).result()
        np.testing.assert_array_equal(got, mech.privatize(dx, rng=9).compute(scheduler="sync"))
        np.testing.assert_array_equal(client.compute(on_cluster).result(), got)  # recomputed: same draws
        est = mech.estimate(on_cluster, engine=client)
        np.testing.assert_allclose(est.total, mech.estimate(got).total, rtol=1e-12, atol=1e-9)


def test_partitions_draw_from_different_streams() -> None:
    """Identical points in every block: the reports of the blocks differ (no replayed generator)."""
    mech = geo.GlobalLipschitz(geo.SoftThreshold(0.0, 1.0), epsilon=1.0)
    dx = da.from_array(np.full(4000, 0.25), chunks=1000)
    blocks = mech.privatize(dx, rng=1).compute(scheduler="sync").reshape(4, 1000)
    noise = blocks - mech.query.value(np.array([0.25]))[0]
    assert len({tuple(b) for b in blocks}) == 4
    assert np.all(np.abs(np.corrcoef(noise)[np.triu_indices(4, 1)]) < 0.15)  # ~4.7 standard errors


def test_worker_drawn_noise_has_the_right_law() -> None:
    """KS: reports − f(x) of the global Lipschitz threshold are Laplace(L/ε) (the exact path's rounding
    is 2^-36 relative, far below what KS sees); the smooth-sensitivity reports are f + S·Z."""
    gl = geo.GlobalLipschitz(geo.SoftThreshold(0.0, 1.0), epsilon=0.5)
    x = np.random.default_rng(4).uniform(-3.0, 3.0, 12000)
    dx = da.from_array(x, chunks=1500)
    noise = gl.privatize(dx, rng=6).compute(scheduler="threads") - gl.query.value(x)
    b = 1.0 / 0.5  # L_f = 1/width for the soft threshold
    assert stats.kstest(noise / b, Laplace(1.0).cdf).pvalue > 1e-3
    ss = geo.SmoothSensitivityMechanism(geo.SoftThreshold(0.0, 1.0), epsilon=1.0, noise="laplace", delta=1e-6)
    reports = ss.privatize(dx, rng=7).compute(scheduler="threads")
    z = (reports - ss.query.value(x)) / ss.smooth_sensitivity(x)
    assert stats.kstest(z, ss.calibration.noise.cdf).pvalue > 1e-3


def test_accountant_is_charged_once_on_the_driver() -> None:
    mech = MECHANISMS["ss threshold grid"]()
    _, dx = _dask_points(mech)
    acc = Accountant(epsilon=4.0, neighbours="metric")
    reports = mech.privatize(dx, rng=2, accountant=acc)
    assert len(acc.charges) == 1
    reports.compute(scheduler="sync")
    reports.compute(scheduler="threads")
    assert len(acc.charges) == 1  # computing (or recomputing) the graph spends nothing more
    with pytest.raises(BudgetError):
        mech.privatize(dx, rng=2, accountant=acc)  # 3 + 3 > 4: refused before any graph is built
    assert len(acc.charges) == 1


def test_release_on_dask() -> None:
    mech = MECHANISMS["ss threshold"]()
    x, dx = _dask_points(mech)
    seeded = mech.release(dx, rng=5)
    assert seeded.is_simulation and isinstance(seeded.value, da.Array)
    np.testing.assert_array_equal(
        seeded.value.compute(scheduler="sync"), mech.privatize(dx, rng=5).compute(scheduler="sync")
    )
    with dask.config.set(scheduler="sync"):
        assert mech.estimate(seeded).n == x.size
    secure = mech.release(dx)
    assert not secure.is_simulation
    # engine="numpy" computes a dask input in memory; engine="dask" takes an in-memory array to Dask
    np.testing.assert_array_equal(mech.privatize(dx, rng=5, engine="numpy"), mech.privatize(x, rng=5))
    on_dask = mech.privatize(x, rng=5, engine="dask")
    assert isinstance(on_dask, da.Array) and on_dask.shape == x.shape


def test_dask_inputs_are_checked_and_empty_blocks_pass() -> None:
    mech2 = MECHANISMS["global kde 2-D"]()
    with pytest.raises(ValueError, match=r"shape \(n, ..., 2\)"):
        mech2.privatize(da.zeros((10, 3), chunks=5), rng=1)
    with pytest.raises(ValueError, match="at least 1 point"):
        MECHANISMS["ss threshold"]().privatize(da.zeros(0, chunks=1), rng=1)
    with pytest.raises(ValueError, match="engine must be"):
        mech2.privatize(da.zeros((10, 2), chunks=5), rng=1, engine="spark")
    mech = MECHANISMS["ss threshold"]()
    x = _points_1d(30)
    dx = da.concatenate([da.from_array(x[:10], chunks=10), da.zeros(0, chunks=1), da.from_array(x[10:])])
    out = mech.privatize(dx, rng=1).compute(scheduler="sync")
    assert out.shape == (30,) and np.all(np.isfinite(out))


# -- sample-and-aggregate on Dask ----------------------------------------------------------------------------
def _records(n: int = 9000, seed: int = 2) -> np.ndarray:
    x = np.random.default_rng(seed).normal(5.0, 2.0, n)
    x[:3] = [np.nan, np.inf, -2.0]
    return x


def _first(block: np.ndarray) -> float:
    """Order-sensitive: the first record of the block (checks that blocks keep the original order)."""
    return float(block[0])


@pytest.mark.parametrize("func", ["mean", _first, np.median])
def test_dask_block_outputs_are_the_partition_of_the_worker_drawn_labels(func: Any) -> None:
    """The block outputs equal the public labels API on the labels the streams draw, block by block."""
    mech = SampleAndAggregate(func, n_blocks=7, bounds=(0.0, 10.0), epsilon=1.0)
    x = _records()
    chunk = 1300
    sk = stream_key(default_rng(8))
    with dask.config.set(scheduler="threads"):
        z = mech._block_outputs_dask(mech._dask_rows(da.from_array(x, chunks=chunk), None), sk)
    labels = np.concatenate(
        [
            partition_generator(sk, p).integers(0, 7, size=len(x[s : s + chunk]))
            for p, s in enumerate(range(0, x.size, chunk))
        ]
    )
    np.testing.assert_allclose(z, mech.block_outputs_from_labels(x, labels[None, :])[0], rtol=1e-13)


@pytest.mark.parametrize("aggregator", ["mean", "median"])
def test_seeded_sample_and_aggregate_is_the_same_on_every_dask_engine(aggregator: str, client: Any) -> None:
    x = _records()
    dx = da.from_array(x, chunks=2000)

    def release(engine: Any = None, rng: Any = 4) -> Any:
        return sample_and_aggregate(
            np.median,
            dx,
            n_blocks=10,
            bounds=(0.0, 10.0),
            epsilon=1.0,
            aggregator=aggregator,
            rng=rng,
            engine=engine,
        )

    values = []
    for scheduler in SCHEDULERS:
        with dask.config.set(scheduler=scheduler):
            values.append(release().value)
    values.append(release(client).value)
    assert values[0] == values[1] == values[2]
    assert release(client, rng=5).value != values[0]
    assert release().is_simulation
    assert not release(rng=None).is_simulation


def test_sample_and_aggregate_dask_policy() -> None:
    x = _records(2000)
    dx = da.from_array(x, chunks=500)
    balanced = SampleAndAggregate("mean", n_blocks=5, bounds=(0.0, 10.0), epsilon=1.0, partition="balanced")
    with pytest.raises(ValueError, match="partition='independent' on Dask"):
        balanced.release(dx, rng=1)
    assert np.isfinite(balanced.release(dx, rng=1, engine="numpy").value)  # computed in memory
    acc = Accountant(epsilon=1.5, neighbours="add_remove")
    mech = SampleAndAggregate("mean", n_blocks=5, bounds=(0.0, 10.0), epsilon=1.0)
    with dask.config.set(scheduler="sync"):
        mech.release(dx, rng=1, accountant=acc)
        with pytest.raises(BudgetError):
            mech.release(dx, rng=1, accountant=acc)
    assert len(acc.charges) == 1
    with pytest.raises(ValueError, match="1-D data"):
        mech.release(da.zeros((10, 2), chunks=5), rng=1)
    rows = SampleAndAggregate(lambda b: float(b[:, 0].mean()), n_blocks=3, bounds=(-1.0, 1.0), epsilon=1.0)
    with dask.config.set(scheduler="sync"):
        assert np.isfinite(rows.release(da.zeros((30, 2), chunks=(7, 1)), rng=1).value)


def test_printing_a_lazy_release_does_not_compute_it() -> None:
    mech = MECHANISMS[sorted(MECHANISMS)[0]]()
    _, dx = _dask_points(mech)
    release = mech.release(dx, rng=3)
    assert isinstance(release.value, da.Array)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("printing the release computed the dask graph")

    with dask.config.set(scheduler=refuse):
        text = str(release)
    assert "lazy Array of shape" in text
