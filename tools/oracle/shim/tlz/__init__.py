import itertools
def peekn(n, seq):
    seq = iter(seq)
    first = tuple(itertools.islice(seq, n))
    return first, itertools.chain(first, seq)
