"""Pages of the havens app, one module per area; each module lists its own `urlpatterns`,
which `havens.urls` joins under /c/<slug>/."""
