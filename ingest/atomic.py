"""The one atomic file writer: a reader sees the old file or the whole new one, never a part.

Hand-written (about 20 lines) because the library for it, `atomicwrites`, is archived. It lives in `ingest/`,
the package that writes the knowledge base and the index; `evals/` and `ui/` sit above it and import it.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def write_atomic(path: Path, data: str | bytes) -> Path:
    """Write `data` (str as UTF-8) to `path`: a temp file beside it, fsync, then `os.replace`.

    The temp file is created by `os.open(..., 0o666)`, so the result has the permissions a plain `open()`
    gives, 0666 less the umask (`mkstemp` would leave 0600). On any failure the temp file is removed and the
    old file, if any, is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return path
