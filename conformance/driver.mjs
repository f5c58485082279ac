#!/usr/bin/env node
// The package's conformance driver: mcp-react-query's public API, as built (dist/), on a
// TanStack QueryClient. `npm run build` first. Compare conformance/sdk-driver.mjs (the bare SDK).
//
// Invoked by the conformance suite as `node conformance/driver.mjs <url>` with
// MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and (for some scenarios)
// MCP_CONFORMANCE_CONTEXT in the environment. Runs on Node 20.
//
// What it uses, and nothing else:
// - `McpCacheSync({ queryClient, url, authProvider, … })` from dist/core.js, its state
//   (`getState`/`subscribeState`: `ready`, `unauthorized`, `error`…), `authorize()`, `mount()`,
//   `dispose()`;
// - lists and reads as an app does them: `queryClient.fetchQuery(toolListQueryOptions())` etc.;
// - tool calls through `callToolMutationOptions(sync)` on a TanStack `MutationObserver` (what
//   `useCallTool` does);
// - prompts through `promptQueryOptions` (what `usePrompt` uses) on the QueryClient;
// - elicitation, sampling and roots through the package's server-request options;
// - OAuth through `createOAuthProvider` from dist/auth.js: its `navigate` plays the browser (GET
//   the authorization URL without following the redirect, hand the callback URL to
//   `provider.complete`, which checks `state`, exchanges the code and keeps `iss`).

import { MutationObserver, QueryClient } from '@tanstack/query-core';
import { createOAuthProvider, memoryStorage } from '../dist/auth.js';
import * as core from '../dist/core.js';

const {
  McpCacheSync,
  callToolMutationOptions,
  promptListQueryOptions,
  promptQueryOptions,
  resourceListQueryOptions,
  resourceQueryOptions,
  toolListQueryOptions,
} = core;

const serverUrl = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = process.env.MCP_CONFORMANCE_CONTEXT
  ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT)
  : {};
const verbose = process.env.MCP_DRIVER_VERBOSE === '1';
const started = Date.now();
const log = (...args) => {
  if (verbose) console.error(`[driver +${Date.now() - started}ms]`, ...args);
};

// The suite's CIMD scenario expects this exact client_id URL (basic-cimd.ts).
const CIMD_URL = 'https://conformance-test.local/client-metadata.json';
const REDIRECT_URL = 'http://localhost:3000/callback';
/**
 * Authorizations one operation may need: a sign-in, then one scope step-up. A server that keeps
 * asking gets an error instead of an authorization loop (auth/scope-retry-limit, NOTES §2).
 */
const MAX_AUTHORIZATIONS_PER_OPERATION = 2;
/** A headless client gives up on a server it cannot reach after this many connection attempts. */
const MAX_CONNECT_ATTEMPTS = 3;
/** Bound on one sign-in, from `authorize()` to the callback handled. */
const SIGN_IN_TIMEOUT_MS = 10_000;

// ── the browser's part of OAuth ─────────────────────────────────────────────

/** The sign-in in progress: settled by `navigate` once the callback URL has been handled. */
let signIn;

async function navigate(authorizationUrl) {
  const outcome = signIn;
  try {
    log('navigate', authorizationUrl.href);
    const res = await fetch(authorizationUrl, { redirect: 'manual' });
    await res.text().catch(() => {});
    const location = res.headers.get('location');
    if (!location) {
      throw new Error(`the authorization endpoint answered ${res.status} without a Location`);
    }
    const callback = new URL(location, authorizationUrl);
    log('callback', callback.href);
    // What the app's callback page does (completeAuthorization → provider.complete).
    await authProvider.complete(callback);
    outcome?.resolve();
  } catch (error) {
    outcome?.reject(error);
    throw error;
  }
}

function makeAuthProvider() {
  if (!scenario.startsWith('auth/')) return undefined;
  const preRegistered = scenario === 'auth/pre-registration';
  return createOAuthProvider({
    serverUrl,
    redirectUrl: REDIRECT_URL,
    storage: memoryStorage(),
    ...(preRegistered
      ? {
          clientInformation: { client_id: context.client_id, client_secret: context.client_secret },
        }
      : { clientMetadataUrl: CIMD_URL }),
    navigate,
  });
}

const authProvider = makeAuthProvider();

// ── what the server may ask of the client ───────────────────────────────────

