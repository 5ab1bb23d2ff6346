# syntax=docker/dockerfile:1
# grit's image: the static grit that scripts/release builds, on
# distroless/static (CA certificates, time zones, a nonroot user, no
# shell). docs/install.md says how to build and run it:
#
#   docker build -t grit .
#   docker run --rm grit version

FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Where the build context has no usable .git (a git worktree's .git is a
# file naming a directory outside it), pass the commit:
#   --build-arg GRIT_REVISION=$(git rev-parse HEAD) (and GRIT_VERSION,
#   GRIT_MODIFIED, GRIT_COMMIT_TIME)
ARG GRIT_VERSION GRIT_REVISION GRIT_MODIFIED GRIT_COMMIT_TIME
ARG TARGETOS=linux TARGETARCH=amd64
RUN git config --global --add safe.directory /src && \
    scripts/release -o /out "$TARGETOS/$TARGETARCH" && \
    cp "/out/grit-$TARGETOS-$TARGETARCH" /grit && \
    mkdir /data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /grit /usr/local/bin/grit
# The embedded store's default, sqlite:grit.db, lands in /data: mount a
# volume there to keep it.
COPY --from=build --chown=65532:65532 /data /data
WORKDIR /data
# grit server's API and dashboard (give --listen 0.0.0.0:7420 and
# --http 0.0.0.0:7421 to serve beyond the container).
EXPOSE 7420 7421
ENTRYPOINT ["/usr/local/bin/grit"]
CMD ["--help"]
