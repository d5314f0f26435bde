# gitops-lint in a container: a static (musl) binary on distroless, as a non-root user.
#   docker build -t gitops-lint .
#   docker run --rm -v "$PWD:/repo" gitops-lint check
# The image has no git, so `--new-since` is not available in it; `--fix` needs write access to
# the mounted files (add `--user "$(id -u):$(id -g)"`).
FROM rust:1.95-alpine AS build
# hadolint ignore=DL3018
RUN apk add --no-cache musl-dev make
WORKDIR /src
COPY . .
# On musl targets Rust links statically by default.
RUN cargo build --release --locked --bin gitops-lint \
    && strip target/release/gitops-lint

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/target/release/gitops-lint /usr/local/bin/gitops-lint
USER 65532:65532
WORKDIR /repo
ENTRYPOINT ["gitops-lint"]
CMD ["check"]
