# The image docker-compose.yml runs as web, worker and beat. (Not buildable on the development
# machines, which have no Docker engine; tests check the compose file's shape instead.)
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
# WeasyPrint (the PDFs): Pango, HarfBuzz's font subsetter, and a font with every Italian and
# Catalan letter.
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md ./
COPY chronicle chronicle
COPY characters characters
COPY havens havens
COPY downtimes downtimes
COPY templates templates
COPY manage.py ./
# Outside var/, which docker-compose.yml mounts as a volume that outlives the image: collected
# files there would be the first image's forever.
ENV STATIC_ROOT=/app/staticfiles
# Editable, so gunicorn and celery import the same copy, beside templates/.
RUN pip install --no-cache-dir -e . \
    && SECRET_KEY=build-only DEBUG=0 python manage.py collectstatic --noinput
RUN useradd --system --home /app chronicle && mkdir -p /app/var && chown chronicle /app/var
USER chronicle
EXPOSE 8000
CMD ["gunicorn", "chronicle.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
