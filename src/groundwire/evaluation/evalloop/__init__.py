"""The eval loop: quality metrics over a frozen set and a rolling sample of the request log.

Metrics, overall and per release and per segment:
- faithfulness: mean share of SUPPORTED claims per answered (non-refused) answer with claims
- grounded_rate: share of answered answers whose claims are all SUPPORTED
- refusal_rate, escalation_rate: share of answers refused / with any claim sent to escalation
- retrieval_hit_rate: share of answers whose gold passage was retrieved (only where gold is known)
- claim_density: concrete claims per answered answer; non_answer_rate: answered answers with none
  (hedged non-answers score perfect faithfulness, so they are caught here instead)
- thumbs_down_rate: share of answers with feedback that got a thumbs down or a correction (log only)

Failures (an unsupported claim, or a gold "hallucinated" label) are split by one question: was the supporting
evidence in the retrieved set? (retrieval miss, generator drift or undetermined: evidence.py says how.)

One module per job:
- items.py: the answers under evaluation, from the frozen set or the request log
- evidence.py: the failure partition, its corpus search and the budget that bounds it
- summary.py: the metrics above, per group, and a run's summary
- loop.py: one run (`run_eval_loop`), recorded in the store's history
- page.py: the HTML report (`render_html`)
"""

from __future__ import annotations

from groundwire.evaluation.evalloop.evidence import EvidenceBudget
from groundwire.evaluation.evalloop.loop import EvalLoopResult, run_eval_loop
from groundwire.evaluation.evalloop.page import render_html

__all__ = ["EvalLoopResult", "EvidenceBudget", "render_html", "run_eval_loop"]
