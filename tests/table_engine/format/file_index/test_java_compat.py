"""The Java behaviours the file-index bytes depend on."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.format.file_index.java_compat import (
    binary_parts,
    java_hashmap_order,
    java_string_hash,
    murmur_binary_string_hash,
    read_utf,
    thomas_wang_hash,
    write_utf,
    xxh64,
)
from tests.budget import examples

# XXH64 (seed 0) of these inputs, computed with the reference xxhash library (C implementation)
XXH64_VECTORS = [
    (b"", 0xEF46DB3751D8E999), (b"a", 0xD24EC4F1A98C6E5B), (b"abc", 0x44BC2CF5AD770999),
    (b"abcd", 0xDE0327B0D25D92CC), (b"hello w", 0x6106AC765C3E8CFA), (b"paimon!!", 0x79AB4502B7495647),
    (bytes(range(31)), 0xC346D2B59B4D8EE1), (bytes(range(32)), 0xCBF59C5116FF32B4),
    (bytes(range(33)), 0x0C535D1ACAFB8EAD), (bytes(range(100)), 0x6AC1E58032166597),
    ("héllo wörld ✓".encode(), 0x34D9919C86F55AC4),
]


def test_xxh64_reference_vectors() -> None:
    arr = pa.array([v for v, _ in XXH64_VECTORS], pa.binary())
    got = xxh64(*binary_parts(arr))
    assert got.tolist() == [h for _, h in XXH64_VECTORS]


def test_xxh64_of_sliced_and_large_arrays() -> None:
    values = [b"x" * i for i in range(80)]
    arr = pa.array(values, pa.large_binary()).slice(3, 50)
    full = xxh64(*binary_parts(pa.array(values, pa.binary())))
    assert xxh64(*binary_parts(arr)).tolist() == full[3:53].tolist()


def test_xxh64_matches_reference_library_when_installed() -> None:
    xxhash = pytest.importorskip("xxhash")
    r = random.Random(7)
    values = [bytes(r.getrandbits(8) for _ in range(r.randint(0, 150))) for _ in range(500)]
    got = xxh64(*binary_parts(pa.array(values, pa.binary())))
    assert got.tolist() == [xxhash.xxh64_intdigest(v) for v in values]


def _wang(key: int) -> int:
    """FastHash.getLongHash written out with Java long semantics."""
    m = (1 << 64) - 1

    def s(x: int) -> int:
        x &= m
        return x - (1 << 64) if x >> 63 else x

    key = s(~key + (key << 21))
    key = s(key ^ (key >> 24))
    key = s(key + (key << 3) + (key << 8))
    key = s(key ^ (key >> 14))
    key = s(key + (key << 2) + (key << 4))
    key = s(key ^ (key >> 28))
    return s(key + (key << 31))


@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=50))
def test_thomas_wang_hash_vectorized_equals_scalar(keys: list[int]) -> None:
    assert thomas_wang_hash(np.array(keys, np.int64)).tolist() == [_wang(k) for k in keys]


@given(st.text(max_size=40))
def test_write_utf_round_trips(text: str) -> None:
    data = write_utf(text)
    assert read_utf(data + b"junk", 0) == (text, len(data))


def test_write_utf_is_modified_utf8() -> None:
    assert write_utf("a\x00b") == b"\x00\x04a\xc0\x80b"  # NUL as C0 80
    assert write_utf("\U0001F600") == b"\x00\x06\xed\xa0\xbd\xed\xb8\x80"  # surrogates encoded one by one
    assert write_utf("é") == b"\x00\x02\xc3\xa9"


def test_java_string_hash() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("bloom-filter") == java_string_hash("bloom-filter")
    assert java_string_hash("polygenelubricants") == -(2**31)  # a well-known String.hashCode of MIN_VALUE


def test_murmur_binary_string_hash_of_tails_is_sign_extended() -> None:
    values = [b"", b"a", b"abcd", b"abcde", "ü".encode(), b"\xff\xfe\xfd"]
    s, n, d = binary_parts(pa.array(values, pa.binary()))
    h = murmur_binary_string_hash(s, n, d)
    assert len(set(h.tolist())) == len(values)
    assert h[0] == murmur_binary_string_hash(np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(0, np.uint8))[0]


def test_hashmap_order_small_maps() -> None:
    # Integer keys 0..20 land in bins by value: iteration is ascending after the resize to 32
    order, exact = java_hashmap_order(list(range(20, -1, -1)))
    assert exact and [20 - i for i in order.tolist()] == list(range(21))
    # computeIfAbsent prepends within a bin: 127 (inserted second) comes before -128 in bin 15
    order, exact = java_hashmap_order([-128, 127, 0], compute_if_absent=True)
    assert exact and order.tolist() == [2, 1, 0]
    order, _ = java_hashmap_order([-128, 127, 0])
    assert order.tolist() == [2, 0, 1]


def test_hashmap_resize_timing_of_compute_if_absent() -> None:
    keys = list(range(13))  # the 13th insert crosses the threshold 12
    without_later, _ = java_hashmap_order([k * 16 + 1 for k in keys[::-1]], compute_if_absent=True)
    assert len(without_later) == 13
    # with cap 16 every key (k*16+1) is in bin 1; one more call doubles the table and reorders
    crowded = [k * 16 + 1 for k in range(7)] + [k * 16 + 2 for k in range(6)]
    a, _ = java_hashmap_order(crowded, compute_if_absent=True, later_call=False)
    b, _ = java_hashmap_order(crowded, compute_if_absent=True, later_call=True)
    assert a.tolist() != b.tolist()


def test_hashmap_flags_tree_bins() -> None:
    _, exact = java_hashmap_order([i * 1024 for i in range(40)], compute_if_absent=True)
    assert not exact
    _, exact = java_hashmap_order(list(range(5000)))
    assert exact


@settings(max_examples=examples(30))
@given(st.lists(st.integers(-(2**31), 2**31 - 1), unique=True, max_size=300))
def test_hashmap_order_is_a_permutation(codes: list[int]) -> None:
    order, _ = java_hashmap_order(codes, compute_if_absent=True, later_call=True)
    assert sorted(order.tolist()) == list(range(len(codes)))
