"""Counting requests in Django's cache (the password-reset throttle, issue 16).

A fixed window per key: the first request starts it, each request adds one, and once the count
passes the limit the key is refused until the window ends. `cache.add` and `cache.incr` are
atomic on Redis and Memcached, and per process on the local-memory cache.
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache


def cache_key(scope: str, value: str) -> str:
    """The key for `value` (an address, a client's address) in `scope`, hashed: no address is
    written to the cache, and any value makes a valid key."""
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()
    return f"chronicle:throttle:{scope}:{digest}"


def hit(key: str, *, limit: int, window: int) -> bool:
    """Count one request under `key`; True while it is within `limit` for this window."""
    cache.add(key, 0, timeout=window)
    try:
        count = cache.incr(key)
    except ValueError:  # the window ended between add and incr: this starts the next one
        cache.add(key, 1, timeout=window)
        count = 1
    return count <= limit
