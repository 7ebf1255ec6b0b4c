"""Regenerate the JSON fixtures for the src/util tests from the Python reference.

Run from this directory: python3 generate.py
then: npx biome format --write src/util/__fixtures__  (biome lays out the JSON)
Needs only the standard library and /work/shared/reference/imports/*.py (the
reference HeapSet, key_split and parse_bytes); format_bytes is dask's, pasted below.
"""

import json
import random
import re
import sys

REF = "/work/shared/reference/imports/"


def load(name, extra=None):
    ns = {"re": re}
    if extra:
        ns.update(extra)
    exec(open(REF + name).read(), ns)
    return ns


key_split = load("dask_key_split.py")["key_split"]
parse_bytes = load("dask_parse_bytes.py")["parse_bytes"]
HeapSet = load("distributed_collections.py")["HeapSet"]


def format_bytes(n: int) -> str:  # dask.utils.format_bytes
    for prefix, k in (
        ("Pi", 2**50),
        ("Ti", 2**40),
        ("Gi", 2**30),
        ("Mi", 2**20),
        ("ki", 2**10),
    ):
        if n >= k * 0.9:
            return f"{n / k:.2f} {prefix}B"
    return f"{n} B"


def dump(name, obj):
    with open(name, "w") as f:
        json.dump(obj, f, separators=(",", ":"), ensure_ascii=False)
        f.write("\n")


# --- mt19937 -----------------------------------------------------------------
def mt_fixture():
    r = random.Random(0)
    seed0 = [r.random() for _ in range(1000)]
    seeds = {}
    for seed in [1, 42, 12345, 2**32 - 1, 2**32, 2**53 + 1, 2**64 + 7, 10**30]:
        r = random.Random(seed)
        vals = [r.random() for _ in range(5)]
        bits = [r.getrandbits(k) for k in (1, 7, 31, 32, 33, 40, 53)]
        below = [r.randrange(n) for n in (1, 2, 3, 10, 1000, 2**31 + 1, 2**40 + 3)]
        ints = [r.randint(-5, 5) for _ in range(5)]
        choice = [r.choice("abcdefg") for _ in range(5)]
        shuffled = list(range(20))
        r.shuffle(shuffled)
        after = r.random()
        seeds[str(seed)] = {
            "random": vals,
            "getrandbits": bits,
            "randbelow": below,
            "randint": ints,
            "choice": choice,
            "shuffle": shuffled,
            "after": after,
        }
    # a long stream after many twists, as a checksum-like spot check
    r = random.Random(7)
    for _ in range(100_000):
        r.random()
    return {"seed0": seed0, "seeds": seeds, "seed7_after_100000": r.random()}


# --- key_split ---------------------------------------------------------------
def key_split_fixture():
    keys = [
        "x", "x-1", "x-1-2-3", ["x-2", 1], "('x-2', 1)", "('x', 1)", "hello-world-1",
        "ae05086432ca935f6eba409a8ecd4896", "<module.submodule.myclass object at 0xdaf372",
        None, "x-abcdefab", "_(x)", "", "-", "-x", "x-", "x--y", "_", "(_)", "_-abc", "<>",
        "< >", "<x>", "<a.b.c>", "<\x1fa.b>", "<\x85a>", "<\ufeffa.b c>", "x-abcdefgh",
        "x-abcdefg", "x-Abcdefgh", "x-gbcdefgh", "x-deadbeef-y", "café-crème-1", "λ-μν-3",
        "🎉-x", "x-🎉", "x-y🎉", "ABCDEF0123456789abcdef0123456789",
        "abcdef0123456789abcdef0123456789", "abcdef0123456789abcdef012345678", "f" * 32,
        "f" * 33, "ff-" + "a" * 29, "aaaa-bbbb-cccc", "finalize-hlgfinalizecompute-abc",
        "('sum-aggregate-ab12cd', 0, 1)", "(\"getitem-a\", 2)", "('', 1)", "'''x", "1-2-3",
        "1x-y", [None], [1, 2], [["x-1", 1]], ["('y-1', 2)"], ["", 1], ["\u00e9t\u00e9-x"],
        "x y-z", "x-y z", "<module.Foo\u3000object>", "<a.b\u2028c>",
    ]
    rng = random.Random(2024)
    alphabet = "abcdefxyzABC0123456789-_(),'<>. \u00e9\u03bb\U0001f389"
    for _ in range(60):
        n = rng.randint(1, 24)
        s = "".join(rng.choice(alphabet) for _ in range(n))
        keys.append(s if rng.random() < 0.8 else [s, rng.randint(0, 9)])
    for _ in range(20):
        name = rng.choice(["sum", "getitem", "x", "rechunk-merge", "from-array", "λ"])
        token = "".join(rng.choice("0123456789abcdef") for _ in range(32))
        keys.append(f"{name}-{token}")
        keys.append([f"{name}-{token}", rng.randint(0, 9), rng.randint(0, 9)])
        keys.append(token)

    def to_py(k):
        return tuple(to_py(x) for x in k) if isinstance(k, list) else k

    return [[k, key_split(to_py(k))] for k in keys]


