// An MCP session with toolgate through the TypeScript SDK, printed as one
// JSON object for the Go test to check.
//
//   node client.mjs stdio BINARY ARG...   starts BINARY ARG... and talks over stdio
//   node client.mjs http URL              talks Streamable HTTP; $TOOLGATE_TOKEN, if set, is sent as a bearer token
//
// With TOOLGATE_MODE=search, the server is in search mode: the tools are
// those search_operations finds, as describe_operation gives them, and
// each is called through call_operation.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [mode, target, ...rest] = process.argv.slice(2);
let transport;
if (mode === 'stdio') {
  transport = new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: 'inherit' });
} else if (mode === 'http') {
  const headers = process.env.TOOLGATE_TOKEN ? { Authorization: `Bearer ${process.env.TOOLGATE_TOKEN}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
} else {
  console.error('usage: client.mjs (stdio BINARY ARG... | http URL)');
  process.exit(2);
}

const client = new Client({ name: 'toolgate-e2e', version: '1.0.0' });
await client.connect(transport);
const search = process.env.TOOLGATE_MODE === 'search';
const report = { server: client.getServerVersion(), tools: [], calls: {} };
const listed = await client.listTools();
if (search) {
  const found = await client.callTool({ name: 'search_operations', arguments: { limit: 50 } });
  for (const m of found.content[0].text.matchAll(/^(\S+) \((?:read|write|destructive|privileged)[,)]/gm)) {
    const described = await client.callTool({ name: 'describe_operation', arguments: { name: m[1] } });
    const d = JSON.parse(described.content[0].text);
    report.tools.push({ name: d.name, annotations: d.annotations, hasOutputSchema: false });
  }
  report.listed = listed.tools.map((t) => t.name);
} else {
  report.tools = listed.tools.map((t) => ({ name: t.name, annotations: t.annotations, hasOutputSchema: !!t.outputSchema }));
}

async function call(label, name, args) {
  try {
    const res = search
      ? await client.callTool({ name: 'call_operation', arguments: { name, arguments: args } })
      : await client.callTool({ name, arguments: args });
    report.calls[label] = { isError: !!res.isError, text: res.content.map((c) => c.text).join('\n'), structured: res.structuredContent ?? null };
  } catch (e) {
    report.calls[label] = { protocolError: String(e.message ?? e) };
  }
}
await call('list', 'listOrders', {});
await call('create', 'createOrder', { body: { sku: 'A1', quantity: 2 } });
await call('invalid', 'createOrder', { body: { sku: 'A1', quantity: 0 } });
await call('lost', 'createOrder', { body: { sku: 'B7', quantity: 1 } });
await call('again', 'createOrder', { body: { sku: 'B7', quantity: 1 } });
await call('hidden', 'deleteOrder', { id: 'o1' });
console.log(JSON.stringify(report));
await client.close();
