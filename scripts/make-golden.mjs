#!/usr/bin/env node
// make-golden.mjs records what the reference Node server writes for a graph
// full of awkward strings, so the Go codec can be held to it byte for byte
// without needing node at test time.
//
// It starts @modelcontextprotocol/server-memory through npx with
// MEMORY_FILE_PATH set to a temporary file, speaks newline-delimited JSON-RPC
// to it over stdio (initialize, notifications/initialized, then tools/call
// create_entities and create_relations), and copies the memory file the
// reference wrote to testdata/golden/reference-<version>.jsonl. The input
// graph goes to testdata/golden/graph.json.
//
// The graph repeats no entity name and no observation within an entity: the
// reference writes a name repeated within one create_entities call twice and
// keeps repeated observations, where our graph merges both, so repeats would
// make the two files differ for reasons that are not the codec's.
//
// Usage: node scripts/make-golden.mjs   (or scripts/make-golden.sh)

import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const VERSION = process.env.REFERENCE_VERSION ?? '2026.8.31';
const PACKAGE = `@modelcontextprotocol/server-memory@${VERSION}`;
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(repo, 'testdata', 'golden');

// Every C0 control character, then DEL.
const controls = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('') + '\x7f';

const graph = {
  entities: [
    {
      name: 'Alice',
      entityType: 'person',
      observations: [
        'Works at Acme Corp',
        'Likes <b>bold</b> & "quoted" text',
        'Keeps notes in C:\\Users\\alice\\memory.jsonl',
        '',
      ],
    },
    {
      name: '山田太郎',
      entityType: '人物',
      observations: ['東京に住んでいる', '好きな食べ物は寿司🍣', '全角ＡＢＣ１２３と半角ｶﾀｶﾅ'],
    },
    {
      name: 'Иван Петров',
      entityType: 'человек',
      observations: ['Живёт в Москве', 'Говорит по-русски и немного по-японски: こんにちは'],
    },
    {
      name: '🧠 Brain',
      entityType: 'emoji',
      observations: [
        'astral plane: 🧠🚀𝄞',
        'ZWJ sequence: 👨‍👩‍👧‍👦 and 👩🏽‍💻',
        'flag: 🇯🇵, keycap: 1️⃣',
      ],
    },
    {
      name: 'Control characters',
      entityType: 'test',
      observations: [
        controls,
        'tab\there',
        'line1\nline2\r\nline3',
        'NUL in the middle: a\u0000b',
        'bell\u0007 backspace\b formfeed\f escape\u001b unit separator\u001f delete\u007f',
      ],
    },
    {
      name: 'Separators\u2028\u2029',
      entityType: 'unicode',
      observations: [
        'LINE SEPARATOR:\u2028 PARAGRAPH SEPARATOR:\u2029',
        'NBSP:\u00a0 BOM:\ufeff ZWSP:\u200b',
        'combining: e\u0301 precomposed: \u00e9',
        '</script><!-- --> & &amp;',
      ],
    },
    { name: 'Empty', entityType: 'thing', observations: [] },
    {
      name: 'quote"and\\backslash',
      entityType: 'type with "quotes"',
      observations: ['\\u0041 is not an escape here', '/ slash is not escaped', '\\'],
    },
    { name: '  spaced name  ', entityType: '', observations: ['name with leading and trailing spaces'] },
  ],
  relations: [
    { from: 'Alice', to: '山田太郎', relationType: 'knows' },
    { from: 'Alice', to: 'Иван Петров', relationType: 'knows' },
    { from: 'Alice', to: 'Иван Петров', relationType: 'works_with' },
    { from: '山田太郎', to: 'Иван Петров', relationType: '友達' },
    { from: 'Иван Петров', to: '🧠 Brain', relationType: 'думает_с' },
    { from: 'Control characters', to: 'Separators\u2028\u2029', relationType: 'rel\twith\u0000controls\u001f' },
    { from: 'quote"and\\backslash', to: 'Empty', relationType: '"quoted" <type> & more' },
    { from: 'Alice', to: 'Alice', relationType: 'likes' },
    { from: '  spaced name  ', to: '🧠 Brain', relationType: 'uses' },
  ],
};

// rpc talks newline-delimited JSON-RPC to the child's stdio.
function rpc(child) {
  let nextId = 1;
  let buffered = '';
  const pending = new Map();
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buffered += chunk;
    let i;
    while ((i = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      if (line.trim() === '') continue;
      const msg = JSON.parse(line);
      if (msg.id !== undefined && pending.has(msg.id)) {
        pending.get(msg.id)(msg);
        pending.delete(msg.id);
      }
    }
  });
  const send = (msg) => child.stdin.write(JSON.stringify(msg) + '\n');
  return {
    notify: (method, params) => send({ jsonrpc: '2.0', method, params }),
    call(method, params, timeoutMs = 30_000) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${method}: no answer in ${timeoutMs} ms`)), timeoutMs);
        pending.set(id, (msg) => {
          clearTimeout(timer);
          if (msg.error) reject(new Error(`${method}: ${JSON.stringify(msg.error)}`));
          else resolve(msg.result);
        });
        send({ jsonrpc: '2.0', id, method, params });
      });
    },
  };
}

async function callTool(client, name, args) {
  const result = await client.call('tools/call', { name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

const dir = mkdtempSync(path.join(tmpdir(), 'make-golden-'));
const memoryFile = path.join(dir, 'memory.jsonl');
const child = spawn('npx', ['-y', PACKAGE], {
  env: { ...process.env, MEMORY_FILE_PATH: memoryFile },
  stdio: ['pipe', 'pipe', 'inherit'],
});
const exited = new Promise((resolve) => child.on('exit', resolve));
try {
  const client = rpc(child);
  // The first call waits for npx to install the package.
  await client.call(
    'initialize',
    {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'make-golden', version: '1.0.0' },
    },
    300_000,
  );
  client.notify('notifications/initialized');
  const created = await callTool(client, 'create_entities', { entities: graph.entities });
  if (created.entities.length !== graph.entities.length) {
    throw new Error(`create_entities created ${created.entities.length} of ${graph.entities.length}`);
  }
  const related = await callTool(client, 'create_relations', { relations: graph.relations });
  if (related.relations.length !== graph.relations.length) {
    throw new Error(`create_relations created ${related.relations.length} of ${graph.relations.length}`);
  }
  const written = readFileSync(memoryFile);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, `reference-${VERSION}.jsonl`), written);
  writeFileSync(path.join(outDir, 'graph.json'), JSON.stringify(graph, null, 2) + '\n');
  console.error(`wrote ${path.relative(repo, outDir)}/reference-${VERSION}.jsonl (${written.length} bytes) and graph.json`);
} finally {
  child.stdin.end();
  child.kill();
  await exited;
  rmSync(dir, { recursive: true, force: true });
}
