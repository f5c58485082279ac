import { keepAlive } from './mcp';

// A bench wants outages to end quickly: cap the reconnect backoff at 2 s (default 15 s).
export const RECONNECT = { initialDelayMs: 250, maxDelayMs: 2000 };

// The header shows the keep-alive's round trip: ping an idle connection every 5 s.
export const KEEP_ALIVE = keepAlive({ pingIntervalMs: 5000 });
