// @modelcontextprotocol/client's browser entry declares a stdio helper (`ReadBuffer.append(chunk:
// Buffer)`) that names Node's `Buffer`. A browser app has no Node types, so with
// skipLibCheck: false that one SDK declaration fails (TS2591) — nothing in mcp-react-query does.
// An empty interface is enough, and merges with @types/node's wherever both are present.
interface Buffer extends Uint8Array {}
