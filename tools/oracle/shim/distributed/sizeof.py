import sys
def safe_sizeof(obj, default_size=1e6):
    return sys.getsizeof(obj)
