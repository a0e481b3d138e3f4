"""Admission and conversion webhooks of the embedded API server.

- `config`: Mutating/ValidatingWebhookConfiguration defaults, validation, rule matching;
- `matchconditions`: the CEL conditions that decide whether a webhook is called;
- `caller`: reaching a webhook (url or service → Endpoints), TLS with its caBundle, failures
  worded like kube's;
- `admission`: the mutating chain (with reinvocation) and the validating fan-out;
- `pipeline`: kube's write order around the synchronous Writer (mutate → validate → commit);
- `conversion`: ConversionReview calls for CRDs with `conversion.strategy: Webhook`.

Layering inside: config/matchconditions < caller < admission < pipeline; nothing here is
imported by the Writer except `config` (defaults and validation of the configurations).
"""
