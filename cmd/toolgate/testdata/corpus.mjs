// A TypeScript SDK client's session with toolgate serving one document:
// list the tools, page by page, then call a few with no arguments.
// Printed as one JSON object for the Go test to check.
//
//   node corpus.mjs BINARY ARG...   starts BINARY ARG... and talks over stdio
//
// Tools with required arguments are called with {}: toolgate must refuse
// them before sending anything. Up to two read tools without required
// arguments are called too, so that the Go test sees requests arrive.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [binary, ...args] = process.argv.slice(2);
const report = { connected: false, listed: 0, unique: 0, pages: 0, largestPage: 0, listError: null, calls: [] };
const transport = new StdioClientTransport({ command: binary, args, env: process.env, stderr: 'inherit' });
const client = new Client({ name: 'toolgate-corpus', version: '1.0.0' });
try {
  await client.connect(transport);
  report.connected = true;
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    report.pages++;
    report.largestPage = Math.max(report.largestPage, Buffer.byteLength(JSON.stringify(page)));
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined && report.pages < 1000);
  report.listed = tools.length;
  report.unique = new Set(tools.map((t) => t.name)).size;
  const required = tools.filter((t) => (t.inputSchema?.required ?? []).length > 0).slice(0, 4);
  const free = tools.filter((t) => (t.inputSchema?.required ?? []).length === 0 && t.annotations?.readOnlyHint).slice(0, 2);
  for (const [tool, needsArguments] of [...required.map((t) => [t, true]), ...free.map((t) => [t, false])]) {
    const call = { name: tool.name, needsArguments };
    try {
      const res = await client.callTool({ name: tool.name, arguments: {} });
      call.isError = !!res.isError;
      call.text = (res.content ?? []).map((c) => c.text ?? '').join('\n').slice(0, 500);
    } catch (e) {
      call.protocolError = String(e?.message ?? e);
    }
    report.calls.push(call);
  }
} catch (e) {
  report.listError = String(e?.message ?? e);
}
console.log(JSON.stringify(report));
await client.close().catch(() => {});
