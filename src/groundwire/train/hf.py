"""Typed loaders over transformers, whose `AutoTokenizer.from_pretrained` is untyped: the one place the
training code takes its tokenizers from, so everything downstream of a load is type-checked."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase, PreTrainedTokenizerFast


def load_tokenizer(source: str | Path) -> PreTrainedTokenizerBase:
    """The checkpoint's tokenizer (the fast one where the model has one)."""
    from transformers import AutoTokenizer

    return cast("PreTrainedTokenizerBase", AutoTokenizer.from_pretrained(str(source)))  # type: ignore[no-untyped-call]


def load_fast_tokenizer(source: str | Path) -> PreTrainedTokenizerFast:
    """The checkpoint's fast tokenizer: the bundle ships its tokenizer.json, which only a fast tokenizer has."""
    return cast("PreTrainedTokenizerFast", load_tokenizer(source))