# --- parse_bytes / format_bytes ---------------------------------------------
def parse_bytes_fixture():
    inputs = [
        "100", "100 MB", "100M", "5kB", "5.4 kB", "1kiB", "1e6", "1e6 kB", "MB", 123,
        "5 foos", "", "  ", "1_000", "1_000 kB", "1__0", "_1", "1.5GiB", "1 gib", "1Gi",
        "1gi", "1K", "1k", "1m", "1g", "1t", "1p", "1b", "1 B", "1 kb", "1KB", "1 PiB",
        "10 TB", "123.456", "inf", "1e400", "nan", "-5kB", "+5kB", "5.kB", ".5kB",
        "1e-3kB", "0x10", "1.2.3MB", "1\tMB", "1\u00a0MB", "\t1 MB", "5e", "Infinity",
        "1 infinity", "-inf", "2 KiBs", "2 MiB", "0.1", "-0.9", "7 GIB", "3ki", "1mi",
        "\u00e9", "1\u00e9", "1 MB ", "1e", "e5", "1E3", "1.e3 kB", "1_0.5_0", "10 pb",
        1.9, -1.9, 0, 2**40, 1e15,
    ]
    out = []
    for s in inputs:
        try:
            out.append([s, parse_bytes(s)])
        except (ValueError, OverflowError) as e:
            out.append([s, {"error": str(e)}])
    return out


def format_bytes_fixture():
    rng = random.Random(99)
    ns = [0, 1, 2, 100, 921, 922, 999, 1000, 1023, 1024, 1152, 1234, 2688, 1179648,
          1441792, 12345678, 1234567, 1234567890, 1234567890000, 1234567890000000,
          2**50, 2**60 - 1, 2**60, 2**70, -5, 1.5, 0.25, 1e-7, 921.5]
    for e in range(0, 62, 2):
        ns.append(rng.randrange(2**e, 2**(e + 2)))
    for k in (2**10, 2**20, 2**30):
        for num in range(1, 400, 8):
            # exact ties at the third decimal: x.xx5 * k is an integer here
            ns.append(num * k // 8 * 1)
            ns.append(int((num + 0.5) * k / 8))
    return [[n, format_bytes(n)] for n in ns]


# --- HeapSet -----------------------------------------------------------------
class Item:
    """A weakref-able value with a mutable priority (read by the key at add time)."""

    __slots__ = ("id", "prio", "__weakref__")

    def __init__(self, i, prio):
        self.id = i
        self.prio = prio


def heapset_trace(seed, nops, nitems):
    rng = random.Random(seed)

    def rprio():
        return [rng.randint(0, 3) for _ in range(rng.randint(0, 3))]

    items = [Item(i, rprio()) for i in range(nitems)]
    h = HeapSet(key=lambda it: tuple(it.prio))
    init = [it.prio for it in items]
    ops = []
    ids = lambda xs: [x.id for x in xs]  # noqa: E731
    for _ in range(nops):
        r = rng.random()
        it = rng.choice(items)
        if r < 0.35:
            h.add(it)
            ops.append(["add", it.id, None])
        elif r < 0.5:
            h.discard(it)
            ops.append(["discard", it.id, None])
        elif r < 0.55:
            try:
                h.remove(it)
                ops.append(["remove", it.id, "ok"])
            except KeyError:
                ops.append(["remove", it.id, "KeyError"])
        elif r < 0.62:
            it.prio = rprio()
            ops.append(["setprio", it.id, it.prio])
        else:
            name = rng.choice(
                ["pop", "pop", "peek", "peekright", "popright", "peekn", "sorted",
                 "len", "has", "iter", "clear" if rng.random() < 0.05 else "len"]
            )
            if name in ("pop", "peek", "peekright", "popright"):
                try:
                    ops.append([name, None, getattr(h, name)().id])
                except KeyError:
                    ops.append([name, None, "KeyError"])
            elif name == "peekn":
                n = rng.randint(0, 4)
                ops.append(["peekn", n, ids(h.peekn(n))])
            elif name == "sorted":
                ops.append(["sorted", None, ids(h.sorted())])
            elif name == "len":
                ops.append(["len", None, len(h)])
            elif name == "has":
                ops.append(["has", it.id, it in h])
            elif name == "iter":
                ops.append(["iter", None, sorted(ids(h))])
            elif name == "clear":
                h.clear()
                ops.append(["clear", None, None])
    return {"seed": seed, "prios": init, "ops": ops}


def heapset_fixture():
    traces = [heapset_trace(s, 400, 12) for s in range(8)]
    traces += [heapset_trace(100 + s, 600, 40) for s in range(4)]
    return traces


if __name__ == "__main__":
    assert sys.version_info >= (3, 8)
    dump("mt19937.json", mt_fixture())
    dump("keySplit.json", key_split_fixture())
    dump("bytes.json", {"parse": parse_bytes_fixture(), "format": format_bytes_fixture()})
    dump("heapSet.json", heapset_fixture())
