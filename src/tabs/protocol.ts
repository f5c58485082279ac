import type { ElicitResult, LoggingLevel, Progress } from '@modelcontextprotocol/client';
import type { QueryKey } from '@tanstack/query-core';
import { McpQueryError, type McpQueryErrorCode } from '../core/errors';
import type { McpEvent } from '../core/events';
import type { SharedElicitation } from '../core/serverRequests';
import type { CallToolVariables } from '../core/upstream';

/** An error as it crosses to another tab (Error objects lose their class on the way). */
export interface WireError {
  name: string;
  message: string;
  /** An McpQueryError code, or a JSON-RPC error code. */
  code?: string | number;
}

/**
 * What the tabs of one sharing group (one server, scope and identity) say to
 * each other over a BroadcastChannel. Every message is a plain, cloneable value.
 */
export type TabMessage =
  /** A tab joined: the leader answers with `leader`, its state as `events`, and `group`. */
  | { type: 'hello'; tab: string }
  /** This tab holds the connection now (`handovers`: leader changes the group has seen). */
  | { type: 'leader'; tab: string; handovers: number }
  /**
   * Every MCP key this tab holds (resources, lists, prompts, tasks): the leader holds them for
   * it; `answering`: a component here answers elicitations; `logLevel`: the server's log
   * messages it asks for.
   */
  | {
      type: 'interest';
      tab: string;
      keys: QueryKey[];
      answering?: boolean;
      logLevel?: LoggingLevel;
    }
  | { type: 'bye'; tab: string }
  /** `fresh`: the entry was invalidated here, so read, even if the leader's copy is fresh. */
  | { type: 'read'; tab: string; id: number; key: QueryKey; fresh: boolean }
  | { type: 'call'; tab: string; id: number; variables: WireCall }
  | { type: 'cancel'; tab: string; id: number }
  /** These requests of the tab have had no reply for a while: does the leader still run them? */
  | { type: 'waiting'; tab: string; ids: number[] }
  /** The leader still runs these of the tab's requests (its answer to `waiting`). */
  | { type: 'working'; to: string; ids: number[] }
  /** This tab's answer to one of the leader's pending elicitations. */
  | { type: 'answer'; tab: string; id: number; result: ElicitResult }
  /** The leader's pending elicitations (all of them, each time they change; `to`: a newcomer). */
  | { type: 'elicitations'; to?: string; items: SharedElicitation[] }
  | { type: 'progress'; to: string; id: number; progress: Progress }
  | {
      type: 'reply';
      to: string;
      id: number;
      value?: unknown;
      updatedAt?: number;
      error?: WireError;
      /** The leader does not serve the tab (its roster is full): it says hello again later. */
      stranger?: true;
    }
  /** Content the leader read: every tab that has the entry takes it, without reading again. */
  | { type: 'data'; key: QueryKey; data: unknown; updatedAt: number }
  /** The leader's connection as events: forwarded live, or its present state for a newcomer (`to`). */
  | { type: 'events'; to?: string; events: McpEvent[] }
  /** How many tabs share the connection now. */
  | { type: 'group'; tabs: number; handovers: number };

/**
 * A tool call as it crosses to the leader; with `action`, a request of `Upstream.request`
 * instead (`name` the method, `arguments` its params).
 */
export type WireCall = Omit<CallToolVariables, 'onProgress' | 'signal'> & {
  progress: boolean;
  action?: true;
};

/** The part of BroadcastChannel used here. */
export interface ChannelLike {
  postMessage(message: unknown): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  close(): void;
}

/** The part of the Web Locks API used here (`navigator.locks`). */
export interface LocksLike {
  request(
    name: string,
    options: { signal?: AbortSignal },
    callback: () => Promise<unknown>,
  ): Promise<unknown>;
  query(): Promise<{ held?: { name?: string }[] }>;
}

/** An error as it can cross to another tab. */
export function toWire(error: unknown): WireError {
  const {
    name = 'Error',
    message = String(error),
    code,
  } = (error ?? {}) as {
    name?: string;
    message?: string;
    code?: unknown;
  };
  return {
    name,
    message,
    ...((typeof code === 'string' || typeof code === 'number') && { code }),
  };
}

/** The error another tab sent, as an Error again (an McpQueryError keeps its code). */
export function fromWire(error: WireError): Error {
  if (error.name === 'McpQueryError' && typeof error.code === 'string') {
    return new McpQueryError(error.code as McpQueryErrorCode, error.message);
  }
  return Object.assign(new Error(error.message), {
    name: error.name,
    ...(error.code !== undefined && { code: error.code }),
  });
}
