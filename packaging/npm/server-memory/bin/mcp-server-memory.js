#!/usr/bin/env node
// Runs the mcp-server-memory binary of this platform, which npm installed
// from one of the optional dependencies (@kgmemory/server-memory-<os>-<cpu>,
// chosen by their "os" and "cpu" fields). Nothing is downloaded here or at
// install time. stdin, stdout and stderr are the binary's own, so the MCP
// stream passes through untouched; signals are forwarded and the binary's
// exit code (or signal) becomes ours.
'use strict';

const { spawn } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');

const self = require('../package.json');
const key = `${process.platform}-${process.arch}`;
const pkg = `${self.name}-${key}`;

function fail(message) {
  process.stderr.write(`${self.name}: ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  const supported = Object.keys(self.optionalDependencies || {}).map((name) => name.slice(self.name.length + 1));
  if (!supported.includes(key)) {
    fail(`no binary for this platform (${key}); supported: ${supported.join(', ')}. Build it from source: https://github.com/kgmemory/mcp-server-memory`);
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    fail(`the package ${pkg} holding this platform's binary is not installed; reinstall without --omit=optional or --no-optional`);
  }
  return path.join(dir, 'bin', process.platform === 'win32' ? 'mcp-server-memory.exe' : 'mcp-server-memory');
}

const binary = binaryPath();
const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit', windowsHide: true });

// Forward the signals a client or a terminal sends; the server shuts down
// cleanly on them (finishing writes and releasing its lock) and exits, and
// we exit after it.
const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const handlers = {};
for (const sig of forwarded) {
  handlers[sig] = () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(sig);
    }
  };
  process.on(sig, handlers[sig]);
}

// `npx` runs us through `sh -c`, and when the client stops npx with SIGTERM
// npm passes it to that shell only, which dies without passing it on. A new
// parent means whoever started us is gone: stop the server as SIGTERM would.
const parent = process.ppid;
const orphanWatch = setInterval(() => {
  if (process.ppid !== parent) {
    clearInterval(orphanWatch);
    handlers.SIGTERM();
  }
}, 250);
orphanWatch.unref();

child.on('error', (err) => fail(`cannot run ${binary}: ${err.message}`));

child.on('exit', (code, signal) => {
  if (signal === null) {
    process.exit(code === null ? 1 : code);
  }
  // Die of the same signal, so our parent sees what ended the server; where
  // that signal cannot end us, exit 128+n as a shell reports it.
  for (const sig of forwarded) {
    process.removeListener(sig, handlers[sig]);
  }
  process.exitCode = 128 + (os.constants.signals[signal] || 0);
  try {
    process.kill(process.pid, signal);
  } catch {
    process.exit();
  }
});
