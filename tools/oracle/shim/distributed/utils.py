def recursive_to_dict(obj, *, exclude=(), members=False):
    return repr(obj)
