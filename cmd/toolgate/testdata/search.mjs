// A TypeScript SDK client's session with toolgate in search mode: list
// the tools, search the operations, describe the best result, and call
// operations through call_operation. Printed as one JSON object for the
// Go test to check.
//
//   node search.mjs QUERY CALLS BINARY ARG...   starts BINARY ARG... and talks over stdio
//
// CALLS is a comma-separated list of operations to call with no
// arguments.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [query, calls, binary, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: binary, args, env: process.env, stderr: 'inherit' });
const client = new Client({ name: 'toolgate-search', version: '1.0.0' });
const text = (res) => (res.content ?? []).map((c) => c.text ?? '').join('\n');
const report = { listed: [], search: null, describe: null, calls: {} };
await client.connect(transport);
const { tools } = await client.listTools();
report.listed = tools.map((t) => t.name);
report.search = text(await client.callTool({ name: 'search_operations', arguments: { query } }));
const best = report.search.match(/^(\S+) \(/m);
if (best) {
  report.describe = text(await client.callTool({ name: 'describe_operation', arguments: { name: best[1] } }));
}
for (const name of calls.split(',')) {
  try {
    const res = await client.callTool({ name: 'call_operation', arguments: { name, arguments: {} } });
    report.calls[name] = { isError: !!res.isError, text: text(res).slice(0, 500) };
  } catch (e) {
    report.calls[name] = { protocolError: String(e?.message ?? e) };
  }
}
console.log(JSON.stringify(report));
await client.close();
