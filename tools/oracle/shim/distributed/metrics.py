import contextlib
def time(): return 0.0
def monotonic(): return 0.0
class DelayedMetricsLedger:
    @contextlib.contextmanager
    def record(self, *, key=None):
        yield
    def finalize(self, coarse_time=False, floor=0):
        return []
