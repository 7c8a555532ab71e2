"""The digests a checkpoint keeps of a source (DESIGN §5): of the bounded window of
bytes before a byte-offset source's committed offset, and of a whole document. Both are
BLAKE2b-128 of the bytes, whether hashed from the file or from bytes the reader holds."""

from __future__ import annotations

from hashlib import blake2b
from pathlib import Path
from typing import Final

from .sources import open_regular

WINDOW_BYTES: Final = 64 * 1024


def bytes_digest(data: bytes) -> str:
    """The digest of ``data``: of a whole document, or of the window before an offset
    (the ≤ :data:`WINDOW_BYTES` bytes just before it)."""
    return blake2b(data, digest_size=16).hexdigest()


def window_digest(path: Path, offset: int) -> str:
    """Digest of the ≤ 64 KiB of ``path`` just before ``offset`` (O(1) in file size)."""
    start = max(0, offset - WINDOW_BYTES)
    with open_regular(path) as fh:
        fh.seek(start)
        data = fh.read(offset - start)
    return bytes_digest(data)


def document_digest(path: Path) -> str:
    """Digest of a whole document (read in 1 MiB blocks): its identity as a checkpoint."""
    digest = blake2b(digest_size=16)
    with open_regular(path) as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
