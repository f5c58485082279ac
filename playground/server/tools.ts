/**
 * The demo tools (the dashboard's Tools card) and the store that lets one of them act on what
 * the user answered.
 *
 * The test servers run a tool's behaviours from its `StoredTool` entry (progress, then an
 * elicitation, then an answer `answered <action> <json>`), on every era the way a real server of
 * that era asks: 2026-07-28 answers `input_required` and gets the form back in the retried call,
 * 2025 sends `elicitation/create` on the call's stream. What a test server cannot do by itself
 * is change a resource with the answer; `DemoStore` reports every answered ask so the demo can.
 */
import { type AskRecord, ResourceStore, type StoredTool } from '../../test/servers/index';
import { BOARD_COLORS, type Board, SLOW_STEP_MS, SLOW_STEPS, TOOLS, URIS } from '../shared/demo';

export const INITIAL_BOARD: Board = {
  title: 'Team board',
  color: 'blue',
  columns: 3,
  notify: true,
};

const MAX_TITLE = 60;
const MAX_COLUMNS = 8;

/** A ResourceStore that tells the demo what the user answered to a tool's question. */
export class DemoStore extends ResourceStore {
  onAnswered: ((record: AskRecord) => void) | undefined;

  override endAsk(controller: AbortController, record: AskRecord | undefined): void {
    super.endAsk(controller, record);
    if (record) this.onAnswered?.(record);
  }
}

/** The tool list; the rename form's defaults are the board as it is now. */
export function demoTools(board: Board): StoredTool[] {
  return [
    {
      name: TOOLS.rename,
      title: 'Rename the board',
      description: 'Asks you for a new title and style, then changes board://team',
      progress: 3,
      elicit: {
        message: 'Rename the board: pick a title and a style.',
        requestedSchema: {
          type: 'object',
          properties: {
            title: {
              type: 'string',
              title: 'Title',
              description: `Up to ${MAX_TITLE} characters`,
              minLength: 1,
              maxLength: MAX_TITLE,
              default: board.title,
            },
            color: {
              type: 'string',
              title: 'Colour',
              enum: [...BOARD_COLORS],
              default: board.color,
            },
            columns: {
              type: 'integer',
              title: 'Columns',
              minimum: 1,
              maximum: MAX_COLUMNS,
              default: board.columns,
            },
            notify: { type: 'boolean', title: 'Tell the team', default: board.notify },
          },
          required: ['title'],
        },
      },
    },
    {
      name: TOOLS.counterApp,
      title: 'Show the counter app',
      description: 'Shows the live counter as an MCP App view (ui://demo/counter.html)',
      _meta: { ui: { resourceUri: URIS.counterApp } },
    },
    {
      name: TOOLS.failing,
      title: 'Check the links',
      description: 'Runs and reports a failure (isError: true): data, not an error',
      fail: true,
    },
    {
      name: TOOLS.slow,
      title: 'Build the report',
      description: `${SLOW_STEPS} slow steps with progress, and log messages: cancel it halfway`,
      progress: SLOW_STEPS,
      stepMs: SLOW_STEP_MS,
      log: [
        { level: 'info', data: 'report built' },
        { level: 'warning', data: { pages: SLOW_STEPS, skipped: 1 } },
      ],
    },
  ];
}

/**
 * The board the user accepted, or undefined for anything else (declined, cancelled, another
 * tool, content that does not fit). Missing fields keep their current value.
 */
export function acceptedBoard(record: AskRecord, current: Board): Board | undefined {
  if (record.tool !== TOOLS.rename || record.outcome.kind !== 'result') return undefined;
  const { action, content } = record.outcome.result as { action?: unknown; content?: unknown };
  if (action !== 'accept' || content === null || typeof content !== 'object') return undefined;
  const given = content as Partial<Record<keyof Board, unknown>>;
  const title = typeof given.title === 'string' ? given.title.trim() : current.title;
  const color =
    typeof given.color === 'string' && (BOARD_COLORS as readonly string[]).includes(given.color)
      ? given.color
      : current.color;
  const columns =
    typeof given.columns === 'number' && Number.isInteger(given.columns)
      ? Math.min(Math.max(given.columns, 1), MAX_COLUMNS)
      : current.columns;
  const notify = typeof given.notify === 'boolean' ? given.notify : current.notify;
  if (title === '' || title.length > MAX_TITLE) return undefined;
  return { title, color, columns, notify };
}
