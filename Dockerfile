# Build: docker build -t kgmemory/server-memory .
# Run:   docker run -i -v claude-memory:/app/dist --rm kgmemory/server-memory
# A release stamps its version (--version):
#   docker build --build-arg VERSION=1.2.0 --build-arg COMMIT=$(git rev-parse HEAD) -t kgmemory/server-memory:1.2.0 .
FROM golang:1.26-alpine AS build
ARG VERSION=
ARG COMMIT=
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.releaseVersion=${VERSION} -X main.releaseCommit=${COMMIT}" \
      -o /out/mcp-server-memory ./cmd/mcp-server-memory \
 && mkdir -p /out/app/dist

# A static binary needs nothing else. It lives outside /app/dist, so a volume
# mounted there (the seed's layout) keeps the memory and never shadows a newer
# binary. packaging/docker_test.go builds this stage from a release binary
# with podman and checks its entry point, environment and files.
FROM scratch
COPY --from=build /out/mcp-server-memory /usr/local/bin/mcp-server-memory
COPY --from=build /out/app /app
ENV MEMORY_FILE_PATH=/app/dist/memory.jsonl
ENTRYPOINT ["/usr/local/bin/mcp-server-memory"]
