"""The client's address, for login throttling (django-axes) and the password-reset throttle.

Behind N proxies that each append the address they received from to `X-Forwarded-For`
(nginx's `$proxy_add_x_forwarded_for`), the last proxy is `REMOTE_ADDR` and the client is the
Nth address from the right of the header: whatever a client writes into the header itself
stays to the left of it and is never read. `CHRONICLE_PROXY_COUNT` (the `AXES_PROXY_COUNT`
variable) is N; 0, the default, means no proxy: `REMOTE_ADDR` only, the header ignored.

django-ipware does the parsing. Its own proxy count counts the proxies named in the header
(N - 1 here, since the last one is `REMOTE_ADDR`), and it reads only the header we name, so
no other header (`X-Real-IP`, `CF-Connecting-IP`, ...) can be forged into the answer.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from ipware import get_client_ip


def client_ip(request: HttpRequest) -> str | None:
    remote = request.META.get("REMOTE_ADDR")
    count = int(getattr(settings, "CHRONICLE_PROXY_COUNT", 0) or 0)
    if count <= 0:
        return remote
    found, _routable = get_client_ip(
        request,
        proxy_order="left-most",
        proxy_count=count - 1,
        request_header_order=["HTTP_X_FORWARDED_FOR"],
        strict=False,
    )
    # No header, or fewer addresses in it than proxies: the request did not come through all
    # of them, so the nearest hop is all we know.
    return found or remote
