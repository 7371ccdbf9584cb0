# Build: docker build -t mcp/memory .
# Run:   docker run -i -v claude-memory:/app/dist --rm mcp/memory
FROM golang:1.26-alpine AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/mcp-server-memory ./cmd/mcp-server-memory \
 && mkdir -p /out/app/dist

# A static binary needs nothing else. It lives outside /app/dist, so a volume
# mounted there (the seed's layout) keeps the memory and never shadows a newer
# binary.
FROM scratch
COPY --from=build /out/mcp-server-memory /usr/local/bin/mcp-server-memory
COPY --from=build /out/app /app
ENV MEMORY_FILE_PATH=/app/dist/memory.jsonl
ENTRYPOINT ["/usr/local/bin/mcp-server-memory"]
