"""Issue 58: the checks of one task on one context share their context work (core.memo).

bench/hostile.py's repair of a short answer against 200,000 characters of '[1][2][3]' took more than 10 s: repair
checks the answer, then each part of a claim it splits, and each check read the whole context again (every window's
figures, the context's figure index). These tests count that work, untimed."""

from __future__ import annotations

from collections import Counter

import pytest

from groundwire.core.memo import remembered, shared_work
from groundwire.core.verifier import Verifier
from groundwire.foundation.types import Chunk
from groundwire.scoring import get_scorer

CONTEXT = [Chunk("S1", " ".join(f"Unit {n} runs at {n % 90 + 5} bar and costs {n} dollars." for n in range(60)))]
ANSWERS = ("Unit 3 runs at 8 bar.", "Unit 4 costs 4 dollars.", "Unit 5 runs at 10 bar and costs 5 dollars.")


def test_remembered_computes_once_inside_shared_work_and_every_time_outside() -> None:
    calls: Counter[str] = Counter()

    def compute(key: str) -> str:
        calls[key] += 1
        return key.upper()

    assert [remembered("k", "a", lambda: compute("a")) for _ in range(2)] == ["A", "A"]
    assert calls["a"] == 2  # nothing is kept outside shared_work
    with shared_work():
        with shared_work():  # nested: the outer memo
            assert remembered("k", "b", lambda: compute("b")) == "B"
        assert remembered("k", "b", lambda: compute("b")) == "B"
        assert remembered("other kind", "b", lambda: compute("b")) == "B"
    assert calls["b"] == 2  # once per kind
    with shared_work():  # a new task starts empty
        remembered("k", "b", lambda: compute("b"))
    assert calls["b"] == 3


def test_a_computation_that_raises_keeps_nothing() -> None:
    def fail() -> str:
        raise RuntimeError("stopped")

    with shared_work():
        with pytest.raises(RuntimeError):
            remembered("k", "a", fail)
        assert remembered("k", "a", lambda: "done") == "done"


def _counting(monkeypatch: pytest.MonkeyPatch) -> tuple[Counter[str], Counter[int]]:
    """Count the texts the verifier compares (figures in one spelling) and the context indexes it builds."""
    from groundwire.core import verifier as verifier_module
    from groundwire.core.checks.context import ContextIndex

    compared: Counter[str] = Counter()
    built: Counter[int] = Counter()
    canonical, build = verifier_module.canonical_text, ContextIndex.build.__func__  # type: ignore[attr-defined]

    def counted_canonical(text: str) -> str:
        compared[text] += 1
        return canonical(text)

    def counted_build(cls: type[ContextIndex], chunks: object, **options: object) -> ContextIndex:
        built[len(chunks)] += 1  # type: ignore[arg-type]
        return build(cls, chunks, **options)

    monkeypatch.setattr(verifier_module, "canonical_text", counted_canonical)
    monkeypatch.setattr(ContextIndex, "build", classmethod(counted_build))
    return compared, built


def test_checks_of_one_task_read_the_context_once(monkeypatch: pytest.MonkeyPatch) -> None:
    compared, built = _counting(monkeypatch)
    verifier = Verifier(get_scorer("lexical"))
    assert verifier.canonical_figures
    with shared_work():
        reports = [verifier.verify(answer, CONTEXT) for answer in ANSWERS]
    windows = {window.text for window in verifier.plan(ANSWERS[0], CONTEXT).windows}
    assert len(windows) > 1
    assert all(compared[text] == 1 for text in windows)  # each window compared once, for the three checks
    assert compared[CONTEXT[0].text] == 1
    assert sum(built.values()) == 1
    # The same reports as checks that share nothing.
    compared.clear()
    alone = [verifier.verify(answer, CONTEXT) for answer in ANSWERS]
    assert [r.to_dict() | {"timings": None} for r in reports] == [r.to_dict() | {"timings": None} for r in alone]
    assert all(compared[text] == len(ANSWERS) for text in windows)  # without shared_work: once per check


def test_repair_s_checks_share_their_context_work(monkeypatch: pytest.MonkeyPatch) -> None:
    from groundwire.llm.repair import repair
    from groundwire.pipeline import Checker

    compared, built = _counting(monkeypatch)
    verifier = Verifier(get_scorer("lexical"))
    checker = Checker(verifier)
    checked: list[str] = []

    def check(answer: str, chunks: object, **options: object) -> object:
        checked.append(answer)
        return checker(answer, chunks, **options)  # type: ignore[arg-type]

    # A claim that splits in two, one part supported: repair checks each part against the whole context.
    report = checker("Unit 3 runs at 8 bar and costs 999 dollars.", CONTEXT)
    compared.clear()
    built.clear()
    repaired = repair(report, CONTEXT, check=check)  # type: ignore[arg-type]
    assert repaired.answer == "Unit 3 runs at 8 bar [S1]."
    assert len(checked) == 3  # the two parts, the repaired answer
    assert sum(built.values()) == 1  # one index for the three
    assert max(compared[window.text] for window in verifier.plan("Unit 3 runs at 8 bar.", CONTEXT).windows) == 1


def test_the_opposites_check_reads_each_evidence_word_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from groundwire.core.checks.opposites import opposite_finding
    from groundwire.core.lexicon import lexicon

    looked_up: Counter[str] = Counter()
    lexical = lexicon()
    base_forms = type(lexical).base_forms

    def counted(self: object, word: str) -> frozenset[str]:
        looked_up[word] += 1
        return base_forms(self, word)  # type: ignore[arg-type]

    monkeypatch.setattr(type(lexical), "base_forms", counted)
    lookups = []
    for repeats in (2, 200):
        looked_up.clear()
        evidence = "The valve " + "opens and closes and opens again " * repeats + "daily."
        assert opposite_finding("The valve stays shut.", evidence) is None
        lookups.append(dict(looked_up))
    assert lookups[0] == lookups[1]  # as many lookups for 200 repeats as for 2
