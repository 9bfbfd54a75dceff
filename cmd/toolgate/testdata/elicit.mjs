// A person at a TypeScript SDK client, answering toolgate's requests for
// confirmation, printed as one JSON object for the Go test to check.
//
//   node elicit.mjs ANSWERS stdio BINARY ARG...   starts BINARY ARG... and talks over stdio
//   node elicit.mjs ANSWERS http URL              talks Streamable HTTP
//
// ANSWERS is a comma-separated list: for each, refundOrder is called once
// and the person answers accept (with "send" ticked), unticked (accept
// without it), decline or cancel. "none" makes a client that declares no
// elicitation capability, which calls refundOrder once. With
// TOOLGATE_MODE=search, refundOrder is described by describe_operation and
// called through call_operation.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [answerList, mode, target, ...rest] = process.argv.slice(2);
const answers = answerList.split(',');
let transport;
if (mode === 'stdio') {
  transport = new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: 'inherit' });
} else if (mode === 'http') {
  transport = new StreamableHTTPClientTransport(new URL(target));
} else {
  console.error('usage: elicit.mjs ANSWERS (stdio BINARY ARG... | http URL)');
  process.exit(2);
}

const able = answers[0] !== 'none';
const client = new Client({ name: 'toolgate-elicit', version: '1.0.0' }, { capabilities: able ? { elicitation: { form: {} } } : {} });
const report = { tool: null, calls: [] };
let current = null;
if (able) {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const { mode, message, requestedSchema } = request.params;
    current.asked = { mode: mode ?? 'form', message, requestedSchema };
    switch (current.answer) {
      case 'accept':
        return { action: 'accept', content: { send: true } };
      case 'unticked':
        return { action: 'accept', content: { send: false } };
      default:
        return { action: current.answer };
    }
  });
}
await client.connect(transport);
const search = process.env.TOOLGATE_MODE === 'search';
if (search) {
  const described = await client.callTool({ name: 'describe_operation', arguments: { name: 'refundOrder' } });
  const d = JSON.parse(described.content[0].text);
  report.tool = { annotations: d.annotations, description: d.description };
} else {
  const listed = await client.listTools();
  const tool = listed.tools.find((t) => t.name === 'refundOrder');
  report.tool = tool ? { annotations: tool.annotations, description: tool.description } : null;
}
for (const answer of answers) {
  current = { answer, asked: null };
  try {
    const args = { id: 'o1', 'X-Reason': 'damaged' };
    const res = search
      ? await client.callTool({ name: 'call_operation', arguments: { name: 'refundOrder', arguments: args } })
      : await client.callTool({ name: 'refundOrder', arguments: args });
    current.isError = !!res.isError;
    current.text = res.content.map((c) => c.text).join('\n');
  } catch (e) {
    current.protocolError = String(e.message ?? e);
  }
  report.calls.push(current);
}
console.log(JSON.stringify(report));
await client.close();
