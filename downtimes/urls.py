"""Pages of the downtimes app, under /c/<slug>/ (the project's urls.py includes them)."""

from .views import cycles, desk, submissions, votes

urlpatterns = [
    *submissions.urlpatterns,
    *desk.urlpatterns,
    *votes.urlpatterns,
    *cycles.urlpatterns,
]
