export interface ReadTiming {
  /** fetch() called for a resources/read POST. */
  issued: number;
  /**
   * The last body chunk received: the answer. The SDK may stop reading a
   * response stream once it has it, so "body ended" can never come.
   */
  done: number | undefined;
}

/**
 * A fetch wrapper that timestamps every resources/read exchange, to split
 * "notification → shown" into: before the read is sent, the read itself, and
 * after the answer is in (cache, React).
 */
export class ReadTimer {
  readonly reads: ReadTiming[] = [];

  readonly fetch: typeof fetch = async (input, init) => {
    const body = init?.body;
    const isRead = typeof body === 'string' && body.includes('"method":"resources/read"');
    const timing: ReadTiming = { issued: performance.now(), done: undefined };
    const response = await globalThis.fetch(input, init);
    if (!isRead || !response.body) return response;
    this.reads.push(timing);
    const reader = response.body.getReader();
    const tracked = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) {
          timing.done ??= performance.now();
          controller.close();
        } else {
          timing.done = performance.now();
          controller.enqueue(value);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(tracked, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };

  /** The first read issued at or after `since`. */
  firstAfter(since: number): ReadTiming | undefined {
    for (let i = this.reads.length - 1; i >= 0; i--) {
      const read = this.reads[i] as ReadTiming;
      if (read.issued < since) return this.reads[i + 1];
    }
    return this.reads[0];
  }
}
