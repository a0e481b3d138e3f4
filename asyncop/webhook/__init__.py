"""A webhook server for operators: validating, mutating and conversion handlers over HTTPS.

- `review`: what a handler receives (`AdmissionRequest`) and how it says no (`Denied`);
- `jsonpatch`: the RFC 6902 patch between the object a mutating handler got and the one it
  returns (webhooks answer with patches, handlers just return the object they want);
- `server`: `WebhookServer` (aiohttp, TLS with a development certificate from
  `asyncop.certs` unless you give it one) and the configuration manifests pointing at it.

The server is independent of the Manager: webhooks must answer in every replica, not only the
leader (controller-runtime's webhook server does not take part in leader election either).
"""

from asyncop.webhook.review import AdmissionRequest, Denied
from asyncop.webhook.server import WebhookServer

__all__ = ["AdmissionRequest", "Denied", "WebhookServer"]
