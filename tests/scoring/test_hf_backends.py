"""The Hugging Face backends' real loading and batching code, on tiny random models built here (nothing is downloaded)."""

import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from groundwire import Chunk, Verifier  # noqa: E402
from groundwire.scoring import get_scorer  # noqa: E402
from groundwire.scoring.hf import label_indices  # noqa: E402

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "castle", "faces", "harbor", "river", "museum", "opens",
         "at", "nine", "tower", "is", "tall", ".", "number", "garden", "green", "0", "1", "2", "3", "4", "5", "6", "7",
         "8", "9", "##0", "##1", "##2", "##3", "##4", "##5", "##6", "##7", "##8", "##9"]


def build_tiny_nli(path, id2label, *, max_positions=64):
    torch.manual_seed(0)
    (path / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(path / "vocab.txt"), model_max_length=max_positions)
    tokenizer.save_pretrained(path)
    config = transformers.BertConfig(
        vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=max_positions, num_labels=len(id2label), id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )
    transformers.BertForSequenceClassification(config).eval().save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory):
    return build_tiny_nli(tmp_path_factory.mktemp("nli"), {0: "entailment", 1: "neutral", 2: "contradiction"})


def test_labels_are_read_from_the_config(tmp_path, nli_dir):
    scorer = get_scorer(f"hf:{nli_dir}")
    assert (scorer.support_index, scorer.contradiction_index) == (0, 2)
    assert scorer.max_tokens == 64
    reordered = build_tiny_nli(tmp_path, {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"})
    assert (get_scorer(f"hf:{reordered}").support_index, get_scorer(f"hf:{reordered}").contradiction_index) == (2, 0)
    assert label_indices({0: "not_entailment", 1: "entailment"}, 2) == (1, None)
    assert label_indices({0: "LABEL_0", 1: "LABEL_1"}, 2) == (1, None)
    assert label_indices({0: "LABEL_0"}, 1) == (0, None)
    with pytest.raises(ValueError, match="id2label"):
        label_indices({0: "apple", 1: "pear", 2: "plum"}, 3)


def test_batching_does_not_change_scores(nli_dir):
    scorer = get_scorer(f"hf:{nli_dir}")
    pairs = [("the castle faces the harbor .", "the castle faces the river ."),
             ("the museum opens at nine . the tower is tall . the garden is green .", "the tower is tall ."),
             ("the tower is tall .", "the museum opens at 9 ."),
             ("the garden is green .", "the garden is green .")]
    batched = scorer.score(pairs)
    single = [scorer.score([pair]) for pair in pairs]
    np.testing.assert_allclose(batched.support, [s.support[0] for s in single], atol=1e-5)
    np.testing.assert_allclose(batched.contradiction, [s.contradiction[0] for s in single], atol=1e-5)
    assert ((batched.support >= 0) & (batched.support + batched.contradiction <= 1 + 1e-6)).all()
    assert not batched.truncated.any()


def test_long_chunks_are_windowed_to_the_model_window(nli_dir):
    scorer = get_scorer(f"hf:{nli_dir}")
    seen = []
    original = scorer.score

    def spy(pairs):
        seen.extend(pairs)
        return original(pairs)

    scorer.score = spy
    long_text = " ".join(["the tower is tall . the garden is green ."] * 40)
    report = Verifier(scorer).verify("The castle faces the harbor.", [Chunk("k", long_text)])
    lengths = [len(scorer.tokenizer(p, h)["input_ids"]) for p, h in seen]
    assert len(seen) > 5 and max(lengths) <= 64
    assert report.claims[0].scored and report.claims[0].chunk_id == "k"


def test_hhem_style_remote_code_model(tmp_path):
    module = tmp_path / "modeling_tinyhhem.py"
    module.write_text(textwrap.dedent('''
        import torch
        from transformers import PretrainedConfig, PreTrainedModel


        class TinyHHEMConfig(PretrainedConfig):
            model_type = "tinyhhem"


        class TinyHHEM(PreTrainedModel):
            """Like HHEM-2.1-Open: a classifier with predict(pairs) -> consistency scores in [0, 1]."""

            config_class = TinyHHEMConfig

            def __init__(self, config):
                super().__init__(config)
                self.weight = torch.nn.Parameter(torch.tensor([8.0]))
                self.post_init()

            def predict(self, pairs):
                overlaps = []
                for premise, hypothesis in pairs:
                    p, h = set(premise.lower().split()), set(hypothesis.lower().split())
                    overlaps.append(len(p & h) / max(len(h), 1))
                return torch.sigmoid(self.weight * (torch.tensor(overlaps) - 0.5))
    '''))
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("modeling_tinyhhem", module)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules["modeling_tinyhhem"] = loaded  # save_pretrained copies the class's source file from here
    spec.loader.exec_module(loaded)
    loaded.TinyHHEMConfig.register_for_auto_class()
    loaded.TinyHHEM.register_for_auto_class("AutoModelForSequenceClassification")
    model_dir = tmp_path / "hhem"
    loaded.TinyHHEM(loaded.TinyHHEMConfig()).save_pretrained(model_dir)
    (model_dir / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    transformers.BertTokenizerFast(vocab_file=str(model_dir / "vocab.txt")).save_pretrained(model_dir)

    scorer = get_scorer(f"hhem:{model_dir}")
    scores = scorer.score([("the castle faces the harbor", "the castle faces the harbor"),
                           ("the castle faces the harbor", "the museum opens at nine")])
    assert scores.contradiction is None
    assert scores.support[0] > 0.8 > 0.2 > scores.support[1]
    report = Verifier(scorer).verify("The castle faces the harbor. The museum opens at nine.",
                                     ["the castle faces the harbor"])
    assert [c.verdict.value for c in report.claims] == ["SUPPORTED", "NOT_FOUND"]
    assert report.model_id == f"hhem:{model_dir}"


def test_unknown_and_incomplete_scorer_names_fail_clearly():
    with pytest.raises(ValueError, match="unknown scorer"):
        get_scorer("nonsense")
    with pytest.raises(ValueError, match="needs a model"):
        get_scorer("hf")


def test_a_hub_id_that_is_not_cached_is_refused_without_any_download(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(ValueError, match="does not download"):
        get_scorer("hf:some-org/some-nli-model")
    with pytest.raises(ValueError, match="does not download"):
        get_scorer("hhem:vectara/hallucination_evaluation_model")
