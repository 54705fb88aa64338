# The Yahtzee game server. Dependencies come from the hash-checked lock file.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY requirements.lock ./
RUN pip install --require-hashes --no-deps -r requirements.lock

COPY pyproject.toml README.md ./
COPY server ./server
COPY protocol ./protocol
COPY clients ./clients
RUN pip install --no-deps --no-build-isolation . \
    && useradd --create-home --uid 10001 yahtzee

USER yahtzee
EXPOSE 8000
# SIGTERM: finish commands in flight, close sockets with 1012 (service restart).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=2).status != 200)"]
CMD ["yahtzee", "serve", "--host", "0.0.0.0", "--port", "8000"]
