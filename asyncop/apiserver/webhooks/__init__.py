"""Admission and conversion webhooks of the embedded API server.

- configurations and match conditions live in `core` (`webhookconfig`, `matchconditions`):
  the store validates configurations on write, so they sit below it;
- `caller`: reaching a webhook (url or service → Endpoints), TLS with its caBundle, failures
  worded like kube's;
- `admission`: the mutating chain (with reinvocation) and the validating fan-out;
- `pipeline`: kube's write order around the synchronous Writer (mutate → validate → commit);
- `conversion`: ConversionReview calls for CRDs with `conversion.strategy: Webhook`.

Layering inside: caller < admission < pipeline; conversion uses the caller. The Writer does
not import this package; the HTTP layer does.
"""
