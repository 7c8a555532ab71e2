"""The semantic model (agentlake.load.embedder): read from the wordllama wheel's own
files with no network, and the same vectors as the package's own inference."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from agentlake.load.embedder import DIMS, EMBED_CHARS, ModelUnavailable, load_embedder, model_dir

TEXTS = [
    "the login page crashed on an empty password",
    "auth form 500 when pw blank",
    "Refactor the parser so that nested quotes survive a round trip",
    "x",
]


def test_vectors_are_the_packages_own_mean_pooled_and_normalized() -> None:
    from wordllama import WordLlama

    loaded = WordLlama.load(cache_dir=model_dir(), disable_download=True, trunc_dim=DIMS)
    theirs = loaded.embed(TEXTS, norm=True)
    ours = load_embedder().embed(TEXTS)
    assert ours.shape == (len(TEXTS), DIMS) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, theirs, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)


def test_an_empty_text_is_zeros_and_a_long_one_only_its_prefix() -> None:
    model = load_embedder()
    long = "word " * EMBED_CHARS
    empty, whole, prefix = model.embed(["", long, long[:EMBED_CHARS]])
    assert not empty.any()
    np.testing.assert_array_equal(whole, prefix)
    # pooled a run at a time: the batch gives what each text alone gives
    batch = model.embed(TEXTS * 300)
    alone = np.stack([model.embed([t])[0] for t in TEXTS])
    np.testing.assert_allclose(batch[: len(TEXTS)], alone, atol=1e-6)
    np.testing.assert_allclose(batch[-len(TEXTS) :], alone, atol=1e-6)


_OFFLINE = """
import socket, sys
def refuse(*args, **kwargs):
    raise OSError("network unreachable (test)")
socket.socket.connect = refuse
socket.create_connection = refuse
from agentlake.load.embedder import load_embedder
vector = load_embedder().embed(["the login page crashed on an empty password"])[0]
assert "wordllama" not in sys.modules, "the package's own loader was imported"
print(vector.shape[0], round(float((vector * vector).sum()), 3))
"""


def test_the_model_loads_with_the_network_unreachable(tmp_path: Path) -> None:
    """In a network namespace of its own where the platform allows one (else with
    sockets that refuse), with an empty home: no cache, nothing to download."""
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONNOUSERSITE": "1"}
    command = [sys.executable, "-c", textwrap.dedent(_OFFLINE)]
    if (
        shutil.which("unshare")
        and subprocess.run(
            ["unshare", "--net", "true"], capture_output=True, check=False
        ).returncode
        == 0
    ):
        command = ["unshare", "--net", *command]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(DIMS), "1.0"]
    assert not (tmp_path / ".cache").exists()


def test_a_missing_model_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("agentlake.load.embedder.importlib.util.find_spec", lambda name: None)
    with pytest.raises(ModelUnavailable, match="wordllama"):
        model_dir()
