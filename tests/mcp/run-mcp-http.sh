#!/usr/bin/env bash
# `berth mcp` on protocol 2025-11-25 and over the Streamable HTTP transport
# (`berth mcp --listen`) through the official MCP TypeScript SDK client and the
# MCP Inspector's CLI mode (tests/mcp/http.test.mjs; TAP): every revision the
# SDK speaks over stdio and HTTP, tasks, URL-mode elicitation, the transport's
# refusals (401, 403, 400, 404, a non-loopback address).  The npm packages are
# run-mcp.sh's install (tests/mcp/node_modules).
#
# usage: tests/mcp/run-mcp-http.sh /path/to/berth /path/to/repo
exec bash "$(dirname "$0")/run-mcp.sh" "$@" http.test.mjs
