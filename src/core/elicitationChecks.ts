import type { ElicitRequestParams, ElicitResult } from '@modelcontextprotocol/client';

/**
 * How many elicitations one connection keeps waiting for the user. Past
 * that the server is declined at once: a server cannot pile up questions
 * (forms on screen, memory) without limit.
 */
export const MAX_PENDING_ELICITATIONS = 8;

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * Whether a URL-mode elicitation may reach the app: `https:`, or `http:` on
 * this machine (development). The SDK lets any URL through, and a link to
 * `javascript:` or `data:` runs script when clicked (React 18 renders it).
 */
export function isSafeElicitation(params: ElicitRequestParams): boolean {
  if (params.mode !== 'url') return true;
  if (typeof params.url !== 'string' || !URL.canParse(params.url)) return false;
  const { protocol, hostname } = new URL(params.url);
  return protocol === 'https:' || (protocol === 'http:' && LOOPBACK.test(hostname));
}

interface Field {
  type?: unknown;
  enum?: unknown;
  oneOf?: unknown;
  anyOf?: unknown;
  items?: unknown;
  default?: unknown;
}

/** The values a field (or an array's items) may take, when it is a choice. */
function choices(field: Field | undefined): unknown[] | undefined {
  if (Array.isArray(field?.enum)) return field.enum;
  const titled = Array.isArray(field?.oneOf) ? field.oneOf : field?.anyOf;
  return Array.isArray(titled)
    ? titled.map((option) => (option as { const?: unknown })?.const)
    : undefined;
}

function problemOf(key: string, value: unknown, field: Field): string | undefined {
  let values = [value];
  let allowed = choices(field);
  switch (field.type) {
    case 'string':
      if (typeof value !== 'string') return `${key} must be a string`;
      break;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return `${key} must be a number`;
      break;
    case 'integer':
      if (!Number.isInteger(value)) return `${key} must be an integer`;
      break;
    case 'boolean':
      if (typeof value !== 'boolean') return `${key} must be a boolean`;
      break;
    case 'array':
      if (!Array.isArray(value)) return `${key} must be an array`;
      values = value;
      allowed = choices(field.items as Field | undefined);
      break;
  }
  if (allowed && !values.every((one) => allowed.includes(one))) {
    return `${key} must be one of ${allowed.map((one) => JSON.stringify(one)).join(', ')}`;
  }
  return undefined;
}

/**
 * An accepted answer as it may be sent: for a form, its content checked
 * against what was asked (`requestedSchema`: each field of its type, enum
 * values among the choices, every required field there — a default counts,
 * and is filled in as the SDK would — and nothing that was not asked for);
 * for a URL, no content. Throws a TypeError saying what does not fit.
 */
export function fitAnswer(params: ElicitRequestParams, result: ElicitResult): ElicitResult {
  if (result.action !== 'accept') return result;
  if (params.mode === 'url') return { action: 'accept' };
  const schema = params.requestedSchema as {
    properties?: Record<string, Field>;
    required?: unknown;
  };
  const fields = schema.properties ?? {};
  const content: Record<string, unknown> = { ...result.content };
  for (const [key, field] of Object.entries(fields)) {
    if (content[key] === undefined && field && 'default' in field) content[key] = field.default;
  }
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const problems = required
    .filter((key) => content[key] === undefined)
    .map((key) => `${key} is required`);
  for (const [key, value] of Object.entries(content)) {
    if (value === undefined) continue;
    const field = Object.hasOwn(fields, key) ? fields[key] : undefined;
    const problem = field ? problemOf(key, value, field) : `${key} was not asked for`;
    if (problem) problems.push(problem);
  }
  if (problems.length > 0) {
    throw new TypeError(`the answer does not fit the requested schema: ${problems.join('; ')}`);
  }
  return { ...result, content } as ElicitResult;
}
