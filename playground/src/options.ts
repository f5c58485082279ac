// A bench wants outages to end quickly: cap the reconnect backoff at 2 s (default 15 s).
export const RECONNECT = { initialDelayMs: 250, maxDelayMs: 2000 };
