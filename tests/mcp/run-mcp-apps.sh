#!/usr/bin/env bash
# The first-party apps git, postgres, terminal and browser (apps/*) against real
# services, through `berth mcp` and the official MCP TypeScript SDK client
# (tests/mcp/apps.test.mjs; TAP): Debian's `git http-backend` over HTTPS on
# loopback (tests/apps/git-http.py), a PostgreSQL cluster the test makes
# with initdb and starts with pg_ctl (once, on a loopback port), bash on a
# pseudo-terminal, Debian's headless Chromium (one start for every check)
# against HTTP servers of the test on loopback.  The SDK is run-mcp.sh's install (tests/mcp/node_modules).
#
# usage: tests/mcp/run-mcp-apps.sh /path/to/berth /path/to/repo
exec bash "$(dirname "$0")/run-mcp.sh" "$@" apps.test.mjs
