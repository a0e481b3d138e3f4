"""Where the embedded API server may listen: loopback freely, anything else only securely.

The server is a development and test tool holding whatever its clients wrote; on a
non-loopback address it is reachable by other hosts. Invariant: `check_bind` refuses any
host that is not a loopback address (127.0.0.0/8, ::1, `localhost`) — including "" and
0.0.0.0, which mean every interface — unless the server serves HTTPS and authenticates
requests (a token, or an RBAC authorizer's tokens).
"""

from __future__ import annotations

import ipaddress


class InsecureBind(ValueError):
    """A non-loopback bind without TLS and authentication (the message is one line)."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def check_bind(host: str, *, tls: bool, authenticated: bool) -> None:
    if is_loopback(host) or (tls and authenticated):
        return
    missing = " and ".join(n for n, ok in (("--tls", tls), ("--token", authenticated))
                           if not ok)
    shown = host or "all interfaces"
    raise InsecureBind(f"refusing to serve on non-loopback address {shown} without {missing}: "
                       "other hosts could read and change every object (bind 127.0.0.1, or "
                       "add --tls --token)")
