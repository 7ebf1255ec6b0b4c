def get(key, default=None):
    return {"distributed.scheduler.default-data-size": "1kiB"}[key]
