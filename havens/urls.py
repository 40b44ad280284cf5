"""Pages of the havens app, under /c/<slug>/ (the project's urls.py includes them)."""

from .views import havens, searches

urlpatterns = [*havens.urlpatterns, *searches.urlpatterns]
