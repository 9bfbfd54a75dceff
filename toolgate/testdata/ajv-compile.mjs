// Compiles JSON Schemas as MCP clients do, and prints those that fail as a
// JSON array of {name, validator, error}.
//
//   node ajv-compile.mjs FILE      FILE holds {"name": schema, ...}
//
// The TypeScript MCP SDK compiles tool schemas with ajv's default class
// (draft-07) and these options, plus ajv-formats; clients that follow the
// MCP specification's JSON Schema 2020-12 use ajv's 2020 class, run here
// with the same options and its meta-schema checked, so that a schema it
// compiles also compiles without the check.
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';

// logger: false only quiets warnings about formats ajv does not know.
const sdk = { strict: false, validateFormats: true, validateSchema: false, allErrors: true, logger: false };
const validators = {
  'ajv draft-07 as the TypeScript SDK sets it': () => addFormats(new Ajv(sdk)),
  'ajv 2020-12 with its meta-schema': () => addFormats(new Ajv2020({ ...sdk, validateSchema: true })),
};
const schemas = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const failures = [];
for (const [label, make] of Object.entries(validators)) {
  let ajv = make();
  let n = 0;
  for (const [name, schema] of Object.entries(schemas)) {
    // A fresh instance now and then: each keeps what it compiled.
    if (++n % 200 === 0) ajv = make();
    try {
      ajv.compile(schema);
    } catch (e) {
      failures.push({ name, validator: label, error: String(e?.message ?? e) });
    }
  }
}
console.log(JSON.stringify(failures));