const serverRequestOptions = {
  elicitation: true,
  // Accept with nothing filled in: the SDK puts the schema's defaults into `content`
  // (applyDefaults, declared by the package). A required boolean without a default is a
  // confirmation: say yes.
  onElicitation: async (params) => {
    log('elicitation/create', JSON.stringify(params));
    const schema = params.requestedSchema ?? {};
    const content = {};
    for (const [key, prop] of Object.entries(schema.properties ?? {})) {
      if (prop.type === 'boolean' && prop.default === undefined && schema.required?.includes(key))
        content[key] = true;
    }
    return { action: 'accept', content };
  },
  sampling: async () => ({
    model: 'mcp-react-query-driver',
    role: 'assistant',
    content: { type: 'text', text: 'sampled' },
  }),
  roots: [{ uri: 'file:///tmp', name: 'tmp' }],
};

// `createServerRequests` (an object passed as `serverRequests`) where the build has it; the
// same options directly on McpCacheSync otherwise (the API before it).
const serverRequests = core.createServerRequests
  ? { serverRequests: core.createServerRequests(serverRequestOptions) }
  : serverRequestOptions;

// ── the engine ──────────────────────────────────────────────────────────────

const queryClient = new QueryClient();
const sync = new McpCacheSync({
  queryClient,
  url: serverUrl,
  clientInfo: { name: 'mcp-react-query-conformance-driver', version: '0.0.0' },
  ...(authProvider && { authProvider }),
  ...serverRequests,
});

let lastStatus;
sync.subscribeState(() => {
  const state = sync.getState();
  if (state.status === lastStatus) return;
  lastStatus = state.status;
  log(
    'status',
    state.status,
    state.era ?? '',
    state.protocolVersion ?? '',
    state.error?.message ?? '',
  );
});

/** Resolves with the first state that `done` accepts. */
function waitForState(done) {
  return new Promise((resolve) => {
    const check = () => {
      const state = sync.getState();
      if (!done(state)) return false;
      unsubscribe?.();
      resolve(state);
      return true;
    };
    let unsubscribe;
    if (check()) return;
    unsubscribe = sync.subscribeState(check);
  });
}

/** A connected client (`ready`, or `reconnecting` only while the change stream reopens). */
const connected = (state) => state.client !== undefined;

/**
 * Waits for the connection to be usable, signing in when it is `unauthorized` (within the
 * operation's budget). Throws the connection's error when it ends in `error`/`closed`, or when it
 * keeps failing (a headless client does not wait forever for a server that is not coming).
 */
async function connection(budget) {
  for (;;) {
    const state = await waitForState(
      (s) =>
        connected(s) ||
        ['unauthorized', 'error', 'closed'].includes(s.status) ||
        (s.status === 'reconnecting' && s.attempt >= MAX_CONNECT_ATTEMPTS),
    );
    if (connected(state)) return;
    if (
      state.status !== 'unauthorized' ||
      budget.authorizations >= MAX_AUTHORIZATIONS_PER_OPERATION
    )
      throw state.error ?? new Error(`the connection is ${state.status}`);
    budget.authorizations += 1;
    await authorize();
  }
}

/**
 * `authorize()`, as a sign-in button would; resolves once the callback has been handled (or the
 * provider connected without a redirect), rejects with what went wrong in the callback.
 */
async function authorize() {
  let settle;
  let timer;
  const done = new Promise((resolve, reject) => {
    settle = { resolve, reject };
    // `sync.authorize()` reports nothing: a sign-in that fails before `navigate` would go unseen.
    timer = setTimeout(
      () => reject(new Error(`no sign-in within ${SIGN_IN_TIMEOUT_MS} ms of authorize()`)),
      SIGN_IN_TIMEOUT_MS,
    );
  });
  signIn = settle;
  log('authorize');
  sync.authorize();
  try {
    await Promise.race([done, waitForState(connected)]);
  } finally {
    clearTimeout(timer);
    signIn = undefined;
  }
}

/**
 * Runs an operation as an app would: on a usable connection; when it fails because the server
 * wants (other) credentials, the connection turns `unauthorized`: sign in and run it again.
 */
async function operation(label, run) {
  const budget = { authorizations: 0 };
  for (;;) {
    await connection(budget);
    try {
      const result = await run();
      log(label, 'ok');
      return result;
    } catch (error) {
      const { status } = sync.getState();
      log(label, 'failed:', error?.message, '— status', status);
      // `connection()` signs in, within the budget, and the loop runs the operation again.
      if (status !== 'unauthorized' || budget.authorizations >= MAX_AUTHORIZATIONS_PER_OPERATION)
        throw error;
    }
  }
}

