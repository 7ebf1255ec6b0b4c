from typing import Any

ErrorMessage = dict


def error_message(e, status="error"):
    # A recorded data-store failure carries the texts it must produce.
    return {
        "status": status,
        "exception": e,
        "traceback": None,
        "exception_text": getattr(e, "exception_text", repr(e)),
        "traceback_text": getattr(e, "traceback_text", ""),
    }
