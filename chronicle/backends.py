"""Django's password backend, loading a signed-in user's Profile in the same query.

Every page reads the person's saved language (chronicle.middleware), and pages assert a fixed
number of queries: joined to the user's own lookup, the choice costs no query of its own.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import backends, get_user_model

from .services.mail.inbox import unread_annotation


class ModelBackend(backends.ModelBackend):
    def get_user(self, user_id: Any) -> Any:
        user_model = get_user_model()
        try:
            # A reverse one-to-one left joined: a user without a Profile gets it cached as
            # missing, so asking for it later costs no query either.
            user = (
                user_model._default_manager.select_related("chronicle_profile")
                # The header's unread count, in the same query (chronicle.services.mail).
                .annotate(**unread_annotation())
                .get(pk=user_id)
            )
        except user_model.DoesNotExist:
            return None
        return user if self.user_can_authenticate(user) else None
