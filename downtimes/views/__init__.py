"""Pages of the downtimes app, one module per area; each module lists its own `urlpatterns`,
which `downtimes.urls` joins under /c/<slug>/."""
