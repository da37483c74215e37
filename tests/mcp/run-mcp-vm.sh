#!/usr/bin/env bash
# `berth mcp --runtime vm` through the official MCP TypeScript SDK client
# (tests/mcp/vm.test.mjs; TAP): the probe app booted in a microVM, its tools
# listed and called, what ran where, a denial, the audit trail, cleanup.  The
# SDK is run-mcp.sh's install (tests/mcp/node_modules); the guest is installed
# into the run's temporary directory from the .deb cache the vm suite shares.
#
# usage: tests/mcp/run-mcp-vm.sh /path/to/berth /path/to/repo
exec bash "$(dirname "$0")/run-mcp.sh" "$@" vm.test.mjs