const listTools = () =>
  operation('tools/list', () => queryClient.fetchQuery(toolListQueryOptions()));
const callTool = (name, args) =>
  operation(`tools/call ${name}`, () =>
    // One observer per call: a MutationObserver tracks one mutation at a time, and some
    // scenarios call tools in parallel.
    new MutationObserver(queryClient, callToolMutationOptions(sync)).mutate({
      name,
      arguments: args,
    }),
  );

// ── scenarios ───────────────────────────────────────────────────────────────

/** A value that satisfies a JSON Schema property well enough for the mock servers. */
function sampleValue(schema) {
  switch (schema?.type) {
    case 'string':
      return schema.enum?.[0] ?? 'sample';
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return null;
  }
}

function sampleArguments(tool) {
  const schema = tool.inputSchema ?? {};
  const args = {};
  for (const name of schema.required ?? []) args[name] = sampleValue(schema.properties?.[name]);
  return args;
}

async function callEveryTool() {
  const list = await listTools();
  log('tools', list.map((t) => t.name).join(', '));
  for (const tool of list) {
    const result = await callTool(tool.name, sampleArguments(tool));
    log('tool', tool.name, JSON.stringify(result).slice(0, 200));
  }
  return list;
}

const scenarios = {
  async initialize() {
    await listTools();
  },

  async tools_call() {
    for (const tool of await listTools()) await callTool(tool.name, { a: 2, b: 3 });
  },

  async 'json-schema-ref-no-deref'() {
    await listTools();
  },

  async 'json-schema-2020-12-preservation'() {
    const focal = (await listTools()).find((t) => t.name === 'json_schema_2020_12_tool');
    if (!focal) throw new Error('json_schema_2020_12_tool not listed');
    await callTool('json_schema_echo', { schema: focal.inputSchema });
  },

  async 'http-standard-headers'() {
    await callEveryTool();
    const resources = await operation('resources/list', () =>
      queryClient.fetchQuery(resourceListQueryOptions()),
    );
    for (const r of resources) {
      try {
        await operation(`resources/read ${r.uri}`, () =>
          queryClient.fetchQuery(resourceQueryOptions(r.uri)),
        );
      } catch (error) {
        // The mock answers every read with `contents: []`, which the package refuses
        // (McpQueryError EMPTY_CONTENTS, after TanStack's retries). The scenario checks the
        // request headers, which were sent; don't fail the run on the package's content check.
        if (error?.code !== 'EMPTY_CONTENTS') throw error;
        console.error(`[driver] resources/read ${r.uri} refused by the package: ${error.message}`);
      }
    }
    const prompts = await operation('prompts/list', () =>
      queryClient.fetchQuery(promptListQueryOptions()),
    );
    for (const p of prompts) {
      await operation(`prompts/get ${p.name}`, () =>
        queryClient.fetchQuery(promptQueryOptions(p.name)),
      );
    }
  },

  async 'http-custom-headers'() {
    await listTools();
    for (const call of context.toolCalls ?? []) await callTool(call.name, call.arguments);
  },

  async 'sep-2322-client-request-state'() {
    await listTools();
    // The unrelated call runs while the echo-state flow is between rounds.
    await Promise.all([callTool('test_mrtr_echo_state', {}), callTool('test_mrtr_unrelated', {})]);
    await callTool('test_mrtr_no_state', {});
    // A 2026-07-28 result without `resultType`: SDK 2.4 rejects it (INVALID_RESULT), as the spec
    // says; the scenario only checks that no retry happened (NOTES §2 point 3).
    try {
      await callTool('test_mrtr_no_result_type', {});
    } catch (error) {
      if (error?.code !== 'INVALID_RESULT') throw error;
      console.error(`[driver] test_mrtr_no_result_type rejected by the SDK: ${error.message}`);
    }
  },
};

async function main() {
  log(
    'scenario',
    scenario,
    'version',
    process.env.MCP_CONFORMANCE_PROTOCOL_VERSION,
    'url',
    serverUrl,
  );
  const release = sync.mount();
  try {
    await connection({ authorizations: 0 });
    await (scenarios[scenario] ?? callEveryTool)();
  } finally {
    release();
    await sync.dispose();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`[driver] ${scenario}: ${error?.name ?? 'Error'}: ${error?.message ?? error}`);
    if (verbose && error?.stack) console.error(error.stack);
    process.exit(1);
  },
);
