"""Token authentication that reads in the token owner's language.

A script or app calling the API with a token has no session: the language middleware ran
before DRF knew who was calling, so without this a saved Italian would give English refusals.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from .middleware import activate_saved_language


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        try:
            # The Profile (the saved language) joined, as chronicle.backends does for sessions.
            token = Token.objects.select_related("user__chronicle_profile").get(key=key)
        except ObjectDoesNotExist:
            raise exceptions.AuthenticationFailed(_("Invalid token.")) from None
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return token.user, token

    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        found = super().authenticate(request)
        if found is not None:
            activate_saved_language(request._request, found[0])
        return found
