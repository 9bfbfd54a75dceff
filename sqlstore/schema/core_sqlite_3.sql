-- rubicon core schema, version 3, SQLite: the holds that pay for an
-- operation are found without reading every hold.
CREATE INDEX rubicon_holds_operation ON rubicon_holds (op_key);
