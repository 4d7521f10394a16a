"""Hugging Face backends, from a hub id or a local path: NLI cross-encoders, MiniCheck-style classifiers, HHEM.

torch and transformers are imported only when one of these scorers is built. Pairs are sorted by length
and scored in padded batches with attention masks, so batching changes speed, not results.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from groundwire.foundation.extras import optional_import
from groundwire.scoring.base import PairScores

_SUPPORT_NAMES = ("entail", "support", "consistent", "faithful", "grounded")
_CONTRADICTION_NAMES = ("contradict", "refute", "inconsistent")
# "not_entailment", "non-entailment", "unsupported", "inconsistent" are the negative class.
_NEGATED_LABEL_RE = re.compile(r"^(?:not|non|un|in)(?=[-_ a-z])")
# Tokenizers report a huge sentinel when they have no limit of their own.
_NO_LIMIT = 100_000


def label_indices(id2label: dict[int, str], num_labels: int) -> tuple[int, int | None]:
    """(support index, contradiction index or None) read from the model config's labels."""
    if num_labels == 1:
        return 0, None
    names = {int(i): str(label).lower() for i, label in id2label.items()}
    support = [
        i
        for i, name in names.items()
        if any(key in name for key in _SUPPORT_NAMES) and not _NEGATED_LABEL_RE.match(name)
    ]
    contradiction = [i for i, name in names.items() if any(key in name for key in _CONTRADICTION_NAMES)]
    if len(support) == 1:
        return support[0], contradiction[0] if len(contradiction) == 1 else None
    if num_labels == 2 and all(name.startswith("label_") for name in names.values()):
        return 1, None  # MiniCheck and most binary factual-consistency heads: label 1 = supported
    raise ValueError(
        f"cannot tell which output is 'supported' from the labels {names}; "
        "set id2label in the model's config.json (e.g. entailment / neutral / contradiction)"
    )


def _require_local(model_name: str) -> None:
    """groundwire never downloads: a hub id must already be in the local Hugging Face cache."""
    if Path(model_name).exists():
        return
    from huggingface_hub import try_to_load_from_cache

    if not isinstance(try_to_load_from_cache(model_name, "config.json"), str):
        raise ValueError(
            f"{model_name!r} is neither a local folder nor in the Hugging Face cache, and groundwire does not "
            f"download models: fetch it yourself (e.g. `huggingface-cli download {model_name}`) or pass its path"
        )


def count_with(tokenizer: Any, texts: Sequence[str]) -> list[int]:
    """Token counts without special tokens, with any Hugging Face tokenizer."""
    if not texts:
        return []
    return [len(ids) for ids in tokenizer(list(texts), add_special_tokens=False, truncation=False)["input_ids"]]


class HFClassifierScorer:
    """A sequence-classification model over (premise, hypothesis) pairs, e.g. an NLI cross-encoder."""

    def __init__(self, model_name: str, *, batch_size: int = 16, device: str = "cpu") -> None:
        with optional_import("hf", needed_by=f"the scorer hf:{model_name}"):
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self._torch = torch
        _require_local(model_name)
        self.tokenizer = AutoTokenizer.from_pretrained(model_name, local_files_only=True)  # type: ignore[no-untyped-call]
        self.model = (
            AutoModelForSequenceClassification.from_pretrained(model_name, local_files_only=True).to(device).eval()
        )
        self.device = device
        self.batch_size = batch_size
        self.model_id = f"hf:{model_name}"
        config = self.model.config
        self.support_index, self.contradiction_index = label_indices(config.id2label, config.num_labels)
        limits = [self.tokenizer.model_max_length, getattr(config, "max_position_embeddings", _NO_LIMIT)]
        self.max_tokens: int | None = min(limit for limit in limits if limit and limit < _NO_LIMIT)

    @classmethod
    def from_spec(cls, arg: str) -> HFClassifierScorer:
        return cls(arg)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return count_with(self.tokenizer, texts)

    def score(self, pairs: Sequence[tuple[str, str]]) -> PairScores:
        n = len(pairs)
        support = np.zeros(n, dtype=np.float32)
        contradiction = np.zeros(n, dtype=np.float32) if self.contradiction_index is not None else None
        truncated = np.zeros(n, dtype=bool)
        if n == 0:
            return PairScores(support, contradiction, truncated)
        lengths = [
            a + b
            for a, b in zip(
                self.count_tokens([p for p, _ in pairs]), self.count_tokens([h for _, h in pairs]), strict=True
            )
        ]
        order = np.argsort(lengths, kind="stable")
        torch = self._torch
        with torch.inference_mode():
            for begin in range(0, n, self.batch_size):
                index = order[begin : begin + self.batch_size]
                batch = self.tokenizer(
                    [pairs[i][0] for i in index],
                    [pairs[i][1] for i in index],
                    padding=True,
                    truncation="only_first",
                    max_length=self.max_tokens,
                    return_tensors="pt",
                ).to(self.device)
                logits = self.model(**batch).logits.float()
                if logits.shape[-1] == 1:
                    probs = torch.sigmoid(logits)
                else:
                    probs = torch.softmax(logits, dim=-1)
                probs_np = probs.cpu().numpy()
                support[index] = probs_np[:, self.support_index]
                if contradiction is not None:
                    contradiction[index] = probs_np[:, self.contradiction_index]
        for i, length in enumerate(lengths):
            truncated[i] = length + 3 > (self.max_tokens or _NO_LIMIT)
        return PairScores(support, contradiction, truncated)


class HHEMScorer:
    """Vectara HHEM-2.1-Open (or any remote-code model exposing `predict(pairs) -> scores`)."""

    def __init__(self, model_name: str, *, max_tokens: int = 512, batch_size: int = 8) -> None:
        with optional_import("hf", needed_by=f"the scorer hhem:{model_name}"):
            import torch  # noqa: F401  # score() needs it: missing, the scorer fails here, not at its first pair
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

        _require_local(model_name)
        self.model: Any = AutoModelForSequenceClassification.from_pretrained(
            model_name, trust_remote_code=True, local_files_only=True
        )
        self.model.eval()
        if not hasattr(self.model, "predict"):
            raise ValueError(f"{model_name} has no predict(pairs) method; use 'hf:{model_name}' for plain classifiers")
        self.tokenizer = getattr(self.model, "tokenizer", None) or AutoTokenizer.from_pretrained(  # type: ignore[no-untyped-call]
            model_name, local_files_only=True
        )
        self.model_id = f"hhem:{model_name}"
        self.max_tokens: int | None = max_tokens
        self.batch_size = batch_size

    @classmethod
    def from_spec(cls, arg: str) -> HHEMScorer:
        return cls(arg)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return count_with(self.tokenizer, texts)

    def score(self, pairs: Sequence[tuple[str, str]]) -> PairScores:
        import torch

        support = np.zeros(len(pairs), dtype=np.float32)
        with torch.inference_mode():
            for begin in range(0, len(pairs), self.batch_size):
                batch = list(pairs[begin : begin + self.batch_size])
                scores = self.model.predict(batch)
                support[begin : begin + len(batch)] = np.asarray(
                    scores.cpu().numpy() if hasattr(scores, "cpu") else scores, dtype=np.float32
                ).reshape(-1)
        return PairScores(support=support)
