"""The semantic model: wordllama's static token embeddings, read from its wheel.

A text's vector is the mean of its tokens' embeddings (Llama 2 tokenizer, no special
tokens, the embeddings cut to :data:`DIMS`), scaled to unit length: exactly what
``WordLlama.load(trunc_dim=DIMS).embed(norm=True)`` computes. The weights and the tokenizer are files inside the installed ``wordllama``
package; they are found without importing it (its ``load()`` looks for the tokenizer
in the wrong folder, then goes to the network, and its import configures logging and
loads pydantic) and read with tokenizers and safetensors. Nothing is ever downloaded.

Only a prefix of each text is embedded (:data:`EMBED_CHARS`, at most
:data:`EMBED_TOKENS` tokens): a mean over thousands of tokens says little more than
one over the first few hundred, and the cost is per token.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import numpy as np
    from tokenizers import Tokenizer

#: The model's name as the catalog records it: vectors of another model are rebuilt.
MODEL: Final = "wordllama-l2_supercat-128"
# The 256-dimensional embeddings cut to their first 128 (the model is trained so that
# a prefix is itself an embedding): the same recall on the evaluation set, half the
# bytes every search scans (benchmarks/HISTORY.md).
DIMS: Final = 128
EMBED_CHARS: Final = 2_000  # characters of a text embedded
EMBED_TOKENS: Final = 512  # and at most this many of its tokens
_TOKENIZER: Final = ("tokenizers", "l2_supercat_tokenizer_config.json")
_WEIGHTS: Final = ("weights", "l2_supercat_256.safetensors")
_TENSOR: Final = "embedding.weight"
# Tokens pooled at once: their gathered embeddings (1 KiB each) stay in the CPU's cache.
_POOL_TOKENS: Final = 4_096


class ModelUnavailable(RuntimeError):
    """The semantic model cannot be loaded (the package or one of its files is
    missing); the message says which, and how to get it."""


@dataclass(frozen=True, slots=True)
class Embedder:
    """A loaded model: :meth:`embed` turns texts into unit vectors."""

    tokenizer: Tokenizer
    weights: np.ndarray  # (vocabulary, DIMS) float32

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One float32 row of :data:`DIMS` per text, of unit length; an empty text
        gets a row of zeros."""
        import numpy as np

        rows = np.zeros((len(texts), DIMS), dtype=np.float32)
        if not texts:
            return rows
        # The fast batch skips the tokens' character offsets, which pooling never reads.
        encoded = self.tokenizer.encode_batch_fast(
            [t[:EMBED_CHARS] for t in texts], add_special_tokens=False
        )
        # Each encoding's ids are a new list per access: read once, then flattened in C.
        tokens = [e.ids for e in encoded]
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        ids = np.fromiter(chain.from_iterable(tokens), dtype=np.int32, count=int(lengths.sum()))
        ends = np.cumsum(lengths)
        starts = ends - lengths
        present = np.flatnonzero(lengths)
        # Texts are pooled a run at a time: each run's tokens gathered into one small
        # buffer, then summed per text (reduceat over each text's start).
        buffer = np.empty((max(_POOL_TOKENS, int(lengths.max())), DIMS), dtype=np.float32)
        first = 0
        while first < len(present):
            last = int(
                np.searchsorted(ends[present], starts[present[first]] + len(buffer), "right")
            )
            last = max(last, first + 1)
            run = present[first:last]
            low, high = int(starts[run[0]]), int(ends[run[-1]])
            gathered = buffer[: high - low]
            np.take(self.weights, ids[low:high], axis=0, out=gathered)
            rows[run] = np.add.reduceat(gathered, starts[run] - low, axis=0)
            first = last
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        np.divide(rows, norms, out=rows, where=norms > 0)
        return rows


def model_dir() -> Path:
    """The installed ``wordllama`` package's folder (not imported), or
    :class:`ModelUnavailable`."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(
            "the semantic model is not installed (package 'wordllama'); "
            "reinstall agentlake with its dependencies to search by meaning"
        )
    return Path(next(iter(spec.submodule_search_locations)))


@cache
def load_embedder() -> Embedder:
    """The model, loaded once per process from the package's own files, or
    :class:`ModelUnavailable` naming the missing file."""
    import numpy as np
    from safetensors import safe_open
    from tokenizers import Tokenizer

    folder = model_dir()
    tokenizer_file, weights_file = folder.joinpath(*_TOKENIZER), folder.joinpath(*_WEIGHTS)
    for needed in (tokenizer_file, weights_file):
        if not needed.is_file():
            raise ModelUnavailable(f"the semantic model's file {needed} is missing")
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_padding()
    tokenizer.enable_truncation(EMBED_TOKENS)
    with safe_open(str(weights_file), framework="np") as tensors:
        weights = np.ascontiguousarray(tensors.get_tensor(_TENSOR)[:, :DIMS], dtype=np.float32)
    return Embedder(tokenizer, weights)
