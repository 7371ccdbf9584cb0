// memory-bench's TypeScript SDK client: the Client of
// @modelcontextprotocol/sdk, the one Claude Desktop, Claude Code and VS Code
// are built on, talking to a server over this process's stdin (the server's
// stdout, passed through memory-bench, which notes when each answer's last
// byte arrives) and stdout (the server's stdin).
//
// memory-bench sends commands as JSON lines on fd 3 and reads the answers,
// one JSON line each, on fd 4, one command at a time, after {"id":0} once
// the SDK is loaded:
//
//	{"id":1,"op":"connect","timeoutMs":600000}
//	  -> {"id":1,"protocol":"2025-11-25","tools":9}
//	{"id":2,"op":"call","tool":"read_graph","args":{},"timeoutMs":300000}
//	  -> {"id":2,"ms":12.3,"result":{...}}   or   {"id":2,"ms":12.3,"error":"..."}
//
// "ms" is performance.now() around `await client.callTool(...)`: what a
// host waits for, the SDK's reading, parsing and checking of the answer
// included. End of input on fd 3 closes the client and exits, which closes
// the server's stdin.
//
// With --describe it prints the SDK's version and the protocol version its
// client asks for, and exits. --protocol V makes the client ask for V in
// initialize instead of the SDK's latest.
import fs from 'node:fs';
import net from 'node:net';
import process from 'node:process';
import readline from 'node:readline';
import { performance } from 'node:perf_hooks';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

const sdkVersion = JSON.parse(
  fs.readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8'),
).version;

let protocol = '';
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--describe') {
    process.stdout.write(JSON.stringify({ sdk: sdkVersion, protocol: LATEST_PROTOCOL_VERSION, supported: SUPPORTED_PROTOCOL_VERSIONS }) + '\n');
    process.exit(0);
  } else if (argv[i] === '--protocol' && i + 1 < argv.length) {
    protocol = argv[++i];
  } else {
    process.stderr.write(`client.mjs: unknown argument ${argv[i]}\n`);
    process.exit(2);
  }
}

// PipeTransport is the SDK's StdioClientTransport without the spawning: the
// server is memory-bench's to start (it samples the server's memory and
// times its answers on the pipe). Framing is the SDK's own ReadBuffer and
// serializeMessage. One difference: no cap on a message's size. The SDK's
// stdio transports stop at 10 MiB by default (maxBufferSize), below a whole
// read_graph of 10,000 entities; a host that takes such answers raises it.
class PipeTransport {
  constructor(input, output, askProtocol) {
    this.input = input;
    this.output = output;
    this.askProtocol = askProtocol;
    this.readBuffer = new ReadBuffer({ maxBufferSize: Infinity });
    this.protocolVersion = '';
  }

  async start() {
    this.input.on('data', (chunk) => {
      try {
        this.readBuffer.append(chunk);
        this.processReadBuffer();
      } catch (error) {
        this.onerror?.(error);
      }
    });
    this.input.on('error', (error) => this.onerror?.(error));
    this.input.on('end', () => this.onclose?.());
    this.output.on('error', (error) => this.onerror?.(error));
  }

  processReadBuffer() {
    for (;;) {
      let message;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        this.onerror?.(error);
        continue;
      }
      if (message === null) {
        return;
      }
      this.onmessage?.(message);
    }
  }

  send(message) {
    if (this.askProtocol && message.method === 'initialize') {
      message = { ...message, params: { ...message.params, protocolVersion: this.askProtocol } };
    }
    return new Promise((resolve) => {
      if (this.output.write(serializeMessage(message))) {
        resolve();
      } else {
        this.output.once('drain', resolve);
      }
    });
  }

  setProtocolVersion(version) {
    this.protocolVersion = version;
  }

  async close() {
    this.input.pause();
    this.readBuffer.clear();
    this.onclose?.();
  }
}

// reply writes one JSON line to fd 4, all of it before the next command.
function reply(obj) {
  const buf = Buffer.from(JSON.stringify(obj) + '\n');
  for (let off = 0; off < buf.length; ) {
    off += fs.writeSync(4, buf, off);
  }
}

function message(error) {
  return error instanceof Error ? error.message : String(error);
}

let client;
const commands = readline.createInterface({
  input: new net.Socket({ fd: 3, readable: true, writable: false }),
  crlfDelay: Infinity,
});
// Loaded: memory-bench starts the server after this.
reply({ id: 0 });
for await (const line of commands) {
  const cmd = JSON.parse(line);
  const options = { timeout: cmd.timeoutMs };
  switch (cmd.op) {
    case 'connect':
      try {
        client = new Client({ name: 'memory-bench', version: '1' });
        const transport = new PipeTransport(process.stdin, process.stdout, protocol);
        await client.connect(transport, options);
        // As a host does: list the tools once. The client keeps each
        // tool's outputSchema and checks every structuredContent with it.
        const { tools } = await client.listTools(undefined, options);
        reply({ id: cmd.id, protocol: transport.protocolVersion, tools: tools.length });
      } catch (error) {
        reply({ id: cmd.id, error: message(error) });
      }
      break;
    case 'call': {
      const start = performance.now();
      try {
        const result = await client.callTool({ name: cmd.tool, arguments: cmd.args }, undefined, options);
        const ms = performance.now() - start;
        reply({ id: cmd.id, ms, result });
      } catch (error) {
        reply({ id: cmd.id, ms: performance.now() - start, error: message(error) });
      }
      break;
    }
    default:
      reply({ id: cmd.id, error: `unknown command ${JSON.stringify(cmd.op)}` });
  }
}
await client?.close();
process.exit(0);
