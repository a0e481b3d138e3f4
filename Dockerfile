# asyncop operator image: small, non-root, runs `asyncop run`.
# Build: docker build -t asyncop:0.1.0 .
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md setup.py compiled.txt ./
COPY asyncop ./asyncop
# ASYNCOP_PURE=1: the image runs operators against a cluster; the modules compiled.txt lists
# speed up the embedded API server, and compiling them needs gcc in this stage
RUN python -m venv /opt/asyncop \
 && ASYNCOP_PURE=1 /opt/asyncop/bin/pip install --no-compile ".[fast,otel]" \
 && find /opt/asyncop -name '__pycache__' -prune -exec rm -rf {} +

FROM python:3.11-slim
LABEL org.opencontainers.image.title="asyncop" \
      org.opencontainers.image.description="asyncio Kubernetes operators (at, foo, network, crdkind, jinghzhu, podlogger)" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PATH=/opt/asyncop/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# openssl: the self-signed certificate of --metrics-secure (and of dev webhook servers)
RUN apt-get update && apt-get install -y --no-install-recommends openssl \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 65532 asyncop \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin asyncop
COPY --from=build /opt/asyncop /opt/asyncop
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["asyncop", "run"]
CMD ["--log-format=json"]
