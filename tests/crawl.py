"""The route walker the secrecy crawls share: every URL pattern of the project, and a path for
it with its parameters filled in."""

from __future__ import annotations

import re
from collections.abc import Iterator

from django.urls import URLPattern, URLResolver, get_resolver


def patterns(
    resolver: URLResolver | None = None, prefix: str = ""
) -> Iterator[tuple[str, URLPattern]]:
    for entry in (resolver or get_resolver()).url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from patterns(entry, route)
        else:
            yield route, entry


def params(route: str) -> list[str]:
    return re.findall(r"<(?:\w+:)?(\w+)>", route) + re.findall(r"\(\?P<(\w+)>", route)


def fill(route: str, values: dict[str, str]) -> str | None:
    """Turn a route ("c/<slug:slug>/havens/<int:pk>/" or a DRF regex) into a path, or None
    when a parameter has no value (or the route is a format-suffix variant)."""
    # A DRF route nested under a prefix has its anchors mid-string ("api/^chronicles/…$").
    path = route.replace("^", "").replace("$", "")
    path = re.sub(r"\\\.\(\?P<format>[^)]*\)/?", "", path)
    if "format" in path:
        return None

    def converter(match: re.Match[str]) -> str:
        return values.get(match.group(1), "\0")

    # Regex groups first: "(?P<slug>[-\w]+)" holds a "<slug>" the converter rule would eat.
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", converter, path)
    path = re.sub(r"<(?:\w+:)?(\w+)>", converter, path)
    if "\0" in path or "(" in path or "\\" in path:
        return None
    return "/" + path


def all_paths(slug: str, ids: list[str], game_number: int) -> set[str]:
    """Every GET-able path of the project (admin and accounts aside), each id parameter filled
    with every id given."""
    paths: set[str] = set()
    for route, _pattern in patterns():
        if route.startswith(("admin/", "accounts/")):
            continue
        names = [n for n in params(route) if n not in ("slug", "format")]
        fills: list[dict[str, str]] = [{}]
        for name in names:
            choices = [str(game_number)] if name == "number" else ids
            if name == "action":
                choices = ["transfer"]
            fills = [dict(f, **{name: c}) for f in fills for c in choices]
        for values in fills[:400]:
            path = fill(route, {"slug": slug, **values})
            if path is not None:
                paths.add(path)
    return paths
