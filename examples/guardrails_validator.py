"""groundwire as a Guardrails AI validator, offline: python examples/guardrails_validator.py
(pip install 'groundwire[guardrails]'). Guardrails sends usage metrics unless told not to: run
`guardrails configure --disable-metrics --disable-remote-inferencing` once (it writes ~/.guardrailsrc). With nltk
installed, `import guardrails` downloads NLTK's punkt tokenizer when it is missing; offline, install it first."""

from guardrails import Guard

from groundwire.adapters.guardrails import GroundwireGrounded

context = ["Refunds are accepted within 30 days of purchase. Shipping takes 5 business days. "
           "Support answers email on weekdays between 9 am and 5 pm."]
answers = {
    "faithful": "Refunds are accepted within 30 days of purchase.",
    "fabricated": "Refunds are accepted within 90 days. Shipping takes 5 business days.",
    "plausible": "Support is open on weekdays from 9am to 5pm CET.",
}
# on_fail="noop": report and go on; ESCALATE fails too (on_escalate="fail"), its reason starting "escalated:"
guard = Guard().use(GroundwireGrounded(on_fail="noop"))
for name, answer in answers.items():
    outcome = guard.validate(answer, metadata={"chunks": context})
    print(f"{name}: passed {outcome.validation_passed}")
    for summary in outcome.validation_summaries:
        print(summary.failure_reason)

# on_fail="fix": the failing answer is replaced by groundwire's repair (unsupported claims dropped)
fixing = Guard().use(GroundwireGrounded(on_fail="fix"))
print("fixed:", fixing.validate(answers["fabricated"], metadata={"chunks": context}).validated_output)
