"""Token authentication (django-rest-knox: hashed, expiring tokens) that reads in the token
owner's language.

A script or app calling the API with a token has no session: the language middleware ran
before DRF knew who was calling, so without this a saved Italian would give English refusals.
Clients send `Authorization: Token <key>` as they always have (knox's AUTH_HEADER_PREFIX).
"""

from __future__ import annotations

import binascii
from hmac import compare_digest
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from knox import auth as knox_auth
from knox.crypto import hash_token
from knox.models import AuthToken
from knox.settings import CONSTANTS
from rest_framework import exceptions

from .middleware import activate_saved_language
from .services import api_tokens


class TokenAuthentication(knox_auth.TokenAuthentication):
    def authenticate_credentials(self, token: bytes) -> tuple[Any, Any]:
        """knox's check (the first characters find the row, the hash of the whole key must
        match it), with the owner's Profile (the saved language) joined in the same query, as
        chronicle.backends does for sessions. An expired token is deleted and refused."""
        invalid = _("Invalid token.")
        try:
            key = token.decode("utf-8")
            digest = hash_token(key)
        except (UnicodeDecodeError, TypeError, binascii.Error):
            raise exceptions.AuthenticationFailed(invalid) from None
        candidates = AuthToken.objects.select_related("user__chronicle_profile").filter(
            token_key=key[: CONSTANTS.TOKEN_KEY_LENGTH]
        )
        for auth_token in candidates:
            if not compare_digest(digest, auth_token.digest):
                continue
            if auth_token.expiry is not None and auth_token.expiry < timezone.now():
                api_tokens.token_expired(token=auth_token)
                break
            if not auth_token.user.is_active:
                raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
            return auth_token.user, auth_token
        raise exceptions.AuthenticationFailed(invalid)

    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        found = super().authenticate(request)
        if found is not None:
            activate_saved_language(request._request, found[0])
        return found
